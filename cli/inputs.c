/* Method inputs for run and bench: generated or read from .npy files, then
 * bound to a loaded method. */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "pterun/kernel_util.h"

static uint64_t splitmix64(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static const char* tag_name(int tag) {
  return pterun_value_tag_name(tag);
}

static int alloc_inputs(cli_inputs* in, size_t n) {
  memset(in, 0, sizeof *in);
  in->arrays = (cli_npy*)calloc(n ? n : 1, sizeof *in->arrays);
  in->sources = (const char**)calloc(n ? n : 1, sizeof *in->sources);
  if (in->arrays == NULL || in->sources == NULL) {
    free(in->arrays);
    free((void*)in->sources);
    memset(in, 0, sizeof *in);
    return cli_fail(NULL, PTERUN_STATUS_OUT_OF_MEMORY, "out of memory");
  }
  in->count = n;
  return CLI_EXIT_OK;
}

void cli_inputs_free(cli_inputs* in) {
  size_t k;
  if (in->arrays != NULL)
    for (k = 0; k < in->count; ++k) cli_npy_free(&in->arrays[k]);
  free(in->arrays);
  free((void*)in->sources);
  memset(in, 0, sizeof *in);
}

/* An owned buffer for `numel` elements, shaped like the input. */
static int make_array(cli_npy* a, const pterun_io_info* io, size_t itemsize, size_t* numel_out) {
  size_t numel = 1;
  uint32_t k;
  for (k = 0; k < io->rank; ++k) {
    size_t d = (size_t)(io->sizes[k] > 0 ? io->sizes[k] : 0);
    if (d != 0 && numel > SIZE_MAX / d / itemsize)
      return cli_fail(NULL, PTERUN_STATUS_OUT_OF_MEMORY, "input shape too large");
    numel *= d;
  }
  a->alloc_ = calloc(numel ? numel : 1, itemsize);
  if (a->alloc_ == NULL)
    return cli_fail(NULL, PTERUN_STATUS_OUT_OF_MEMORY, "out of memory for %zu input elements",
                    numel);
  a->data = a->alloc_;
  a->dtype = io->dtype;
  a->rank = io->rank;
  memcpy(a->shape, io->sizes, sizeof(int64_t) * io->rank);
  a->numel = numel;
  a->nbytes = numel * itemsize;
  *numel_out = numel;
  return CLI_EXIT_OK;
}

int cli_inputs_generate(cli_session* s, size_t method, cli_gen gen, uint64_t seed,
                        cli_inputs* out) {
  static const char* kGenNames[] = {"zeros", "ones", "random"};
  pterun_method_info mi;
  pterun_status st;
  uint64_t rng = seed;
  size_t i, j;

  memset(out, 0, sizeof *out);
  if ((st = pterun_program_method_info(s->program, method, &mi)) != PTERUN_STATUS_OK)
    return cli_fail(&s->log, st, "cannot query method %zu", method);
  if (alloc_inputs(out, mi.input_count) != CLI_EXIT_OK) return CLI_EXIT_FAIL;
  for (i = 0; i < mi.input_count; ++i) {
    pterun_io_info io;
    size_t itemsize, numel = 0;
    cli_npy* a = &out->arrays[i];
    if ((st = pterun_program_method_input(s->program, method, i, &io)) != PTERUN_STATUS_OK)
      return cli_fail(&s->log, st, "cannot query input %zu", i);
    out->sources[i] = io.tag == PTERUN_VALUE_TENSOR ? kGenNames[gen] : "compiled-in value";
    if (io.tag != PTERUN_VALUE_TENSOR) continue;
    itemsize = pterun_dtype_size(io.dtype);
    if (itemsize == 0)
      return cli_fail(NULL, PTERUN_STATUS_NOT_SUPPORTED, "input %zu has unknown dtype %d", i,
                      (int)io.dtype);
    /* Bounded inputs are generated at their bound (the serialized sizes). */
    if (make_array(a, &io, itemsize, &numel) != CLI_EXIT_OK) return CLI_EXIT_FAIL;
    if (gen == CLI_GEN_ZEROS) continue;
    if (!cli_elem_supported(io.dtype)) {
      /* sub-byte and float8 types: random bytes are the best we can do */
      if (gen == CLI_GEN_ONES)
        return cli_fail(NULL, PTERUN_STATUS_NOT_SUPPORTED,
                        "cannot generate ones for input %zu of dtype %s; pass --input", i,
                        pterun_dtype_name(io.dtype));
      for (j = 0; j < a->nbytes; ++j) ((uint8_t*)a->data)[j] = (uint8_t)splitmix64(&rng);
      continue;
    }
    for (j = 0; j < numel; ++j) {
      double v = 1.0;
      if (gen == CLI_GEN_RANDOM) {
        uint64_t r = splitmix64(&rng);
        if (io.dtype == PTERUN_DTYPE_BOOL)
          v = (double)(r & 1u);
        else if (pterun_dtype_is_float(io.dtype))
          v = (double)(r >> 11) * 0x1.0p-52 - 1.0; /* [-1,1) */
        else
          v = (double)(r % 10u); /* small non-negative: safe as indices and sizes */
      }
      cli_elem_set(io.dtype, a->data, j, v);
    }
  }
  return CLI_EXIT_OK;
}

/* Does the file's shape fit the input's (exact, or within bounds)? */
static int shape_fits(const pterun_io_info* io, const cli_npy* a) {
  uint32_t k;
  if (a->rank != io->rank) return 0;
  if (io->dynamism == PTERUN_SHAPE_UNBOUNDED) return 1;
  for (k = 0; k < io->rank; ++k) {
    if (io->dynamism == PTERUN_SHAPE_STATIC && a->shape[k] != io->sizes[k]) return 0;
    if (io->dynamism == PTERUN_SHAPE_BOUNDED && a->shape[k] > io->sizes[k]) return 0;
  }
  return 1;
}

int cli_inputs_from_files(cli_session* s, size_t method, const cli_strlist* paths,
                          cli_inputs* out) {
  pterun_method_info mi;
  pterun_status st;
  char err[CLI_NPY_ERR_SIZE];
  size_t i;

  memset(out, 0, sizeof *out);
  if ((st = pterun_program_method_info(s->program, method, &mi)) != PTERUN_STATUS_OK)
    return cli_fail(&s->log, st, "cannot query method %zu", method);
  if (paths->count != mi.input_count)
    return cli_fail(NULL, PTERUN_STATUS_INPUT_MISMATCH,
                    "method '%s' has %zu input%s but %zu --input file%s given", mi.name,
                    mi.input_count, mi.input_count == 1 ? "" : "s", paths->count,
                    paths->count == 1 ? " was" : "s were");
  if (alloc_inputs(out, mi.input_count) != CLI_EXIT_OK) return CLI_EXIT_FAIL;
  for (i = 0; i < mi.input_count; ++i) {
    pterun_io_info io;
    cli_npy* a = &out->arrays[i];
    char want[256], got[256];
    out->sources[i] = paths->items[i];
    if ((st = pterun_program_method_input(s->program, method, i, &io)) != PTERUN_STATUS_OK)
      return cli_fail(&s->log, st, "cannot query input %zu", i);
    if ((st = cli_npy_read_file(paths->items[i], a, err, sizeof err)) != PTERUN_STATUS_OK)
      return cli_fail(NULL, st, "input %zu: %s", i, err);
    if (io.tag != PTERUN_VALUE_TENSOR) {
      if (io.tag != PTERUN_VALUE_NONE && a->numel != 1)
        return cli_fail(NULL, PTERUN_STATUS_INPUT_MISMATCH,
                        "input %zu: expected a %s scalar (a 0-d array), got %zu elements from %s",
                        i, tag_name(io.tag), a->numel, paths->items[i]);
      continue;
    }
    /* .npy has no bfloat16: accept float32 files for bfloat16 inputs. */
    if (io.dtype == PTERUN_DTYPE_BF16 && a->dtype == PTERUN_DTYPE_F32) {
      size_t j;
      for (j = 0; j < a->numel; ++j)
        cli_elem_set(PTERUN_DTYPE_BF16, a->data, j, cli_elem_get(PTERUN_DTYPE_F32, a->data, j));
      a->dtype = PTERUN_DTYPE_BF16;
      a->nbytes = a->numel * 2;
    }
    if (a->dtype != io.dtype || !shape_fits(&io, a)) {
      cli_npy_shape_str(io.rank, io.sizes, want, sizeof want);
      cli_npy_shape_str(a->rank, a->shape, got, sizeof got);
      return cli_fail(NULL, PTERUN_STATUS_INPUT_MISMATCH,
                      "input %zu: expected %s %s%s, got %s %s from %s", i,
                      pterun_dtype_name(io.dtype), want,
                      io.dynamism == PTERUN_SHAPE_STATIC    ? ""
                      : io.dynamism == PTERUN_SHAPE_BOUNDED ? " (upper bound)"
                                                            : " (any size)",
                      pterun_dtype_name(a->dtype), got, paths->items[i]);
    }
    /* .npy is row-major; lay the data out in the input's dim order. */
    if (!cli_dim_order_is_identity(io.rank, io.dim_order) && a->numel > 1) {
      int64_t src_st[PTERUN_MAX_RANK], dst_st[PTERUN_MAX_RANK];
      size_t itemsize = pterun_dtype_size(a->dtype);
      void* buf = malloc(a->nbytes ? a->nbytes : 1);
      if (buf == NULL) return cli_fail(NULL, PTERUN_STATUS_OUT_OF_MEMORY, "out of memory");
      pterun_dim_order_strides((uint32_t)(a->rank), a->shape, NULL, src_st);
      pterun_dim_order_strides((uint32_t)(a->rank), a->shape, io.dim_order, dst_st);
      cli_strided_copy(buf, dst_st, a->data, src_st, a->rank, a->shape, itemsize);
      free(a->alloc_);
      a->alloc_ = buf;
      a->data = buf;
    }
  }
  return CLI_EXIT_OK;
}

int cli_inputs_bind(cli_session* s, pterun_method* m, size_t method, cli_inputs* in) {
  pterun_status st;
  size_t i;
  for (i = 0; i < in->count; ++i) {
    pterun_io_info io;
    const cli_npy* a = &in->arrays[i];
    if ((st = pterun_program_method_input(s->program, method, i, &io)) != PTERUN_STATUS_OK)
      return cli_fail(&s->log, st, "cannot query input %zu", i);
    cli_log_reset(&s->log);
    if (io.tag == PTERUN_VALUE_TENSOR) {
      pterun_tensor_view v;
      v.dtype = io.dtype;
      v.rank = io.rank;
      v.sizes = a->shape;
      v.dim_order = cli_dim_order_is_identity(io.rank, io.dim_order) ? NULL : io.dim_order;
      v.data = a->data;
      v.nbytes = a->nbytes;
      st = pterun_method_set_input(m, i, &v);
    } else {
      pterun_value v;
      int from_file = a->data != NULL && a->numel == 1;
      memset(&v, 0, sizeof v);
      v.tag = io.tag;
      switch (io.tag) {
        case PTERUN_VALUE_NONE: break;
        case PTERUN_VALUE_INT:
          if (from_file && a->dtype == PTERUN_DTYPE_I64)
            memcpy(&v.u.i, a->data, 8);
          else
            v.u.i =
                from_file ? cli_double_to_i64(cli_elem_get(a->dtype, a->data, 0)) : io.int_value;
          break;
        case PTERUN_VALUE_DOUBLE:
          v.u.d = from_file ? cli_elem_get(a->dtype, a->data, 0) : io.double_value;
          break;
        case PTERUN_VALUE_BOOL:
          v.u.b = from_file ? cli_elem_get(a->dtype, a->data, 0) != 0.0 : io.int_value != 0;
          break;
        default:
          return cli_fail(NULL, PTERUN_STATUS_NOT_SUPPORTED,
                          "input %zu is a %s; the CLI can only supply tensors and scalars", i,
                          tag_name(io.tag));
      }
      st = pterun_method_set_input_value(m, i, &v);
    }
    if (st != PTERUN_STATUS_OK)
      return cli_fail(&s->log, st, "cannot set input %zu from %s", i,
                      in->sources[i] ? in->sources[i] : "?");
  }
  return CLI_EXIT_OK;
}
