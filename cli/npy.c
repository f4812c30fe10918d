/* NumPy .npy reader and writer. See npy.h for what is accepted.
 * Depends only on pterun's headers (no library calls) so fuzzers and the
 * npycmp tool can link it alone. */
#include "cli/npy.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const unsigned char kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void
set_err(char* err, size_t err_size, const char* fmt, ...) {
  va_list ap;
  if (err == NULL || err_size == 0) return;
  va_start(ap, fmt);
  vsnprintf(err, err_size, fmt, ap);
  va_end(ap);
}

static int host_is_little(void) {
  const uint16_t one = 1;
  return *(const unsigned char*)&one == 1;
}

/* ---- dtype table ----------------------------------------------------------- */

typedef struct npy_type {
  char kind;     /* numpy type kind: f, i, u, b */
  size_t size;   /* bytes */
  int32_t dtype; /* pterun_dtype */
} npy_type;

static const npy_type kTypes[] = {
    {'f', 2, PTERUN_DTYPE_F16}, {'f', 4, PTERUN_DTYPE_F32}, {'f', 8, PTERUN_DTYPE_F64},
    {'i', 1, PTERUN_DTYPE_I8},  {'i', 2, PTERUN_DTYPE_I16}, {'i', 4, PTERUN_DTYPE_I32},
    {'i', 8, PTERUN_DTYPE_I64}, {'u', 1, PTERUN_DTYPE_U8},  {'u', 2, PTERUN_DTYPE_U16},
    {'u', 4, PTERUN_DTYPE_U32}, {'u', 8, PTERUN_DTYPE_U64}, {'b', 1, PTERUN_DTYPE_BOOL},
};
#define N_TYPES (sizeof kTypes / sizeof kTypes[0])

const char* cli_npy_descr(int32_t dtype) {
  /* Both byte orders, so the writer can label data in the host's order. */
  static const struct {
    int32_t dtype;
    const char* le;
    const char* be;
  } kDescr[] = {
      {PTERUN_DTYPE_F16, "<f2", ">f2"}, {PTERUN_DTYPE_F32, "<f4", ">f4"},
      {PTERUN_DTYPE_F64, "<f8", ">f8"}, {PTERUN_DTYPE_I8, "|i1", "|i1"},
      {PTERUN_DTYPE_I16, "<i2", ">i2"}, {PTERUN_DTYPE_I32, "<i4", ">i4"},
      {PTERUN_DTYPE_I64, "<i8", ">i8"}, {PTERUN_DTYPE_U8, "|u1", "|u1"},
      {PTERUN_DTYPE_U16, "<u2", ">u2"}, {PTERUN_DTYPE_U32, "<u4", ">u4"},
      {PTERUN_DTYPE_U64, "<u8", ">u8"}, {PTERUN_DTYPE_BOOL, "|b1", "|b1"},
  };
  size_t k;
  for (k = 0; k < sizeof kDescr / sizeof kDescr[0]; ++k)
    if (kDescr[k].dtype == dtype) return host_is_little() ? kDescr[k].le : kDescr[k].be;
  return NULL;
}

static size_t itemsize_of(int32_t dtype) {
  size_t k;
  for (k = 0; k < N_TYPES; ++k)
    if (kTypes[k].dtype == dtype) return kTypes[k].size;
  return 0;
}

void cli_npy_shape_str(uint32_t rank, const int64_t* shape, char* buf, size_t cap) {
  size_t used = 0;
  uint32_t k;
  int n;
  if (cap == 0) return;
  buf[0] = '\0';
  n = snprintf(buf, cap, "(");
  if (n < 0 || (size_t)n >= cap) return;
  used = (size_t)n;
  for (k = 0; k < rank; ++k) {
    n = snprintf(buf + used, cap - used, "%s%lld", k ? ", " : "", (long long)shape[k]);
    if (n < 0 || (size_t)n >= cap - used) return;
    used += (size_t)n;
  }
  snprintf(buf + used, cap - used, "%s)", rank == 1 ? "," : "");
}

/* ---- header dict parser ---------------------------------------------------- */

