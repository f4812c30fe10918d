/* The program verifier: walks every table reachable from the root and checks
 * structure (offsets, vtables, lengths, strings, union tags) and indices
 * (values, operators, delegates, jump targets) before anything else reads the
 * program. Failures are INVALID_PROGRAM with a message naming the field. */
#include <stdio.h>
#include <string.h>

#include "src/core/program_internal.h"
#include "src/core/schema.h"

typedef struct vctx {
  pterun_program* p;
  char where[160]; /* e.g. "plan 'forward' value 12" */
} vctx;

static pterun_status vfail(vctx* v, const char* what) {
  return pt_fail(&v->p->logger, PTERUN_STATUS_INVALID_PROGRAM, "%s: %s", v->where, what);
}

#define V_REQUIRE(cond, what)                                                                      \
  do {                                                                                             \
    if (!(cond)) return vfail(v, what);                                                            \
  } while (0)

/* Optional string field: present strings must be well-formed. */
static pterun_status opt_string(vctx* v, const pt_fb_table* t, unsigned slot, const char* what) {
  const char* s;
  uint32_t n;
  V_REQUIRE(pt_fb_get_string(t, slot, &s, &n) >= 0, what);
  return PTERUN_STATUS_OK;
}

static pterun_status req_string(vctx* v, const pt_fb_table* t, unsigned slot, const char* what) {
  const char* s;
  uint32_t n;
  V_REQUIRE(pt_fb_get_string(t, slot, &s, &n) == 1, what);
  return PTERUN_STATUS_OK;
}

/* Vector of tables whose every element must open. */
static pterun_status table_vector(vctx* v, const pt_fb_table* t, unsigned slot, int required,
                                  pt_fb_vec* out, const char* what) {
  int r = pt_fb_get_vector(t, slot, 4, out);
  V_REQUIRE(r >= 0 && (r == 1 || !required), what);
  if (r == 0) {
    memset(out, 0, sizeof *out);
    return PTERUN_STATUS_OK;
  }
  for (uint32_t i = 0; i < out->len; ++i) {
    pt_fb_table e;
    V_REQUIRE(pt_fb_vec_table(out, i, &e), what);
  }
  return PTERUN_STATUS_OK;
}

