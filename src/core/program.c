/* Program loading: container header, segments, constant tables. */
#include <string.h>

#include "pterun/cpu.h"
#include "src/core/program_internal.h"
#include "src/core/schema.h"

#define PT_EH_MAGIC "eh00"
#define PT_EH_MIN_LENGTH 24

static pterun_status bad(pterun_program* p, const char* fmt, const char* what) {
  return pt_fail(&p->logger, PTERUN_STATUS_INVALID_PROGRAM, fmt, what);
}

/* Parses the 8-byte preamble and the optional extended header. */
static pterun_status parse_container(pterun_program* p) {
  const uint8_t* d = p->image.data;
  size_t n = p->image.size;
  if (n < 8)
    return pt_fail(&p->logger, PTERUN_STATUS_INVALID_PROGRAM,
                   "file is %zu bytes; a program needs at least 8", n);
  if (memcmp(d + 4, "ET12", 4) != 0) {
    if (d[4] == 'E' && d[5] == 'T')
      return pt_fail(&p->logger, PTERUN_STATUS_INCOMPATIBLE_VERSION,
                     "file identifier is '%.4s'; this runtime reads ET12", (const char*)d + 4);
    if (memcmp(d + 4, "BP08", 4) == 0)
      return pt_fail(&p->logger, PTERUN_STATUS_INVALID_PROGRAM,
                     "this is a bundled program (BP08): load it with pterun_bundle_load_file and "
                     "take its program with pterun_bundle_program");
    return pt_fail(&p->logger, PTERUN_STATUS_INVALID_PROGRAM,
                   "not an ExecuTorch program (no ET12 identifier)");
  }
  p->program_size = n;
  if (n >= 16 && memcmp(d + 8, PT_EH_MAGIC, 4) == 0) {
    uint32_t len = pt_rd_u32(d + 12);
    if (len < PT_EH_MIN_LENGTH)
      return pt_fail(&p->logger, PTERUN_STATUS_INVALID_PROGRAM, "extended header length %u < 24",
                     len);
    if ((uint64_t)len + 8 > n) return bad(p, "extended header %s past the end of the file", "runs");
    p->has_extended_header = 1;
    p->program_size = pt_rd_u64(d + 16);
    p->segment_base = pt_rd_u64(d + 24);
    p->segment_data_size = len >= 32 ? pt_rd_u64(d + 32) : 0;
    if (p->program_size < 8 + (uint64_t)len || p->program_size > n)
      return pt_fail(&p->logger, PTERUN_STATUS_INVALID_PROGRAM,
                     "extended header program_size %llu is outside the file (%zu bytes)",
                     (unsigned long long)p->program_size, n);
    uint64_t end;
    if (pt_add_overflow_u64(p->segment_base, p->segment_data_size, &end))
      return bad(p, "segment base + size %s", "overflows");
    if (p->segment_base != 0 && (p->segment_base < p->program_size || end > n))
      return pt_fail(&p->logger, PTERUN_STATUS_INVALID_PROGRAM,
                     "segment data [%llu, %llu) is outside the file (%zu bytes)",
                     (unsigned long long)p->segment_base, (unsigned long long)end, n);
  }
  p->fb.base = d;
  p->fb.size = (size_t)p->program_size;
  uint32_t root = pt_rd_u32(d);
  if (root < 8 || (uint64_t)root + 4 > p->program_size)
    return pt_fail(&p->logger, PTERUN_STATUS_INVALID_PROGRAM,
                   "root table offset %u is out of range", root);
  if (!pt_fb_root(&p->fb, &p->root)) return bad(p, "root table %s is malformed", "Program");
  return PTERUN_STATUS_OK;
}