/* The header is a Python dict literal. Only the subset numpy writes is
 * accepted: quoted keys without escapes, a quoted descr, True/False and a
 * tuple of non-negative integers. */
typedef struct scanner {
  const char* p;
  const char* end;
  const char* name;
  char* err;
  size_t err_size;
} scanner;

static void skip_ws(scanner* s) {
  while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r')) ++s->p;
}

static int accept(scanner* s, char c) {
  skip_ws(s);
  if (s->p < s->end && *s->p == c) {
    ++s->p;
    return 1;
  }
  return 0;
}

/* What the scanner sees next, printable, for error messages. */
static const char* near(const scanner* s, char* buf, size_t cap) {
  size_t n = 0;
  const char* q = s->p;
  if (q >= s->end) return "end of header";
  while (q < s->end && n + 1 < cap && n < 12) {
    unsigned char c = (unsigned char)*q++;
    buf[n++] = (c >= 0x20 && c < 0x7f && c != '\'') ? (char)c : '?';
  }
  buf[n] = '\0';
  return buf;
}

static pterun_status syntax(scanner* s, const char* what) {
  char tok[16];
  const char* at = near(s, tok, sizeof tok);
  set_err(s->err, s->err_size, "%s: malformed .npy header: expected %s %s%s%s", s->name, what,
          s->p >= s->end ? "at " : "near '", at, s->p >= s->end ? "" : "'");
  return PTERUN_STATUS_INVALID_DATA;
}

static pterun_status parse_string(scanner* s, char* out, size_t cap, const char* what) {
  char quote;
  size_t n = 0;
  skip_ws(s);
  if (s->p >= s->end || (*s->p != '\'' && *s->p != '"')) return syntax(s, what);
  quote = *s->p++;
  while (s->p < s->end && *s->p != quote) {
    unsigned char c = (unsigned char)*s->p;
    if (c < 0x20 || c >= 0x7f || c == '\\') return syntax(s, "a plain ASCII string");
    if (n + 1 >= cap) {
      set_err(s->err, s->err_size, "%s: malformed .npy header: %s is too long", s->name, what);
      return PTERUN_STATUS_INVALID_DATA;
    }
    out[n++] = (char)c;
    ++s->p;
  }
  if (s->p >= s->end) return syntax(s, "a closing quote");
  ++s->p;
  out[n] = '\0';
  return PTERUN_STATUS_OK;
}

static int accept_word(scanner* s, const char* word) {
  size_t len = strlen(word);
  skip_ws(s);
  if ((size_t)(s->end - s->p) < len || memcmp(s->p, word, len) != 0) return 0;
  /* "Truex" is not True. */
  if ((size_t)(s->end - s->p) > len) {
    char c = s->p[len];
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')
      return 0;
  }
  s->p += len;
  return 1;
}

static pterun_status parse_dim(scanner* s, int64_t* out) {
  uint64_t v = 0;
  int digits = 0;
  skip_ws(s);
  if (s->p < s->end && *s->p == '-') {
    set_err(s->err, s->err_size, "%s: malformed .npy header: negative dimension in shape", s->name);
    return PTERUN_STATUS_INVALID_DATA;
  }
  while (s->p < s->end && *s->p >= '0' && *s->p <= '9') {
    unsigned d = (unsigned)(*s->p - '0');
    if (v > ((uint64_t)INT64_MAX - d) / 10) {
      set_err(s->err, s->err_size,
              "%s: malformed .npy header: dimension in shape does not fit in 64 bits", s->name);
      return PTERUN_STATUS_INVALID_DATA;
    }
    v = v * 10 + d;
    ++digits;
    ++s->p;
  }
  if (digits == 0) return syntax(s, "a dimension (non-negative integer)");
  if (s->p < s->end && *s->p == 'L') ++s->p; /* Python 2 long suffix (old numpy files) */
  *out = (int64_t)v;
  return PTERUN_STATUS_OK;
}