pterun_status pt_tensor_meta_read(const pterun_program* p, const pt_fb_table* t, pt_tensor_meta* m,
                                  const char* where) {
  const pterun_logger* lg = &p->logger;
  memset(m, 0, sizeof *m);
  static const unsigned scalar_slots[][2] = {
      {PT_TENSOR_SCALAR_TYPE, 1},     {PT_TENSOR_STORAGE_OFFSET, 4}, {PT_TENSOR_REQUIRES_GRAD, 1},
      {PT_TENSOR_DATA_BUFFER_IDX, 4}, {PT_TENSOR_LAYOUT, 1},         {PT_TENSOR_SHAPE_DYNAMISM, 1}};
  for (size_t k = 0; k < sizeof scalar_slots / sizeof scalar_slots[0]; ++k)
    if (!pt_fb_check_scalar(t, scalar_slots[k][0], scalar_slots[k][1]))
      return pt_fail(lg, PTERUN_STATUS_INVALID_PROGRAM, "%s: tensor field out of its table", where);
  m->dtype = pt_fb_i8(t, PT_TENSOR_SCALAR_TYPE, 0);
  if (m->dtype < 0 || pterun_dtype_size(m->dtype) == 0)
    return pt_fail(lg, PTERUN_STATUS_INVALID_PROGRAM, "%s: invalid scalar type %d", where,
                   m->dtype);
  if (pt_fb_i32(t, PT_TENSOR_STORAGE_OFFSET, 0) != 0)
    return pt_fail(lg, PTERUN_STATUS_NOT_SUPPORTED, "%s: storage_offset must be 0", where);
  int dyn = pt_fb_i8(t, PT_TENSOR_SHAPE_DYNAMISM, 0);
  if (dyn < 0 || dyn > 2)
    return pt_fail(lg, PTERUN_STATUS_INVALID_PROGRAM, "%s: invalid shape dynamism %d", where, dyn);
  m->dynamism = (uint8_t)dyn;
  pt_fb_vec sizes, order;
  if (pt_fb_get_vector(t, PT_TENSOR_SIZES, 4, &sizes) != 1 ||
      pt_fb_get_vector(t, PT_TENSOR_DIM_ORDER, 1, &order) != 1)
    return pt_fail(lg, PTERUN_STATUS_INVALID_PROGRAM,
                   "%s: tensor sizes/dim_order missing or malformed", where);
  if (sizes.len > PTERUN_MAX_RANK)
    return pt_fail(lg, PTERUN_STATUS_INVALID_PROGRAM, "%s: rank %u exceeds %d", where, sizes.len,
                   PTERUN_MAX_RANK);
  if (order.len != sizes.len)
    return pt_fail(lg, PTERUN_STATUS_INVALID_PROGRAM, "%s: dim_order has %u entries for rank %u",
                   where, order.len, sizes.len);
  m->rank = (uint8_t)sizes.len;
  unsigned seen = 0;
  uint64_t numel = 1;
  for (uint32_t i = 0; i < sizes.len; ++i) {
    int32_t s = pt_fb_vec_i32(&sizes, i);
    uint8_t d = pt_fb_vec_u8(&order, i);
    if (s < 0) return pt_fail(lg, PTERUN_STATUS_INVALID_PROGRAM, "%s: negative size %d", where, s);
    if (d >= sizes.len || (seen & (1u << d)))
      return pt_fail(lg, PTERUN_STATUS_INVALID_PROGRAM, "%s: dim_order is not a permutation",
                     where);
    seen |= 1u << d;
    m->sizes[i] = s;
    m->dim_order[i] = d;
    if (pt_mul_overflow_u64(numel, (uint64_t)s, &numel))
      return pt_fail(lg, PTERUN_STATUS_INVALID_PROGRAM, "%s: element count overflows", where);
  }
  if (pt_mul_overflow_u64(numel, pterun_dtype_size(m->dtype), &m->nbytes) ||
      m->nbytes > SIZE_MAX / 2)
    return pt_fail(lg, PTERUN_STATUS_INVALID_PROGRAM, "%s: byte size overflows", where);
  m->data_buffer_idx = pt_fb_u32(t, PT_TENSOR_DATA_BUFFER_IDX, 0);

  pt_fb_table alloc;
  int r = pt_fb_get_table(t, PT_TENSOR_ALLOCATION_INFO, &alloc);
  if (r < 0)
    return pt_fail(lg, PTERUN_STATUS_INVALID_PROGRAM, "%s: allocation_info malformed", where);
  if (r == 1) {
    if (!pt_fb_check_scalar(&alloc, PT_ALLOC_MEMORY_ID, 4) ||
        !pt_fb_check_scalar(&alloc, PT_ALLOC_OFFSET_LOW, 4) ||
        !pt_fb_check_scalar(&alloc, PT_ALLOC_OFFSET_HIGH, 4))
      return pt_fail(lg, PTERUN_STATUS_INVALID_PROGRAM,
                     "%s: allocation_info field out of its table", where);
    m->planned = 1;
    m->memory_id = pt_fb_u32(&alloc, PT_ALLOC_MEMORY_ID, 0);
    m->memory_offset = (uint64_t)pt_fb_u32(&alloc, PT_ALLOC_OFFSET_LOW, 0) |
                       ((uint64_t)pt_fb_u32(&alloc, PT_ALLOC_OFFSET_HIGH, 0) << 32);
  }
  pt_fb_table extra;
  r = pt_fb_get_table(t, PT_TENSOR_EXTRA_INFO, &extra);
  if (r < 0)
    return pt_fail(lg, PTERUN_STATUS_INVALID_PROGRAM, "%s: extra_tensor_info malformed", where);
  if (r == 1) {
    if (!pt_fb_check_scalar(&extra, PT_EXTRA_MUTABLE_IDX, 8) ||
        !pt_fb_check_scalar(&extra, PT_EXTRA_LOCATION, 1) ||
        !pt_fb_check_scalar(&extra, PT_EXTRA_DEVICE_TYPE, 1) ||
        !pt_fb_check_scalar(&extra, PT_EXTRA_DEVICE_INDEX, 1))
      return pt_fail(lg, PTERUN_STATUS_INVALID_PROGRAM,
                     "%s: extra_tensor_info field out of its table", where);
    const char* fqn;
    uint32_t n;
    int rs = pt_fb_get_string(&extra, PT_EXTRA_FQN, &fqn, &n);
    if (rs < 0)
      return pt_fail(lg, PTERUN_STATUS_INVALID_PROGRAM, "%s: fully_qualified_name malformed",
                     where);
    if (rs == 1) m->fqn = fqn;
    m->external = pt_fb_i8(&extra, PT_EXTRA_LOCATION, 0) == PT_LOCATION_EXTERNAL;
    if (m->external && m->fqn == NULL)
      return pt_fail(lg, PTERUN_STATUS_INVALID_PROGRAM, "%s: external tensor without a name",
                     where);
  }
  return PTERUN_STATUS_OK;
}

