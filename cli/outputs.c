/* A method's outputs for run: written as .npy files, described on one line,
 * summarised (min, max, mean, std) for --json. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "cli/cli.h"
#include "cli/json.h"

/* mkdir -p: creates each missing component of `path`. */
int cli_make_dirs(const char* path) {
  char buf[4096];
  size_t n = strlen(path), k;
  if (n == 0 || n >= sizeof buf) {
    errno = ENAMETOOLONG;
    return -1;
  }
  memcpy(buf, path, n + 1);
  for (k = 1; k <= n; ++k) {
    if (buf[k] == '/' || buf[k] == '\0') {
      char c = buf[k];
      buf[k] = '\0';
      if (mkdir(buf, 0777) != 0 && errno != EEXIST) return -1;
      buf[k] = c;
    }
  }
  {
    struct stat sb;
    if (stat(path, &sb) != 0) return -1;
    if (!S_ISDIR(sb.st_mode)) {
      errno = ENOTDIR;
      return -1;
    }
  }
  return 0;
}

/* Writes one tensor as .npy in row-major order. bfloat16 (which numpy lacks)
 * is written as float32; quantized integer types as their storage integers. */
static int write_tensor(const char* path, const pterun_tensor* t, size_t index) {
  char err[CLI_NPY_ERR_SIZE];
  int32_t dtype = t->dtype;
  size_t itemsize = pterun_dtype_size(t->dtype), numel = (size_t)t->numel, k;
  void* buf = NULL;
  const void* data = t->data;
  pterun_status st;

  switch (t->dtype) {
    case PTERUN_DTYPE_QINT8: dtype = PTERUN_DTYPE_I8; break;
    case PTERUN_DTYPE_QUINT8:
    case PTERUN_DTYPE_BITS8: dtype = PTERUN_DTYPE_U8; break;
    case PTERUN_DTYPE_QINT32: dtype = PTERUN_DTYPE_I32; break;
    case PTERUN_DTYPE_BITS16: dtype = PTERUN_DTYPE_U16; break;
    default: break;
  }
  if (cli_npy_descr(dtype) == NULL && dtype != PTERUN_DTYPE_BF16)
    return cli_fail(NULL, PTERUN_STATUS_NOT_SUPPORTED,
                    "output %zu: dtype %s cannot be written as .npy", index,
                    pterun_dtype_name(t->dtype));
  if (numel > 0 && data == NULL)
    return cli_fail(NULL, PTERUN_STATUS_INTERNAL, "output %zu has no data", index);
  if (!pterun_tensor_is_contiguous(t) && numel > 1) {
    int64_t dst_st[PTERUN_MAX_RANK];
    buf = malloc(numel * itemsize);
    if (buf == NULL) return cli_fail(NULL, PTERUN_STATUS_OUT_OF_MEMORY, "out of memory");
    pterun_dim_order_strides((uint32_t)(t->rank), t->sizes, NULL, dst_st);
    cli_strided_copy(buf, dst_st, t->data, t->strides, t->rank, t->sizes, itemsize);
    data = buf;
  }
  if (dtype == PTERUN_DTYPE_BF16) {
    float* f = (float*)malloc(numel ? numel * sizeof(float) : 1);
    if (f == NULL) {
      free(buf);
      return cli_fail(NULL, PTERUN_STATUS_OUT_OF_MEMORY, "out of memory");
    }
    for (k = 0; k < numel; ++k) f[k] = (float)cli_elem_get(PTERUN_DTYPE_BF16, data, k);
    free(buf);
    buf = f;
    data = f;
    dtype = PTERUN_DTYPE_F32;
    itemsize = sizeof(float);
  }
  st = cli_npy_write_file(path, dtype, t->rank, t->sizes, data ? data : "", numel * itemsize, err,
                          sizeof err);
  free(buf);
  if (st != PTERUN_STATUS_OK) return cli_fail(NULL, st, "output %zu: %s", index, err);
  return CLI_EXIT_OK;
}