static pterun_status parse_shape(scanner* s, cli_npy_header* h) {
  pterun_status st;
  h->rank = 0;
  if (!accept(s, '(')) return syntax(s, "a shape tuple '('");
  if (accept(s, ')')) return PTERUN_STATUS_OK; /* () : 0-d */
  for (;;) {
    int64_t d = 0;
    if (h->rank >= PTERUN_MAX_RANK) {
      set_err(s->err, s->err_size, "%s: shape has more than %d dimensions", s->name,
              PTERUN_MAX_RANK);
      return PTERUN_STATUS_NOT_SUPPORTED;
    }
    if ((st = parse_dim(s, &d)) != PTERUN_STATUS_OK) return st;
    h->shape[h->rank++] = d;
    if (accept(s, ',')) {
      if (accept(s, ')')) return PTERUN_STATUS_OK;
      continue;
    }
    if (accept(s, ')')) {
      if (h->rank == 1) {
        /* Python reads "(3)" as the integer 3, not a tuple. */
        set_err(s->err, s->err_size,
                "%s: malformed .npy header: shape (%lld) is not a tuple (a 1-d shape is "
                "written (%lld,))",
                s->name, (long long)h->shape[0], (long long)h->shape[0]);
        return PTERUN_STATUS_INVALID_DATA;
      }
      return PTERUN_STATUS_OK;
    }
    return syntax(s, "',' or ')' in shape");
  }
}

static pterun_status map_descr(const char* descr, const char* name, cli_npy_header* h, char* err,
                               size_t err_size) {
  size_t len = strlen(descr), k;
  char order, kind;
  size_t size = 0;
  if (len >= 3 && len <= 4 && strchr("<>|=", descr[0]) != NULL) {
    order = descr[0];
    kind = descr[1];
    for (k = 2; k < len; ++k) {
      if (descr[k] < '0' || descr[k] > '9') {
        size = 0;
        break;
      }
      size = size * 10 + (size_t)(descr[k] - '0');
    }
    for (k = 0; size != 0 && k < N_TYPES; ++k) {
      if (kTypes[k].kind != kind || kTypes[k].size != size) continue;
      if (size > 1 && order == '|') {
        set_err(err, err_size, "%s: malformed .npy header: descr '%s' has no byte order", name,
                descr);
        return PTERUN_STATUS_INVALID_DATA;
      }
      h->dtype = kTypes[k].dtype;
      h->itemsize = size;
      h->swap_bytes =
          size > 1 && ((order == '<' && !host_is_little()) || (order == '>' && host_is_little()));
      return PTERUN_STATUS_OK;
    }
  }
  set_err(err, err_size,
          "%s: dtype '%s' is not supported (supported: float16/32/64, int8/16/32/64, "
          "uint8/16/32/64, bool)",
          name, descr);
  return PTERUN_STATUS_NOT_SUPPORTED;
}