/* Checks one EValue; `n` is the size of the value table for list indices. */
static pterun_status verify_value(vctx* v, const pt_fb_vec* values, uint32_t i) {
  pt_fb_table ev, pl;
  V_REQUIRE(pt_fb_vec_table(values, i, &ev), "value table malformed");
  V_REQUIRE(pt_fb_check_scalar(&ev, PT_EVALUE_TYPE, 1), "value type field malformed");
  uint8_t tag = pt_fb_u8(&ev, PT_EVALUE_TYPE, 0);
  int r = pt_fb_get_table(&ev, PT_EVALUE_VAL, &pl);
  V_REQUIRE(r >= 0, "value payload malformed");
  if (tag == PT_KT_NULL) return PTERUN_STATUS_OK; /* payload optional */
  V_REQUIRE(tag >= PT_KT_INT && tag <= PT_KT_OPTIONAL_TENSOR_LIST, "unknown value type tag");
  V_REQUIRE(r == 1, "value payload missing");
  pt_fb_vec items;
  switch (tag) {
    case PT_KT_INT:
    case PT_KT_DOUBLE:
      V_REQUIRE(pt_fb_check_scalar(&pl, PT_PAYLOAD_VAL, 8), "scalar field malformed");
      return PTERUN_STATUS_OK;
    case PT_KT_BOOL:
      V_REQUIRE(pt_fb_check_scalar(&pl, PT_PAYLOAD_VAL, 1), "scalar field malformed");
      return PTERUN_STATUS_OK;
    case PT_KT_STRING:
      return req_string(v, &pl, PT_PAYLOAD_VAL, "string value missing or malformed");
    case PT_KT_TENSOR: {
      pt_tensor_meta m;
      return pt_tensor_meta_read(v->p, &pl, &m, v->where);
    }
    case PT_KT_DOUBLE_LIST:
      V_REQUIRE(pt_fb_get_vector(&pl, PT_PAYLOAD_VAL, 8, &items) == 1, "double list malformed");
      return PTERUN_STATUS_OK;
    case PT_KT_BOOL_LIST:
      V_REQUIRE(pt_fb_get_vector(&pl, PT_PAYLOAD_VAL, 1, &items) == 1, "bool list malformed");
      return PTERUN_STATUS_OK;
    case PT_KT_INT_LIST:
      V_REQUIRE(pt_fb_get_vector(&pl, PT_PAYLOAD_VAL, 8, &items) == 1, "int list malformed");
      for (uint32_t k = 0; k < items.len; ++k) {
        int64_t idx = pt_fb_vec_i64(&items, k);
        V_REQUIRE(idx >= 0 && idx < values->len, "int list item index out of range");
      }
      return PTERUN_STATUS_OK;
    default: /* tensor lists */
      V_REQUIRE(pt_fb_get_vector(&pl, PT_PAYLOAD_VAL, 4, &items) == 1, "tensor list malformed");
      for (uint32_t k = 0; k < items.len; ++k) {
        int32_t idx = pt_fb_vec_i32(&items, k);
        if (idx == -1 && tag == PT_KT_OPTIONAL_TENSOR_LIST) continue;
        V_REQUIRE(idx >= 0 && (uint32_t)idx < values->len, "tensor list item index out of range");
      }
      return PTERUN_STATUS_OK;
  }
}