pterun_status pt_program_segment(const pterun_program* p, uint64_t i, const uint8_t** data,
                                 uint64_t* size) {
  if (i >= p->segments.len)
    return pt_fail(&p->logger, PTERUN_STATUS_INVALID_PROGRAM,
                   "segment index %llu out of range (%u segments)", (unsigned long long)i,
                   p->segments.len);
  pt_fb_table s;
  if (!pt_fb_vec_table(&p->segments, (uint32_t)i, &s))
    return pt_fail(&p->logger, PTERUN_STATUS_INVALID_PROGRAM, "segment %llu is malformed",
                   (unsigned long long)i);
  uint64_t off = pt_fb_u64(&s, PT_SEGMENT_OFFSET, 0), sz = pt_fb_u64(&s, PT_SEGMENT_SIZE, 0);
  if (p->segment_base == 0)
    return pt_fail(&p->logger, PTERUN_STATUS_INVALID_PROGRAM,
                   "segment %llu is referenced but the file has no segment data",
                   (unsigned long long)i);
  uint64_t start, end;
  if (pt_add_overflow_u64(p->segment_base, off, &start) || pt_add_overflow_u64(start, sz, &end) ||
      end > p->image.size)
    return pt_fail(&p->logger, PTERUN_STATUS_INVALID_PROGRAM,
                   "segment %llu (offset %llu, size %llu) is outside the file",
                   (unsigned long long)i, (unsigned long long)off, (unsigned long long)sz);
  *data = p->image.data + start;
  *size = sz;
  return PTERUN_STATUS_OK;
}

bool pt_program_plan(const pterun_program* p, size_t i, pt_fb_table* out) {
  return i < p->plans.len && pt_fb_vec_table(&p->plans, (uint32_t)i, out);
}

/* Selects the constant storage scheme and loads the mutable-data table. */
static pterun_status parse_data_tables(pterun_program* p) {
  pt_fb_table cs;
  int r = pt_fb_get_table(&p->root, PT_PROGRAM_CONSTANT_SEGMENT, &cs);
  if (r < 0) return bad(p, "Program.%s is malformed", "constant_segment");
  pt_fb_vec offs = {0};
  int have_offs = 0;
  if (r == 1) {
    int rv = pt_fb_get_vector(&cs, PT_SUBSEG_OFFSETS, 8, &offs);
    if (rv < 0) return bad(p, "Program.%s.offsets is malformed", "constant_segment");
    have_offs = rv == 1 && offs.len > 0;
  }
  if (have_offs) {
    p->constant_offsets = offs;
    if (offs.len > 1) {
      if (p->constant_buffers.len > 1)
        return bad(p, "both constant_segment and constant_buffer hold constants; only one %s",
                   "may");
      PTERUN_TRY(pt_program_segment(p, pt_fb_u32(&cs, PT_SUBSEG_INDEX, 0), &p->constant_data,
                                    &p->constant_size));
    }
  } else {
    p->legacy_constants = p->constant_buffers.len > 0;
  }

  pt_fb_vec muts;
  r = pt_fb_get_vector(&p->root, PT_PROGRAM_MUTABLE_DATA_SEGMENTS, 4, &muts);
  if (r < 0) return bad(p, "Program.%s is malformed", "mutable_data_segments");
  if (r == 1 && muts.len > 0) {
    pt_fb_table m0;
    if (!pt_fb_vec_table(&muts, 0, &m0))
      return bad(p, "Program.%s[0] is malformed", "mutable_data_segments");
    if (pt_fb_get_vector(&m0, PT_SUBSEG_OFFSETS, 8, &p->mutable_offsets) < 0)
      return bad(p, "Program.%s[0].offsets is malformed", "mutable_data_segments");
    if (p->mutable_offsets.len > 1)
      PTERUN_TRY(pt_program_segment(p, pt_fb_u32(&m0, PT_SUBSEG_INDEX, 0), &p->mutable_data,
                                    &p->mutable_size));
    p->has_mutable = 1;
  }
  return PTERUN_STATUS_OK;
}