static pterun_status parse_dict(scanner* s, cli_npy_header* h) {
  char key[32], descr[64];
  int have_descr = 0, have_fortran = 0, have_shape = 0;
  pterun_status st;
  if (!accept(s, '{')) return syntax(s, "'{'");
  while (!accept(s, '}')) {
    if ((st = parse_string(s, key, sizeof key, "a quoted key")) != PTERUN_STATUS_OK) return st;
    if (!accept(s, ':')) return syntax(s, "':' after a key");
    if (strcmp(key, "descr") == 0 && !have_descr) {
      skip_ws(s);
      if (s->p < s->end && *s->p == '[') {
        set_err(s->err, s->err_size, "%s: structured dtypes are not supported", s->name);
        return PTERUN_STATUS_NOT_SUPPORTED;
      }
      if ((st = parse_string(s, descr, sizeof descr, "a quoted descr")) != PTERUN_STATUS_OK)
        return st;
      have_descr = 1;
    } else if (strcmp(key, "fortran_order") == 0 && !have_fortran) {
      if (accept_word(s, "True"))
        h->fortran_order = 1;
      else if (accept_word(s, "False"))
        h->fortran_order = 0;
      else
        return syntax(s, "True or False for fortran_order");
      have_fortran = 1;
    } else if (strcmp(key, "shape") == 0 && !have_shape) {
      if ((st = parse_shape(s, h)) != PTERUN_STATUS_OK) return st;
      have_shape = 1;
    } else if (strcmp(key, "descr") == 0 || strcmp(key, "fortran_order") == 0 ||
               strcmp(key, "shape") == 0) {
      set_err(s->err, s->err_size, "%s: malformed .npy header: key '%s' appears twice", s->name,
              key);
      return PTERUN_STATUS_INVALID_DATA;
    } else {
      set_err(s->err, s->err_size, "%s: malformed .npy header: unexpected key '%s'", s->name, key);
      return PTERUN_STATUS_INVALID_DATA;
    }
    if (accept(s, ',')) continue;
    if (accept(s, '}')) break;
    return syntax(s, "',' or '}'");
  }
  skip_ws(s);
  if (s->p != s->end) return syntax(s, "only padding after '}'");
  if (!have_descr || !have_fortran || !have_shape) {
    set_err(s->err, s->err_size, "%s: malformed .npy header: missing key '%s'", s->name,
            !have_descr     ? "descr"
            : !have_fortran ? "fortran_order"
                            : "shape");
    return PTERUN_STATUS_INVALID_DATA;
  }
  return map_descr(descr, s->name, h, s->err, s->err_size);
}

pterun_status cli_npy_parse_header(const void* buf, size_t size, const char* name,
                                   cli_npy_header* out, char* err, size_t err_size) {
  const unsigned char* b = (const unsigned char*)buf;
  size_t prefix, hlen;
  uint64_t numel = 1, nbytes;
  uint32_t k;
  char shp[256];
  scanner s;
  pterun_status st;
  cli_npy_header h;

  if (name == NULL) name = "<buffer>";
  memset(&h, 0, sizeof h);
  memset(out, 0, sizeof *out);
  if (b == NULL || size < 10) {
    set_err(err, err_size, "%s: not a .npy file (only %zu bytes)", name, b ? size : 0);
    return PTERUN_STATUS_INVALID_DATA;
  }
  if (memcmp(b, kMagic, sizeof kMagic) != 0) {
    set_err(err, err_size, "%s: not a .npy file (bad magic)", name);
    return PTERUN_STATUS_INVALID_DATA;
  }
  h.major = b[6];
  h.minor = b[7];
  if (h.major == 1 && h.minor == 0) {
    prefix = 10;
    hlen = (size_t)b[8] | ((size_t)b[9] << 8);
  } else if ((h.major == 2 || h.major == 3) && h.minor == 0) {
    if (size < 12) {
      set_err(err, err_size, "%s: truncated .npy preamble (%zu bytes)", name, size);
      return PTERUN_STATUS_INVALID_DATA;
    }
    prefix = 12;
    hlen = (size_t)b[8] | ((size_t)b[9] << 8) | ((size_t)b[10] << 16) | ((size_t)b[11] << 24);
  } else {
    set_err(err, err_size, "%s: .npy format version %d.%d is not supported (1.0, 2.0, 3.0 are)",
            name, h.major, h.minor);
    return PTERUN_STATUS_NOT_SUPPORTED;
  }
  if (hlen > size - prefix) {
    set_err(err, err_size, "%s: header length %zu runs past the end of the file (%zu bytes)", name,
            hlen, size);
    return PTERUN_STATUS_INVALID_DATA;
  }
  s.p = (const char*)b + prefix;
  s.end = s.p + hlen;
  s.name = name;
  s.err = err;
  s.err_size = err_size;
  if ((st = parse_dict(&s, &h)) != PTERUN_STATUS_OK) return st;

  /* prod(shape) * itemsize must fit in size_t (and int64 for tensors). Any
   * zero dimension makes the product 0 however large the others are. */
  for (k = 0; k < h.rank; ++k)
    if (h.shape[k] == 0) numel = 0;
  for (k = 0; numel != 0 && k < h.rank; ++k) {
    uint64_t d = (uint64_t)h.shape[k];
    if (numel > (uint64_t)INT64_MAX / d) {
      cli_npy_shape_str(h.rank, h.shape, shp, sizeof shp);
      set_err(err, err_size, "%s: shape %s has too many elements (overflow)", name, shp);
      return PTERUN_STATUS_INVALID_DATA;
    }
    numel *= d;
  }
  if (numel > SIZE_MAX / h.itemsize || numel > (uint64_t)INT64_MAX / h.itemsize) {
    cli_npy_shape_str(h.rank, h.shape, shp, sizeof shp);
    set_err(err, err_size, "%s: shape %s is too large (byte count overflows)", name, shp);
    return PTERUN_STATUS_INVALID_DATA;
  }
  nbytes = numel * h.itemsize;
  h.numel = (size_t)numel;
  h.data_offset = prefix + hlen;
  h.data_nbytes = (size_t)nbytes;
  if (size - h.data_offset != h.data_nbytes) {
    cli_npy_shape_str(h.rank, h.shape, shp, sizeof shp);
    set_err(err, err_size, "%s: header says shape %s = %zu bytes but file has %zu bytes of data",
            name, shp, h.data_nbytes, size - h.data_offset);
    return PTERUN_STATUS_INVALID_DATA;
  }
  *out = h;
  return PTERUN_STATUS_OK;
}