static pterun_status index_vector(vctx* v, const pt_fb_table* t, unsigned slot, uint32_t n,
                                  const char* what) {
  pt_fb_vec ix;
  V_REQUIRE(pt_fb_get_vector(t, slot, 4, &ix) == 1, what);
  for (uint32_t k = 0; k < ix.len; ++k) {
    int32_t idx = pt_fb_vec_i32(&ix, k);
    V_REQUIRE(idx >= 0 && (uint32_t)idx < n, what);
  }
  return PTERUN_STATUS_OK;
}

static pterun_status verify_instruction(vctx* v, const pt_fb_vec* instrs, uint32_t i,
                                        uint32_t n_values, uint32_t n_ops, uint32_t n_delegates) {
  pt_fb_table in, a;
  V_REQUIRE(pt_fb_vec_table(instrs, i, &in), "instruction malformed");
  V_REQUIRE(pt_fb_check_scalar(&in, PT_INSTR_TYPE, 1), "instruction type malformed");
  uint8_t type = pt_fb_u8(&in, PT_INSTR_TYPE, 0);
  V_REQUIRE(type >= PT_INSTR_KERNEL_CALL && type <= PT_INSTR_FREE_CALL, "unknown instruction type");
  V_REQUIRE(pt_fb_get_table(&in, PT_INSTR_ARGS, &a) == 1,
            "instruction arguments missing or malformed");
  for (unsigned slot = 4; slot <= 6; slot += 2)
    V_REQUIRE(pt_fb_check_scalar(&a, slot, 4), "instruction field malformed");
  int32_t x = pt_fb_i32(&a, 4, 0), y = pt_fb_i32(&a, 6, 0);
  switch (type) {
    case PT_INSTR_KERNEL_CALL:
      V_REQUIRE(x >= 0 && (uint32_t)x < n_ops, "kernel call operator index out of range");
      return index_vector(v, &a, PT_CALL_ARGS, n_values, "kernel call argument index out of range");
    case PT_INSTR_DELEGATE_CALL:
      V_REQUIRE(x >= 0 && (uint32_t)x < n_delegates, "delegate index out of range");
      return index_vector(v, &a, PT_CALL_ARGS, n_values,
                          "delegate call argument index out of range");
    case PT_INSTR_MOVE_CALL:
      V_REQUIRE(x >= 0 && (uint32_t)x < n_values && y >= 0 && (uint32_t)y < n_values,
                "move call value index out of range");
      return PTERUN_STATUS_OK;
    case PT_INSTR_JUMP_FALSE_CALL:
      V_REQUIRE(x >= 0 && (uint32_t)x < n_values, "jump condition value index out of range");
      // Jumping to the chain's end finishes it; anything else must land inside.
      V_REQUIRE(y >= 0 && (uint32_t)y <= instrs->len, "jump destination out of range");
      return PTERUN_STATUS_OK;
    default:
      V_REQUIRE(x >= 0 && (uint32_t)x < n_values, "free call value index out of range");
      return PTERUN_STATUS_OK;
  }
}