int cli_output_write(const char* dir, size_t i, const pterun_value* v, int* written) {
  char path[4096], err[CLI_NPY_ERR_SIZE];
  pterun_status st = PTERUN_STATUS_OK;
  int n = snprintf(path, sizeof path, "%s/output_%zu.npy", dir, i);
  *written = 0;
  if (n < 0 || (size_t)n >= sizeof path)
    return cli_fail(NULL, PTERUN_STATUS_INVALID_ARGUMENT, "output path too long");
  switch (v->tag) {
    case PTERUN_VALUE_TENSOR:
      if (write_tensor(path, v->u.tensor, i) != CLI_EXIT_OK) return CLI_EXIT_FAIL;
      *written = 1;
      return CLI_EXIT_OK;
    /* scalars become 0-d arrays */
    case PTERUN_VALUE_INT:
      st = cli_npy_write_file(path, PTERUN_DTYPE_I64, 0, NULL, &v->u.i, 8, err, sizeof err);
      break;
    case PTERUN_VALUE_DOUBLE:
      st = cli_npy_write_file(path, PTERUN_DTYPE_F64, 0, NULL, &v->u.d, 8, err, sizeof err);
      break;
    case PTERUN_VALUE_BOOL: {
      uint8_t b = v->u.b != 0;
      st = cli_npy_write_file(path, PTERUN_DTYPE_BOOL, 0, NULL, &b, 1, err, sizeof err);
      break;
    }
    default: return CLI_EXIT_OK; /* None, strings and lists have no .npy form; summary says so */
  }
  if (st != PTERUN_STATUS_OK) return cli_fail(NULL, st, "output %zu: %s", i, err);
  *written = 1;
  return CLI_EXIT_OK;
}

/* "float32 (2, 3) [0.5, 1, ...]" for a tensor, the value for a scalar. */
void cli_value_describe(const pterun_value* v, char* buf, size_t cap) {
  size_t used = 0, k, shown;
  char shp[256], e[64];
  int n;
  switch (v->tag) {
    case PTERUN_VALUE_TENSOR: {
      const pterun_tensor* t = v->u.tensor;
      int64_t st[PTERUN_MAX_RANK], idx[PTERUN_MAX_RANK] = {0};
      cli_npy_shape_str(t->rank, t->sizes, shp, sizeof shp);
      n = snprintf(buf, cap, "%s %s", pterun_dtype_name(t->dtype), shp);
      if (n < 0 || (size_t)n >= cap || t->data == NULL || !cli_elem_supported(t->dtype)) return;
      used = (size_t)n;
      memcpy(st, t->strides, sizeof st);
      shown = t->numel < 6 ? (size_t)t->numel : 6;
      for (k = 0; k < shown && used < cap; ++k) {
        /* leading elements in logical (row-major) order, via the strides */
        int64_t off = 0;
        int d;
        for (d = 0; d < (int)t->rank; ++d) off += idx[d] * st[d];
        cli_elem_format(t->dtype, t->data, (size_t)off, e, sizeof e);
        n = snprintf(buf + used, cap - used, "%s%s", k ? ", " : " [", e);
        if (n < 0) return;
        used += (size_t)n;
        for (d = (int)t->rank - 1; d >= 0; --d) {
          if (++idx[d] < t->sizes[d]) break;
          idx[d] = 0;
        }
      }
      if (used < cap && shown > 0)
        snprintf(buf + used, cap - used, "%s]", (size_t)t->numel > shown ? ", ..." : "");
      return;
    }
    case PTERUN_VALUE_INT: snprintf(buf, cap, "int %lld", (long long)v->u.i); return;
    case PTERUN_VALUE_DOUBLE: snprintf(buf, cap, "double %g", v->u.d); return;
    case PTERUN_VALUE_BOOL: snprintf(buf, cap, "bool %s", v->u.b ? "true" : "false"); return;
    default: snprintf(buf, cap, "%s (not saved)", pterun_value_tag_name(v->tag)); return;
  }
}