static pterun_status finish_load(pterun_program* p) {
  PTERUN_TRY(parse_container(p));
  int r = pt_fb_get_vector(&p->root, PT_PROGRAM_EXECUTION_PLAN, 4, &p->plans);
  if (r != 1) return bad(p, "Program.%s is missing or malformed", "execution_plan");
  if (pt_fb_get_vector(&p->root, PT_PROGRAM_SEGMENTS, 4, &p->segments) < 0)
    return bad(p, "Program.%s is malformed", "segments");
  if (pt_fb_get_vector(&p->root, PT_PROGRAM_CONSTANT_BUFFER, 4, &p->constant_buffers) < 0)
    return bad(p, "Program.%s is malformed", "constant_buffer");
  if (pt_fb_get_vector(&p->root, PT_PROGRAM_NAMED_DATA, 4, &p->named_data) < 0)
    return bad(p, "Program.%s is malformed", "named_data");
  PTERUN_TRY(pt_verify_program(p));
  return parse_data_tables(p);
}

static pterun_status new_program(const pterun_load_options* o, pterun_program** out) {
  const pterun_allocator* a = o->allocator;
  pterun_program* p = pt_alloc(a, sizeof *p, 16);
  if (p == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
  p->logger = pt_logger_or(&o->logger, NULL);
  // A PTERUN_ISA/PTERUN_ISA_MASK the kernels cannot use is worded once, here
  // (the first object with a logger; the kernels that read the features have none).
  pterun_cpu_report_env(&p->logger);
  if (a != NULL) {
    p->allocator_copy = *a;
    p->allocator = &p->allocator_copy;
  }
  *out = p;
  return PTERUN_STATUS_OK;
}

static pterun_status load_common(pterun_program* p, pterun_program** out) {
  pterun_status st = finish_load(p);
  if (st != PTERUN_STATUS_OK) {
    pterun_program_destroy(p);
    return st;
  }
  *out = p;
  return PTERUN_STATUS_OK;
}

pterun_status pterun_program_load_buffer(const void* data, size_t size,
                                         const pterun_load_options* options,
                                         pterun_program** program_out) {
  if (program_out == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  *program_out = NULL;
  pterun_load_options o;
  PTERUN_TRY(pterun_options_read(options, &o, sizeof o, NULL, "pterun_load_options"));
  pterun_program* p;
  PTERUN_TRY(new_program(&o, &p));
  if (data == NULL) {
    pterun_status st = pt_fail(&p->logger, PTERUN_STATUS_INVALID_ARGUMENT, "program data is NULL");
    pterun_program_destroy(p);
    return st;
  }
  if (o.copy) {
    pterun_status st = pt_file_image_copy(data, size, p->allocator, &p->logger, &p->image);
    if (st != PTERUN_STATUS_OK) {
      pterun_program_destroy(p);
      return st;
    }
  } else {
    if (((uintptr_t)data & 15) != 0) {
      pterun_status st = pt_fail(&p->logger, PTERUN_STATUS_INVALID_ARGUMENT,
                                 "program buffer must be 16-byte aligned (or load with copy)");
      pterun_program_destroy(p);
      return st;
    }
    p->image.data = data;
    p->image.size = size;
  }
  return load_common(p, program_out);
}

pterun_status pterun_program_load_file(const char* path, pterun_file_mode mode,
                                       const pterun_load_options* options,
                                       pterun_program** program_out) {
  if (program_out == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  *program_out = NULL;
  pterun_load_options o;
  PTERUN_TRY(pterun_options_read(options, &o, sizeof o, NULL, "pterun_load_options"));
  pterun_program* p;
  PTERUN_TRY(new_program(&o, &p));
  pterun_status st = pt_file_image_open(path, mode, p->allocator, &p->logger, &p->image);
  if (st != PTERUN_STATUS_OK) {
    pterun_program_destroy(p);
    return st;
  }
  return load_common(p, program_out);
}

size_t pt_program_release(pterun_program* p, const void* data, size_t n) {
  const uint8_t* b = data;
  if (p->allocator != NULL || p->image.owned == NULL || b < p->image.data || n > p->image.size ||
      (size_t)(b - p->image.data) > p->image.size - n)
    return 0;
  if (p->released_count == p->released_cap) {
    size_t cap = p->released_cap > 0 ? 2 * p->released_cap : 8;
    struct pt_range* more = pt_alloc(NULL, cap * sizeof *more, 16);
    if (more == NULL) return 0;
    if (p->released_count > 0) memcpy(more, p->released, p->released_count * sizeof *more);
    pt_free(NULL, p->released);
    p->released = more;
    p->released_cap = cap;
  }
  size_t given = pt_file_image_drop_pages(&p->image, b, n);
  if (given > 0) p->released[p->released_count++] = (struct pt_range){b, b + n};
  return given;
}

void pterun_program_destroy(pterun_program* p) {
  if (p == NULL) return;
  pt_file_image_close(&p->image);
  pt_free(NULL, p->released);
  // The allocator lives inside p: copy it out before freeing p with it.
  pterun_allocator copy = p->allocator_copy;
  pt_free(p->allocator != NULL ? &copy : NULL, p);
}

pterun_status pt_program_constant(const pterun_program* p, uint32_t idx, uint64_t nbytes,
                                  const uint8_t** data) {
  if (!p->legacy_constants) {
    if (idx >= p->constant_offsets.len)
      return pt_fail(&p->logger, PTERUN_STATUS_INVALID_PROGRAM,
                     "constant index %u out of range (%u constants)", idx, p->constant_offsets.len);
    uint64_t off = pt_fb_vec_u64(&p->constant_offsets, idx), end;
    if (pt_add_overflow_u64(off, nbytes, &end) || end > p->constant_size)
      return pt_fail(&p->logger, PTERUN_STATUS_INVALID_PROGRAM,
                     "constant %u ([%llu, +%llu)) is outside the constant segment (%llu bytes)",
                     idx, (unsigned long long)off, (unsigned long long)nbytes,
                     (unsigned long long)p->constant_size);
    *data = p->constant_data != NULL ? p->constant_data + off : NULL;
    for (size_t r = 0; r < p->released_count && *data != NULL; ++r)
      if (*data < p->released[r].end && p->released[r].begin < *data + nbytes)
        return pt_fail(&p->logger, PTERUN_STATUS_INVALID_STATE,
                       "constant %u was given back after an earlier method load packed it "
                       "(release_packed_constants): load methods that need it first",
                       idx);
    return PTERUN_STATUS_OK;
  }
  pt_fb_table buf;
  pt_fb_vec storage;
  if (idx >= p->constant_buffers.len || !pt_fb_vec_table(&p->constant_buffers, idx, &buf))
    return pt_fail(&p->logger, PTERUN_STATUS_INVALID_PROGRAM,
                   "constant buffer index %u out of range (%u buffers)", idx,
                   p->constant_buffers.len);
  if (pt_fb_get_vector(&buf, PT_BUFFER_STORAGE, 1, &storage) != 1 || storage.len < nbytes)
    return pt_fail(&p->logger, PTERUN_STATUS_INVALID_PROGRAM,
                   "constant buffer %u holds fewer than %llu bytes", idx,
                   (unsigned long long)nbytes);
  *data = pt_fb_vec_ptr(&storage, 0);
  return PTERUN_STATUS_OK;
}

pterun_status pt_program_mutable(const pterun_program* p, uint32_t idx, uint64_t nbytes,
                                 const uint8_t** data) {
  if (!p->has_mutable || idx >= p->mutable_offsets.len)
    return pt_fail(&p->logger, PTERUN_STATUS_INVALID_PROGRAM, "mutable data index %u out of range",
                   idx);
  uint64_t off = pt_fb_vec_u64(&p->mutable_offsets, idx), end;
  if (pt_add_overflow_u64(off, nbytes, &end) || end > p->mutable_size)
    return pt_fail(&p->logger, PTERUN_STATUS_INVALID_PROGRAM,
                   "mutable data %u is outside its segment", idx);
  *data = p->mutable_data + off;
  return PTERUN_STATUS_OK;
}