static pterun_status verify_plan(vctx* v, const pt_fb_table* plan, uint32_t pi) {
  const char* name = "?";
  uint32_t nlen;
  snprintf(v->where, sizeof v->where, "execution_plan[%u]", pi);
  V_REQUIRE(pt_fb_get_string(plan, PT_PLAN_NAME, &name, &nlen) == 1, "method name missing");
  char base[96];
  snprintf(base, sizeof base, "method '%.60s'", name);
  snprintf(v->where, sizeof v->where, "%s", base);

  pt_fb_table cm;
  int r = pt_fb_get_table(plan, PT_PLAN_CONTAINER_META, &cm);
  V_REQUIRE(r >= 0, "container_meta_type malformed");
  if (r == 1) {
    PTERUN_TRY(opt_string(v, &cm, PT_CONTAINER_INP, "encoded_inp_str malformed"));
    PTERUN_TRY(opt_string(v, &cm, PT_CONTAINER_OUT, "encoded_out_str malformed"));
  }
  pt_fb_vec values, ops, delegates, chains, sizes, devs;
  PTERUN_TRY(table_vector(v, plan, PT_PLAN_VALUES, 1, &values, "values missing or malformed"));
  PTERUN_TRY(table_vector(v, plan, PT_PLAN_OPERATORS, 0, &ops, "operators malformed"));
  PTERUN_TRY(
      table_vector(v, plan, PT_PLAN_DELEGATES, 1, &delegates, "delegates missing or malformed"));
  PTERUN_TRY(table_vector(v, plan, PT_PLAN_CHAINS, 1, &chains, "chains missing or malformed"));
  PTERUN_TRY(table_vector(v, plan, PT_PLAN_NON_CONST_BUFFER_DEVICE, 0, &devs,
                          "non_const_buffer_device malformed"));
  V_REQUIRE(chains.len > 0, "method has no chains");
  V_REQUIRE(pt_fb_get_vector(plan, PT_PLAN_NON_CONST_BUFFER_SIZES, 8, &sizes) == 1,
            "non_const_buffer_sizes missing or malformed");
  for (uint32_t k = 0; k < sizes.len; ++k)
    V_REQUIRE(pt_fb_vec_i64(&sizes, k) >= 0, "negative planned buffer size");
  PTERUN_TRY(
      index_vector(v, plan, PT_PLAN_INPUTS, values.len, "inputs missing or index out of range"));
  PTERUN_TRY(
      index_vector(v, plan, PT_PLAN_OUTPUTS, values.len, "outputs missing or index out of range"));

  for (uint32_t k = 0; k < values.len; ++k) {
    snprintf(v->where, sizeof v->where, "%s value %u", base, k);
    PTERUN_TRY(verify_value(v, &values, k));
  }
  snprintf(v->where, sizeof v->where, "%s", base);
  for (uint32_t k = 0; k < ops.len; ++k) {
    pt_fb_table op;
    pt_fb_vec_table(&ops, k, &op);
    PTERUN_TRY(req_string(v, &op, PT_OPERATOR_NAME, "operator name missing or malformed"));
    PTERUN_TRY(opt_string(v, &op, PT_OPERATOR_OVERLOAD, "operator overload malformed"));
  }
  for (uint32_t k = 0; k < delegates.len; ++k) {
    pt_fb_table d, ref;
    pt_fb_vec specs;
    pt_fb_vec_table(&delegates, k, &d);
    PTERUN_TRY(req_string(v, &d, PT_DELEGATE_ID, "delegate id missing or malformed"));
    V_REQUIRE(pt_fb_get_table(&d, PT_DELEGATE_PROCESSED, &ref) >= 0,
              "delegate data reference malformed");
    PTERUN_TRY(
        table_vector(v, &d, PT_DELEGATE_COMPILE_SPECS, 0, &specs, "compile specs malformed"));
    for (uint32_t s = 0; s < specs.len; ++s) {
      pt_fb_table sp;
      pt_fb_vec bytes;
      pt_fb_vec_table(&specs, s, &sp);
      PTERUN_TRY(opt_string(v, &sp, PT_SPEC_KEY, "compile spec key malformed"));
      V_REQUIRE(pt_fb_get_vector(&sp, PT_SPEC_VALUE, 1, &bytes) >= 0,
                "compile spec value malformed");
    }
  }
  for (uint32_t c = 0; c < chains.len; ++c) {
    pt_fb_table ch;
    pt_fb_vec instrs, st, tmp;
    pt_fb_vec_table(&chains, c, &ch);
    snprintf(v->where, sizeof v->where, "%s chain %u", base, c);
    V_REQUIRE(pt_fb_get_vector(&ch, PT_CHAIN_INPUTS, 4, &tmp) >= 0, "chain inputs malformed");
    V_REQUIRE(pt_fb_get_vector(&ch, PT_CHAIN_OUTPUTS, 4, &tmp) >= 0, "chain outputs malformed");
    PTERUN_TRY(table_vector(v, &ch, PT_CHAIN_INSTRUCTIONS, 1, &instrs,
                            "instructions missing or malformed"));
    PTERUN_TRY(table_vector(v, &ch, PT_CHAIN_STACKTRACE, 0, &st, "stacktrace malformed"));
    for (uint32_t i = 0; i < st.len; ++i) {
      pt_fb_table fl;
      pt_fb_vec frames;
      pt_fb_vec_table(&st, i, &fl);
      PTERUN_TRY(
          table_vector(v, &fl, PT_FRAMELIST_ITEMS, 0, &frames, "stacktrace frames malformed"));
      for (uint32_t f = 0; f < frames.len; ++f) {
        pt_fb_table fr;
        pt_fb_vec_table(&frames, f, &fr);
        PTERUN_TRY(opt_string(v, &fr, PT_FRAME_FILENAME, "frame filename malformed"));
        PTERUN_TRY(opt_string(v, &fr, PT_FRAME_NAME, "frame name malformed"));
        PTERUN_TRY(opt_string(v, &fr, PT_FRAME_CONTEXT, "frame context malformed"));
      }
    }
    for (uint32_t i = 0; i < instrs.len; ++i) {
      snprintf(v->where, sizeof v->where, "%s chain %u instruction %u", base, c, i);
      PTERUN_TRY(verify_instruction(v, &instrs, i, values.len, ops.len, delegates.len));
    }
  }
  return PTERUN_STATUS_OK;
}