int cli_tensor_stats_compute(const pterun_tensor* t, cli_tensor_stats* out) {
  /* Welford's running mean and variance: one pass, no overflow of a sum of
   * squares. Tensors are dense (strides a permutation of the sizes), so
   * storage order covers every element once. */
  double mean = 0, m2 = 0;
  size_t k, n = (size_t)t->numel;
  memset(out, 0, sizeof *out);
  if (t->data == NULL || !cli_elem_supported(t->dtype)) return 0;
  for (k = 0; k < n; ++k) {
    double x = cli_elem_get(t->dtype, t->data, k), d;
    if (isnan(x)) {
      out->nan_count++;
      continue;
    }
    if (isinf(x)) {
      out->inf_count++;
      continue;
    }
    if (out->count == 0 || x < out->min) out->min = x;
    if (out->count == 0 || x > out->max) out->max = x;
    out->count++;
    d = x - mean;
    mean += d / (double)out->count;
    m2 += d * (x - mean);
  }
  out->mean = mean;
  out->std = out->count > 0 ? sqrt(m2 / (double)out->count) : 0;
  return 1;
}

static void json_shape(cli_json* j, uint32_t rank, const int64_t* sizes) {
  uint32_t k;
  cli_json_begin_array(j);
  for (k = 0; k < rank; ++k) cli_json_int(j, sizes[k]);
  cli_json_end_array(j);
}

void cli_output_json(cli_json* j, size_t index, const pterun_value* v, const char* file) {
  char name[32];
  snprintf(name, sizeof name, "output_%zu", index);
  cli_json_begin_object(j);
  cli_json_key(j, "index");
  cli_json_uint(j, index);
  cli_json_key(j, "name");
  cli_json_string(j, name);
  cli_json_key(j, "kind");
  cli_json_string(j, pterun_value_tag_name(v->tag));
  cli_json_key(j, "dtype");
  if (v->tag == PTERUN_VALUE_TENSOR) {
    const pterun_tensor* t = v->u.tensor;
    cli_tensor_stats st;
    int have = cli_tensor_stats_compute(t, &st);
    cli_json_string(j, pterun_dtype_name(t->dtype));
    cli_json_key(j, "shape");
    json_shape(j, t->rank, t->sizes);
    cli_json_key(j, "numel");
    cli_json_int(j, t->numel);
    cli_json_key(j, "file");
    cli_json_string(j, file);
    cli_json_key(j, "value");
    cli_json_null(j);
    cli_json_key(j, "stats");
    if (!have) {
      cli_json_null(j);
    } else {
      /* min/max/mean/std over the finite elements (null when there are none) */
      int any = st.count > 0;
      cli_json_begin_object(j);
      cli_json_key(j, "min");
      any ? cli_json_double(j, st.min) : cli_json_null(j);
      cli_json_key(j, "max");
      any ? cli_json_double(j, st.max) : cli_json_null(j);
      cli_json_key(j, "mean");
      any ? cli_json_double(j, st.mean) : cli_json_null(j);
      cli_json_key(j, "std");
      any ? cli_json_double(j, st.std) : cli_json_null(j);
      cli_json_key(j, "nan_count");
      cli_json_uint(j, st.nan_count);
      cli_json_key(j, "inf_count");
      cli_json_uint(j, st.inf_count);
      cli_json_end_object(j);
    }
  } else {
    const char* dt = v->tag == PTERUN_VALUE_INT      ? "int64"
                     : v->tag == PTERUN_VALUE_DOUBLE ? "float64"
                     : v->tag == PTERUN_VALUE_BOOL   ? "bool"
                                                     : NULL;
    cli_json_string(j, dt);
    cli_json_key(j, "shape");
    if (dt != NULL) {
      cli_json_begin_array(j);
      cli_json_end_array(j);
    } else {
      cli_json_null(j);
    }
    cli_json_key(j, "numel");
    if (dt != NULL)
      cli_json_int(j, 1);
    else
      cli_json_null(j);
    cli_json_key(j, "file");
    cli_json_string(j, file);
    cli_json_key(j, "value");
    switch (v->tag) {
      case PTERUN_VALUE_INT: cli_json_int(j, v->u.i); break;
      case PTERUN_VALUE_DOUBLE: cli_json_double(j, v->u.d); break;
      case PTERUN_VALUE_BOOL: cli_json_bool(j, v->u.b); break;
      default: cli_json_null(j); break;
    }
    cli_json_key(j, "stats");
    cli_json_null(j);
  }
  cli_json_end_object(j);
}