/* ---- converting the data --------------------------------------------------- */

static void byteswap(unsigned char* p, size_t numel, size_t itemsize) {
  size_t i, j;
  for (i = 0; i < numel; ++i, p += itemsize) {
    for (j = 0; j < itemsize / 2; ++j) {
      unsigned char t = p[j];
      p[j] = p[itemsize - 1 - j];
      p[itemsize - 1 - j] = t;
    }
  }
}

/* Column-major src -> row-major dst. Walks dst in order with a multi-index
 * and keeps the matching Fortran offset up to date incrementally. */
static void fortran_to_c(const unsigned char* src, unsigned char* dst, const cli_npy_header* h) {
  size_t idx[PTERUN_MAX_RANK] = {0}, fstride[PTERUN_MAX_RANK];
  size_t off = 0, i, st = 1;
  int k;
  for (k = 0; k < (int)h->rank; ++k) {
    fstride[k] = st;
    st *= (size_t)h->shape[k];
  }
  for (i = 0; i < h->numel; ++i) {
    memcpy(dst + i * h->itemsize, src + off * h->itemsize, h->itemsize);
    for (k = (int)h->rank - 1; k >= 0; --k) {
      if (++idx[k] < (size_t)h->shape[k]) {
        off += fstride[k];
        break;
      }
      off -= (idx[k] - 1) * fstride[k];
      idx[k] = 0;
    }
  }
}

static pterun_status check_bools(const unsigned char* p, size_t n, const char* name, char* err,
                                 size_t err_size) {
  size_t i;
  for (i = 0; i < n; ++i) {
    if (p[i] > 1) {
      set_err(err, err_size, "%s: bool element %zu is 0x%02x (must be 0 or 1)", name, i, p[i]);
      return PTERUN_STATUS_INVALID_DATA;
    }
  }
  return PTERUN_STATUS_OK;
}

/* Fills `out` from a parsed image. `owned` (may be NULL) is a malloc'd block
 * holding the image that can be adopted when no conversion is needed. */