pterun_status pt_verify_program(pterun_program* p) {
  vctx vc = {p, "Program"};
  vctx* v = &vc;
  pt_fb_vec tmp;
  PTERUN_TRY(table_vector(v, &p->root, PT_PROGRAM_SEGMENTS, 0, &tmp, "segments malformed"));
  for (uint32_t i = 0; i < tmp.len; ++i) {
    pt_fb_table s;
    pt_fb_vec_table(&tmp, i, &s);
    V_REQUIRE(
        pt_fb_check_scalar(&s, PT_SEGMENT_OFFSET, 8) && pt_fb_check_scalar(&s, PT_SEGMENT_SIZE, 8),
        "segment fields malformed");
  }
  PTERUN_TRY(
      table_vector(v, &p->root, PT_PROGRAM_CONSTANT_BUFFER, 0, &tmp, "constant_buffer malformed"));
  for (uint32_t i = 0; i < tmp.len; ++i) {
    pt_fb_table b;
    pt_fb_vec st;
    pt_fb_vec_table(&tmp, i, &b);
    V_REQUIRE(pt_fb_get_vector(&b, PT_BUFFER_STORAGE, 1, &st) >= 0,
              "constant buffer storage malformed");
  }
  PTERUN_TRY(table_vector(v, &p->root, PT_PROGRAM_BACKEND_DELEGATE_DATA, 0, &tmp,
                          "backend_delegate_data malformed"));
  for (uint32_t i = 0; i < tmp.len; ++i) {
    pt_fb_table b;
    pt_fb_vec st;
    pt_fb_vec_table(&tmp, i, &b);
    V_REQUIRE(pt_fb_get_vector(&b, PT_BUFFER_STORAGE, 1, &st) >= 0, "delegate data malformed");
  }
  PTERUN_TRY(table_vector(v, &p->root, PT_PROGRAM_MUTABLE_DATA_SEGMENTS, 0, &tmp,
                          "mutable_data_segments malformed"));
  PTERUN_TRY(table_vector(v, &p->root, PT_PROGRAM_NAMED_DATA, 0, &tmp, "named_data malformed"));
  for (uint32_t i = 0; i < tmp.len; ++i) {
    pt_fb_table nd;
    pt_fb_vec_table(&tmp, i, &nd);
    PTERUN_TRY(req_string(v, &nd, PT_NAMED_KEY, "named data key missing or malformed"));
    V_REQUIRE(pt_fb_check_scalar(&nd, PT_NAMED_SEGMENT_INDEX, 4),
              "named data segment index malformed");
  }
  for (uint32_t i = 0; i < p->plans.len; ++i) {
    pt_fb_table plan;
    snprintf(v->where, sizeof v->where, "execution_plan[%u]", i);
    V_REQUIRE(pt_fb_vec_table(&p->plans, i, &plan), "execution plan malformed");
    PTERUN_TRY(verify_plan(v, &plan, i));
  }
  return PTERUN_STATUS_OK;
}
