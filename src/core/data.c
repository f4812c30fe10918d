/* External named data: the .ptd (FlatTensor) container, verified at load. */
#include <string.h>

#include "src/core/data_internal.h"
#include "src/core/fb.h"
#include "src/core/internal.h"
#include "src/core/schema.h"

struct pterun_data {
  pt_file_image image;
  pt_fb_buf fb;
  pt_fb_table root;
  pt_fb_vec segments, named;
  uint64_t segment_base, segment_data_size;
  pterun_logger logger;
  pterun_allocator allocator_copy;
  int has_allocator;
};

uint64_t pt_data_file_size(const pterun_data* d) {
  return d != NULL ? d->image.size : 0;
}

static pterun_status dfail(pterun_data* d, const char* what) {
  return pt_fail(&d->logger, PTERUN_STATUS_INVALID_DATA, "data file: %s", what);
}

/* Bytes of segment i, bounds-checked against the segment area. */
static bool segment(const pterun_data* d, uint32_t i, const uint8_t** bytes, uint64_t* size) {
  pt_fb_table s;
  if (i >= d->segments.len || !pt_fb_vec_table(&d->segments, i, &s)) return false;
  uint64_t off = pt_fb_u64(&s, PT_SEGMENT_OFFSET, 0), sz = pt_fb_u64(&s, PT_SEGMENT_SIZE, 0), end,
           abs;
  if (pt_add_overflow_u64(off, sz, &end) || end > d->segment_data_size) return false;
  abs = d->segment_base + off;
  *bytes = d->image.data + abs;
  *size = sz;
  return true;
}

static pterun_status verify(pterun_data* d) {
  const uint8_t* b = d->image.data;
  size_t n = d->image.size;
  if (n < 48) return dfail(d, "shorter than the 48-byte FlatTensor header");
  if (memcmp(b + 4, "FT01", 4) != 0) return dfail(d, "no FT01 file identifier (not a .ptd file)");
  if (memcmp(b + 8, "FH01", 4) != 0) return dfail(d, "no FH01 header magic");
  if (pt_rd_u32(b + 12) < 40) return dfail(d, "header length below 40");
  uint64_t fb_off = pt_rd_u64(b + 16), fb_size = pt_rd_u64(b + 24), fb_end;
  d->segment_base = pt_rd_u64(b + 32);
  d->segment_data_size = pt_rd_u64(b + 40);
  uint64_t seg_end;
  if (pt_add_overflow_u64(fb_off, fb_size, &fb_end) || fb_end > n)
    return dfail(d, "flatbuffer region outside the file");
  if (pt_add_overflow_u64(d->segment_base, d->segment_data_size, &seg_end) || seg_end > n ||
      (d->segment_data_size > 0 && d->segment_base < fb_end))
    return dfail(d, "segment area outside the file");
  d->fb.base = b;
  d->fb.size = (size_t)fb_end;
  if (!pt_fb_root(&d->fb, &d->root)) return dfail(d, "root table malformed");
  if (pt_fb_get_vector(&d->root, PT_FLAT_SEGMENTS, 4, &d->segments) != 1)
    return dfail(d, "segments missing or malformed");
  if (pt_fb_get_vector(&d->root, PT_FLAT_NAMED_DATA, 4, &d->named) != 1)
    return dfail(d, "named_data missing or malformed");
  for (uint32_t i = 0; i < d->segments.len; ++i) {
    pt_fb_table s;
    const uint8_t* bytes;
    uint64_t sz;
    if (!pt_fb_vec_table(&d->segments, i, &s) || !pt_fb_check_scalar(&s, PT_SEGMENT_OFFSET, 8) ||
        !pt_fb_check_scalar(&s, PT_SEGMENT_SIZE, 8) || !segment(d, i, &bytes, &sz))
      return dfail(d, "a segment is malformed or outside the segment area");
  }
  for (uint32_t i = 0; i < d->named.len; ++i) {
    pt_fb_table nd, lay;
    const char* key;
    uint32_t kl;
    pt_fb_vec v;
    if (!pt_fb_vec_table(&d->named, i, &nd) ||
        pt_fb_get_string(&nd, PT_NAMED_KEY, &key, &kl) != 1 ||
        !pt_fb_check_scalar(&nd, PT_NAMED_SEGMENT_INDEX, 4))
      return dfail(d, "a named entry is malformed");
    if (pt_fb_u32(&nd, PT_NAMED_SEGMENT_INDEX, 0) >= d->segments.len)
      return dfail(d, "a named entry's segment is out of range");
    int r = pt_fb_get_table(&nd, PT_NAMED_TENSOR_LAYOUT, &lay);
    if (r < 0) return dfail(d, "a tensor layout is malformed");
    if (r == 1) {
      pt_fb_vec order;
      if (!pt_fb_check_scalar(&lay, PT_LAYOUT_SCALAR_TYPE, 1) ||
          pt_fb_get_vector(&lay, PT_LAYOUT_SIZES, 4, &v) != 1 ||
          pt_fb_get_vector(&lay, PT_LAYOUT_DIM_ORDER, 1, &order) != 1 || v.len > PTERUN_MAX_RANK ||
          order.len != v.len)
        return dfail(d, "a tensor layout is malformed");
    }
  }
  return PTERUN_STATUS_OK;
}

