/* Questions a caller can ask of a program before loading any method. */
#include <stdio.h>
#include <string.h>

#include "pterun/value.h"
#include "src/core/program_internal.h"
#include "src/core/schema.h"

size_t pterun_program_method_count(const pterun_program* p) {
  return p != NULL ? p->plans.len : 0;
}

const char* pterun_program_method_name(const pterun_program* p, size_t i) {
  pt_fb_table plan;
  const char* s;
  uint32_t n;
  if (p == NULL || !pt_program_plan(p, i, &plan) ||
      pt_fb_get_string(&plan, PT_PLAN_NAME, &s, &n) != 1)
    return NULL;
  return s;
}

pterun_status pterun_program_find_method(const pterun_program* p, const char* name,
                                         size_t* index_out) {
  if (p == NULL || name == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  for (size_t i = 0; i < p->plans.len; ++i) {
    const char* s = pterun_program_method_name(p, i);
    if (s != NULL && strcmp(s, name) == 0) {
      if (index_out) *index_out = i;
      return PTERUN_STATUS_OK;
    }
  }
  char want[PT_ESC_CAP], names[512];
  size_t used = 0;
  names[0] = 0;
  for (size_t i = 0; i < p->plans.len && used < sizeof names; ++i) {
    char one[PT_ESC_CAP];
    const char* s = pterun_program_method_name(p, i);
    int w = snprintf(names + used, sizeof names - used, "%s'%s'", i ? ", " : "",
                     pt_esc(s ? s : "", one, sizeof one));
    if (w < 0 || (size_t)w >= sizeof names - used) {
      snprintf(names + used, sizeof names - used, i ? ", ..." : "...");
      break;
    }
    used += (size_t)w;
  }
  return pt_fail(&p->logger, PTERUN_STATUS_NOT_FOUND, "program has no method '%s' (methods: %s)",
                 pt_esc(name, want, sizeof want), p->plans.len ? names : "none");
}

void pterun_program_get_info(const pterun_program* p, pterun_program_info* info) {
  if (info == NULL) return;
  memset(info, 0, sizeof *info);
  if (p == NULL) return;
  info->file_size = p->image.size;
  info->program_size = p->program_size;
  info->has_extended_header = p->has_extended_header;
  info->segment_base_offset = p->segment_base;
  info->segment_data_size = p->segment_data_size;
  info->segment_count = p->segments.len;
  info->legacy_constant_buffer = p->legacy_constants;
  info->method_count = p->plans.len;
  info->named_data_count = p->named_data.len;
  info->mutable_data_count = p->mutable_offsets.len > 0 ? p->mutable_offsets.len - 1 : 0;
  if (p->legacy_constants) {
    info->constant_count = p->constant_buffers.len > 0 ? p->constant_buffers.len - 1 : 0;
    for (uint32_t i = 0; i < p->constant_buffers.len; ++i) {
      pt_fb_table b;
      pt_fb_vec st;
      if (pt_fb_vec_table(&p->constant_buffers, i, &b) &&
          pt_fb_get_vector(&b, PT_BUFFER_STORAGE, 1, &st) == 1)
        info->constant_bytes += st.len;
    }
  } else {
    info->constant_count = p->constant_offsets.len > 0 ? p->constant_offsets.len - 1 : 0;
    info->constant_bytes = p->constant_size;
  }
}

static pterun_status plan_of(const pterun_program* p, size_t method, pt_fb_table* plan) {
  if (p == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  if (!pt_program_plan(p, method, plan)) return PTERUN_STATUS_NOT_FOUND;
  return PTERUN_STATUS_OK;
}

static uint32_t vec_len(const pt_fb_table* t, unsigned slot, size_t elem) {
  pt_fb_vec v;
  return pt_fb_get_vector(t, slot, elem, &v) == 1 ? v.len : 0;
}

pterun_status pterun_program_method_info(const pterun_program* p, size_t method,
                                         pterun_method_info* info) {
  pt_fb_table plan;
  PTERUN_TRY(plan_of(p, method, &plan));
  if (info == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  memset(info, 0, sizeof *info);
  info->name = pterun_program_method_name(p, method);
  info->input_count = vec_len(&plan, PT_PLAN_INPUTS, 4);
  info->output_count = vec_len(&plan, PT_PLAN_OUTPUTS, 4);
  info->value_count = vec_len(&plan, PT_PLAN_VALUES, 4);
  info->operator_count = vec_len(&plan, PT_PLAN_OPERATORS, 4);
  info->delegate_count = vec_len(&plan, PT_PLAN_DELEGATES, 4);
  uint32_t sizes = vec_len(&plan, PT_PLAN_NON_CONST_BUFFER_SIZES, 8);
  info->planned_buffer_count = sizes > 0 ? sizes - 1 : 0;
  pt_fb_vec chains;
  pt_fb_get_vector(&plan, PT_PLAN_CHAINS, 4, &chains);
  for (uint32_t c = 0; c < chains.len; ++c) {
    pt_fb_table ch;
    if (pt_fb_vec_table(&chains, c, &ch))
      info->instruction_count += vec_len(&ch, PT_CHAIN_INSTRUCTIONS, 4);
  }
  return PTERUN_STATUS_OK;
}

pterun_status pterun_program_planned_buffer_size(const pterun_program* p, size_t method,
                                                 size_t buffer, uint64_t* size_out) {
  pt_fb_table plan;
  pt_fb_vec sizes;
  PTERUN_TRY(plan_of(p, method, &plan));
  if (pt_fb_get_vector(&plan, PT_PLAN_NON_CONST_BUFFER_SIZES, 8, &sizes) != 1 ||
      buffer + 1 >= sizes.len)
    return PTERUN_STATUS_NOT_FOUND;
  if (size_out) *size_out = (uint64_t)pt_fb_vec_i64(&sizes, (uint32_t)buffer + 1);
  return PTERUN_STATUS_OK;
}

static pterun_status io_info(const pterun_program* p, size_t method, size_t i, unsigned slot,
                             pterun_io_info* info) {
  pt_fb_table plan, ev, pl;
  pt_fb_vec idx, values;
  PTERUN_TRY(plan_of(p, method, &plan));
  if (info == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  memset(info, 0, sizeof *info);
  if (pt_fb_get_vector(&plan, slot, 4, &idx) != 1 || i >= idx.len) return PTERUN_STATUS_NOT_FOUND;
  pt_fb_get_vector(&plan, PT_PLAN_VALUES, 4, &values);
  if (!pt_fb_vec_table(&values, (uint32_t)pt_fb_vec_i32(&idx, (uint32_t)i), &ev))
    return PTERUN_STATUS_INTERNAL;
  uint8_t tag = pt_fb_u8(&ev, PT_EVALUE_TYPE, 0);
  int has = pt_fb_get_table(&ev, PT_EVALUE_VAL, &pl) == 1;
  switch (tag) {
    case PT_KT_TENSOR: {
      pt_tensor_meta m;
      if (!has) return PTERUN_STATUS_INTERNAL;
      PTERUN_TRY(pt_tensor_meta_read(p, &pl, &m, "io"));
      info->tag = PTERUN_VALUE_TENSOR;
      info->dtype = m.dtype;
      info->rank = m.rank;
      info->dynamism = m.dynamism;
      memcpy(info->dim_order, m.dim_order, sizeof info->dim_order);
      memcpy(info->sizes, m.sizes, sizeof info->sizes);
      info->nbytes = m.nbytes;
      info->planned = m.planned || m.data_buffer_idx > 0;
      return PTERUN_STATUS_OK;
    }
    case PT_KT_INT:
      info->tag = PTERUN_VALUE_INT;
      info->int_value = has ? pt_fb_i64(&pl, PT_PAYLOAD_VAL, 0) : 0;
      break;
    case PT_KT_BOOL:
      info->tag = PTERUN_VALUE_BOOL;
      info->int_value = has ? pt_fb_u8(&pl, PT_PAYLOAD_VAL, 0) : 0;
      break;
    case PT_KT_DOUBLE:
      info->tag = PTERUN_VALUE_DOUBLE;
      info->double_value = has ? pt_fb_f64(&pl, PT_PAYLOAD_VAL, 0) : 0;
      break;
    case PT_KT_STRING: info->tag = PTERUN_VALUE_STRING; break;
    case PT_KT_NULL: info->tag = PTERUN_VALUE_NONE; break;
    case PT_KT_INT_LIST: info->tag = PTERUN_VALUE_LIST_INT; break;
    case PT_KT_DOUBLE_LIST: info->tag = PTERUN_VALUE_LIST_DOUBLE; break;
    case PT_KT_BOOL_LIST: info->tag = PTERUN_VALUE_LIST_BOOL; break;
    case PT_KT_TENSOR_LIST: info->tag = PTERUN_VALUE_LIST_TENSOR; break;
    default: info->tag = PTERUN_VALUE_LIST_OPTIONAL_TENSOR; break;
  }
  return PTERUN_STATUS_OK;
}

pterun_status pterun_program_method_input(const pterun_program* p, size_t method, size_t i,
                                          pterun_io_info* info) {
  return io_info(p, method, i, PT_PLAN_INPUTS, info);
}

pterun_status pterun_program_method_output(const pterun_program* p, size_t method, size_t i,
                                           pterun_io_info* info) {
  return io_info(p, method, i, PT_PLAN_OUTPUTS, info);
}

pterun_status pterun_program_method_operator(const pterun_program* p, size_t method, size_t i,
                                             const char** name_out, const char** overload_out) {
  pt_fb_table plan, op;
  pt_fb_vec ops;
  PTERUN_TRY(plan_of(p, method, &plan));
  if (pt_fb_get_vector(&plan, PT_PLAN_OPERATORS, 4, &ops) != 1 || i >= ops.len ||
      !pt_fb_vec_table(&ops, (uint32_t)i, &op))
    return PTERUN_STATUS_NOT_FOUND;
  const char *nm = "", *ov = "";
  uint32_t n;
  pt_fb_get_string(&op, PT_OPERATOR_NAME, &nm, &n);
  if (pt_fb_get_string(&op, PT_OPERATOR_OVERLOAD, &ov, &n) != 1) ov = "";
  if (name_out) *name_out = nm;
  if (overload_out) *overload_out = ov;
  return PTERUN_STATUS_OK;
}

pterun_status pterun_program_method_delegate(const pterun_program* p, size_t method, size_t i,
                                             const char** backend_out) {
  pt_fb_table plan, d;
  pt_fb_vec ds;
  PTERUN_TRY(plan_of(p, method, &plan));
  if (pt_fb_get_vector(&plan, PT_PLAN_DELEGATES, 4, &ds) != 1 || i >= ds.len ||
      !pt_fb_vec_table(&ds, (uint32_t)i, &d))
    return PTERUN_STATUS_NOT_FOUND;
  const char* id = "";
  uint32_t n;
  pt_fb_get_string(&d, PT_DELEGATE_ID, &id, &n);
  if (backend_out) *backend_out = id;
  return PTERUN_STATUS_OK;
}

pterun_status pterun_program_named_data(const pterun_program* p, size_t i, const char** key_out,
                                        uint64_t* size_out) {
  pt_fb_table nd;
  const char* key;
  uint32_t kl;
  if (p == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  if (i >= p->named_data.len || !pt_fb_vec_table(&p->named_data, (uint32_t)i, &nd) ||
      pt_fb_get_string(&nd, PT_NAMED_KEY, &key, &kl) != 1)
    return PTERUN_STATUS_NOT_FOUND;
  const uint8_t* bytes;
  uint64_t size = 0;
  if (pt_program_segment(p, pt_fb_u32(&nd, PT_NAMED_SEGMENT_INDEX, 0), &bytes, &size) !=
      PTERUN_STATUS_OK)
    return PTERUN_STATUS_INVALID_PROGRAM;
  if (key_out) *key_out = key;
  if (size_out) *size_out = size;
  return PTERUN_STATUS_OK;
}