static pterun_status finish_read(const unsigned char* image, void* owned, const cli_npy_header* h,
                                 const char* name, cli_npy* out, char* err, size_t err_size) {
  const unsigned char* src = image + h->data_offset;
  unsigned char* dst;
  pterun_status st;
  int convert = h->swap_bytes || (h->fortran_order && h->rank > 1);

  if (h->dtype == PTERUN_DTYPE_BOOL &&
      (st = check_bools(src, h->data_nbytes, name, err, err_size)) != PTERUN_STATUS_OK)
    return st;
  out->dtype = h->dtype;
  out->rank = h->rank;
  memcpy(out->shape, h->shape, sizeof out->shape);
  out->numel = h->numel;
  out->nbytes = h->data_nbytes;
  /* Adopt the file buffer when the data needs no change and is aligned. */
  if (owned != NULL && !convert && h->data_nbytes > 0 && h->data_offset % 16 == 0) {
    out->alloc_ = owned;
    out->data = (unsigned char*)owned + h->data_offset;
    return PTERUN_STATUS_OK;
  }
  dst = (unsigned char*)malloc(h->data_nbytes ? h->data_nbytes : 1);
  if (dst == NULL) {
    set_err(err, err_size, "%s: out of memory for %zu bytes of data", name, h->data_nbytes);
    memset(out, 0, sizeof *out);
    return PTERUN_STATUS_OUT_OF_MEMORY;
  }
  if (h->fortran_order && h->rank > 1)
    fortran_to_c(src, dst, h);
  else if (h->data_nbytes)
    memcpy(dst, src, h->data_nbytes);
  if (h->swap_bytes) byteswap(dst, h->numel, h->itemsize);
  out->alloc_ = dst;
  out->data = dst;
  free(owned);
  return PTERUN_STATUS_OK;
}

pterun_status cli_npy_read_buffer(const void* buf, size_t size, const char* name, cli_npy* out,
                                  char* err, size_t err_size) {
  cli_npy_header h;
  pterun_status st;
  memset(out, 0, sizeof *out);
  if (name == NULL) name = "<buffer>";
  if ((st = cli_npy_parse_header(buf, size, name, &h, err, err_size)) != PTERUN_STATUS_OK)
    return st;
  return finish_read((const unsigned char*)buf, NULL, &h, name, out, err, err_size);
}

pterun_status cli_npy_read_file(const char* path, cli_npy* out, char* err, size_t err_size) {
  struct stat sb;
  unsigned char* image = NULL;
  size_t size, got = 0;
  cli_npy_header h;
  pterun_status st;
  int fd;

  memset(out, 0, sizeof *out);
  fd = open(path, O_RDONLY);
  if (fd < 0) {
    set_err(err, err_size, "%s: cannot open: %s", path, strerror(errno));
    return PTERUN_STATUS_IO_ERROR;
  }
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
    set_err(err, err_size, "%s: not a regular file", path);
    close(fd);
    return PTERUN_STATUS_IO_ERROR;
  }
  if ((uint64_t)sb.st_size > (uint64_t)SIZE_MAX - 1) {
    set_err(err, err_size, "%s: file too large", path);
    close(fd);
    return PTERUN_STATUS_IO_ERROR;
  }
  size = (size_t)sb.st_size;
  image = (unsigned char*)malloc(size ? size : 1);
  if (image == NULL) {
    set_err(err, err_size, "%s: out of memory reading %zu bytes", path, size);
    close(fd);
    return PTERUN_STATUS_OUT_OF_MEMORY;
  }
  while (got < size) {
    ssize_t n = read(fd, image + got, size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      set_err(err, err_size, "%s: read failed: %s", path, n < 0 ? strerror(errno) : "file shrank");
      free(image);
      close(fd);
      return PTERUN_STATUS_IO_ERROR;
    }
    got += (size_t)n;
  }
  close(fd);
  if ((st = cli_npy_parse_header(image, size, path, &h, err, err_size)) != PTERUN_STATUS_OK) {
    free(image);
    return st;
  }
  st = finish_read(image, image, &h, path, out, err, err_size);
  if (st != PTERUN_STATUS_OK) free(image);
  return st;
}

void cli_npy_free(cli_npy* a) {
  if (a == NULL) return;
  free(a->alloc_);
  memset(a, 0, sizeof *a);
}

/* ---- writer ---------------------------------------------------------------- */