int pt_data_find(const pterun_data* d, const char* key, pt_data_entry* out) {
  size_t klen = strlen(key);
  for (uint32_t i = 0; i < d->named.len; ++i) {
    pt_fb_table nd, lay;
    const char* k;
    uint32_t kl;
    if (!pt_fb_vec_table(&d->named, i, &nd) || pt_fb_get_string(&nd, PT_NAMED_KEY, &k, &kl) != 1)
      continue;
    if (kl != klen || memcmp(k, key, klen) != 0) continue;
    memset(out, 0, sizeof *out);
    if (!segment(d, pt_fb_u32(&nd, PT_NAMED_SEGMENT_INDEX, 0), &out->bytes, &out->size)) return 0;
    if (pt_fb_get_table(&nd, PT_NAMED_TENSOR_LAYOUT, &lay) == 1) {
      pt_fb_vec sizes, order;
      pt_fb_get_vector(&lay, PT_LAYOUT_SIZES, 4, &sizes);
      pt_fb_get_vector(&lay, PT_LAYOUT_DIM_ORDER, 1, &order);
      out->has_layout = 1;
      out->dtype = pt_fb_i8(&lay, PT_LAYOUT_SCALAR_TYPE, 0);
      out->rank = (uint8_t)sizes.len;
      for (uint32_t j = 0; j < sizes.len && j < PTERUN_MAX_RANK; ++j) {
        out->sizes[j] = pt_fb_vec_i32(&sizes, j);
        out->dim_order[j] = pt_fb_vec_u8(&order, j);
      }
    }
    return 1;
  }
  return 0;
}

static pterun_status finish(pterun_data* d, pterun_data** out) {
  pterun_status st = verify(d);
  if (st != PTERUN_STATUS_OK) {
    pterun_data_destroy(d);
    return st;
  }
  *out = d;
  return PTERUN_STATUS_OK;
}

static pterun_data* new_data(const pterun_load_options* o) {
  const pterun_allocator* a = o->allocator;
  pterun_data* d = pt_alloc(a, sizeof *d, 16);
  if (d == NULL) return NULL;
  d->logger = pt_logger_or(&o->logger, NULL);
  if (a != NULL) {
    d->allocator_copy = *a;
    d->has_allocator = 1;
  }
  return d;
}

pterun_status pterun_data_load_buffer(const void* data, size_t size,
                                      const pterun_load_options* options, pterun_data** out) {
  if (out == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  *out = NULL;
  if (data == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  pterun_load_options o;
  PTERUN_TRY(pterun_options_read(options, &o, sizeof o, NULL, "pterun_load_options"));
  pterun_data* d = new_data(&o);
  if (d == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
  if (o.copy) {
    pterun_status st = pt_file_image_copy(data, size, d->has_allocator ? &d->allocator_copy : NULL,
                                          &d->logger, &d->image);
    if (st != PTERUN_STATUS_OK) {
      pterun_data_destroy(d);
      return st;
    }
  } else {
    d->image.data = data;
    d->image.size = size;
  }
  return finish(d, out);
}

pterun_status pterun_data_load_file(const char* path, pterun_file_mode mode,
                                    const pterun_load_options* options, pterun_data** out) {
  if (out == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  *out = NULL;
  pterun_load_options o;
  PTERUN_TRY(pterun_options_read(options, &o, sizeof o, NULL, "pterun_load_options"));
  pterun_data* d = new_data(&o);
  if (d == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
  pterun_status st = pt_file_image_open(path, mode, d->has_allocator ? &d->allocator_copy : NULL,
                                        &d->logger, &d->image);
  if (st != PTERUN_STATUS_OK) {
    pterun_data_destroy(d);
    return st;
  }
  return finish(d, out);
}

void pterun_data_destroy(pterun_data* d) {
  if (d == NULL) return;
  pt_file_image_close(&d->image);
  pterun_allocator copy = d->allocator_copy;
  pt_free(d->has_allocator ? &copy : NULL, d);
}

size_t pterun_data_count(const pterun_data* d) {
  return d != NULL ? d->named.len : 0;
}

const char* pterun_data_key(const pterun_data* d, size_t i) {
  pt_fb_table nd;
  const char* k;
  uint32_t kl;
  if (d == NULL || i >= d->named.len || !pt_fb_vec_table(&d->named, (uint32_t)i, &nd) ||
      pt_fb_get_string(&nd, PT_NAMED_KEY, &k, &kl) != 1)
    return NULL;
  return k;
}