pterun_status cli_npy_format_header(int32_t dtype, uint32_t rank, const int64_t* shape, char* buf,
                                    size_t cap, size_t* len_out, char* err, size_t err_size) {
  const char* descr = cli_npy_descr(dtype);
  char dict[CLI_NPY_MAX_PREAMBLE], shp[512];
  int n;
  size_t dlen, total, prefix = 10;
  uint32_t k;

  if (descr == NULL) {
    set_err(err, err_size, "dtype %d has no numpy equivalent", (int)dtype);
    return PTERUN_STATUS_NOT_SUPPORTED;
  }
  if (rank > PTERUN_MAX_RANK) {
    set_err(err, err_size, "rank %u is larger than %d", rank, PTERUN_MAX_RANK);
    return PTERUN_STATUS_INVALID_ARGUMENT;
  }
  for (k = 0; k < rank; ++k) {
    if (shape[k] < 0) {
      set_err(err, err_size, "negative dimension %lld", (long long)shape[k]);
      return PTERUN_STATUS_INVALID_ARGUMENT;
    }
  }
  cli_npy_shape_str(rank, shape, shp, sizeof shp);
  n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr,
               shp);
  if (n < 0 || (size_t)n >= sizeof dict) {
    set_err(err, err_size, "npy header too long");
    return PTERUN_STATUS_INTERNAL;
  }
  dlen = (size_t)n;
  /* Pad with spaces and one '\n' so the data starts at a multiple of 64.
   * Headers here are short, so version 2.0 is needed only in theory. */
  if (dlen + 1 + prefix > 65535 + 10) prefix = 12;
  total = (prefix + dlen + 1 + 63) / 64 * 64;
  if (total > cap) {
    set_err(err, err_size, "npy header buffer too small");
    return PTERUN_STATUS_INTERNAL;
  }
  memcpy(buf, kMagic, sizeof kMagic);
  buf[6] = (char)(prefix == 10 ? 1 : 2);
  buf[7] = 0;
  {
    size_t hlen = total - prefix;
    buf[8] = (char)(hlen & 0xff);
    buf[9] = (char)((hlen >> 8) & 0xff);
    if (prefix == 12) {
      buf[10] = (char)((hlen >> 16) & 0xff);
      buf[11] = (char)((hlen >> 24) & 0xff);
    }
  }
  memcpy(buf + prefix, dict, dlen);
  memset(buf + prefix + dlen, ' ', total - prefix - dlen - 1);
  buf[total - 1] = '\n';
  *len_out = total;
  return PTERUN_STATUS_OK;
}

pterun_status cli_npy_write_file(const char* path, int32_t dtype, uint32_t rank,
                                 const int64_t* shape, const void* data, size_t nbytes, char* err,
                                 size_t err_size) {
  char pre[CLI_NPY_MAX_PREAMBLE];
  size_t plen, itemsize = itemsize_of(dtype), numel = 1;
  uint32_t k;
  pterun_status st;
  FILE* f;

  if ((st = cli_npy_format_header(dtype, rank, shape, pre, sizeof pre, &plen, err, err_size)) !=
      PTERUN_STATUS_OK)
    return st;
  for (k = 0; k < rank; ++k) {
    if (shape[k] != 0 && numel > SIZE_MAX / (size_t)shape[k] / itemsize) {
      set_err(err, err_size, "%s: shape too large", path);
      return PTERUN_STATUS_INVALID_ARGUMENT;
    }
    numel *= (size_t)shape[k];
  }
  if (numel * itemsize != nbytes) {
    set_err(err, err_size, "%s: %zu bytes of data do not match the shape (%zu expected)", path,
            nbytes, numel * itemsize);
    return PTERUN_STATUS_INVALID_ARGUMENT;
  }
  f = fopen(path, "wb");
  if (f == NULL) {
    set_err(err, err_size, "%s: cannot create: %s", path, strerror(errno));
    return PTERUN_STATUS_IO_ERROR;
  }
  if (fwrite(pre, 1, plen, f) != plen || (nbytes && fwrite(data, 1, nbytes, f) != nbytes)) {
    set_err(err, err_size, "%s: write failed: %s", path, strerror(errno));
    fclose(f);
    return PTERUN_STATUS_IO_ERROR;
  }
  if (fclose(f) != 0) {
    set_err(err, err_size, "%s: write failed: %s", path, strerror(errno));
    return PTERUN_STATUS_IO_ERROR;
  }
  return PTERUN_STATUS_OK;
}
