/* Tests for the CLI's .npy reader and writer (cli/npy.c): valid files of
 * every dtype and version, round trips, and malformed files that must be
 * rejected with a status and a message (never a crash). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/npy.h"
#include "tests/harness/pt_test.h"

static int pt_failures = 0;

/* Builds a .npy image: magic, version, length field, `header` verbatim, data. */
static size_t build(unsigned char* out, size_t cap, int major, const char* header, const void* data,
                    size_t nbytes) {
  size_t hlen = strlen(header), prefix = major == 1 ? 10 : 12;
  if (prefix + hlen + nbytes > cap) return 0;
  memcpy(out, "\x93NUMPY", 6);
  out[6] = (unsigned char)major;
  out[7] = 0;
  out[8] = (unsigned char)(hlen & 0xff);
  out[9] = (unsigned char)((hlen >> 8) & 0xff);
  if (major != 1) {
    out[10] = (unsigned char)((hlen >> 16) & 0xff);
    out[11] = (unsigned char)((hlen >> 24) & 0xff);
  }
  memcpy(out + prefix, header, hlen);
  if (nbytes) memcpy(out + prefix + hlen, data, nbytes);
  return prefix + hlen + nbytes;
}

static unsigned char g_buf[1 << 16];
static char g_err[CLI_NPY_ERR_SIZE];

/* Parses a built image; returns the status, fills *a (caller frees). */
static pterun_status parse(int major, const char* header, const void* data, size_t nbytes,
                           cli_npy* a) {
  size_t n = build(g_buf, sizeof g_buf, major, header, data, nbytes);
  g_err[0] = '\0';
  return cli_npy_read_buffer(g_buf, n, "t.npy", a, g_err, sizeof g_err);
}

static int test_every_dtype(void) {
  static const struct {
    const char* descr;
    int32_t dtype;
    size_t size;
  } kCases[] = {
      {"<f2", PTERUN_DTYPE_F16, 2}, {"<f4", PTERUN_DTYPE_F32, 4}, {"<f8", PTERUN_DTYPE_F64, 8},
      {"|i1", PTERUN_DTYPE_I8, 1},  {"<i2", PTERUN_DTYPE_I16, 2}, {"<i4", PTERUN_DTYPE_I32, 4},
      {"<i8", PTERUN_DTYPE_I64, 8}, {"|u1", PTERUN_DTYPE_U8, 1},  {"<u2", PTERUN_DTYPE_U16, 2},
      {"<u4", PTERUN_DTYPE_U32, 4}, {"<u8", PTERUN_DTYPE_U64, 8}, {"|b1", PTERUN_DTYPE_BOOL, 1},
      {"<i1", PTERUN_DTYPE_I8, 1},
  };
  unsigned char data[6 * 8];
  size_t k;
  memset(data, 1, sizeof data); /* 1s are valid bools too */
  for (k = 0; k < sizeof kCases / sizeof kCases[0]; ++k) {
    char hdr[128];
    cli_npy a;
    snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': (2, 3), }\n",
             kCases[k].descr);
    PT_CHECK_STATUS(parse(1, hdr, data, 6 * kCases[k].size, &a), PTERUN_STATUS_OK);
    PT_CHECK(a.dtype == kCases[k].dtype);
    PT_CHECK(a.rank == 2 && a.shape[0] == 2 && a.shape[1] == 3);
    PT_CHECK(a.numel == 6 && a.nbytes == 6 * kCases[k].size);
    PT_CHECK(memcmp(a.data, data, a.nbytes) == 0);
    cli_npy_free(&a);
    PT_CHECK(a.data == NULL);
  }
  return 0;
}

static int test_versions_and_shapes(void) {
  float v[3] = {1.f, 2.f, 3.f};
  cli_npy a;
  /* 2.0 and 3.0 use a 4-byte header length */
  PT_CHECK_STATUS(
      parse(2, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }\n", v, 12, &a),
      PTERUN_STATUS_OK);
  PT_CHECK(a.rank == 1 && a.shape[0] == 3 && ((float*)a.data)[2] == 3.f);
  cli_npy_free(&a);
  PT_CHECK_STATUS(
      parse(3, "{\"shape\": (3,), \"descr\": \"<f4\", \"fortran_order\": False}", v, 12, &a),
      PTERUN_STATUS_OK);
  cli_npy_free(&a);
  /* 0-d */
  PT_CHECK_STATUS(parse(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }\n", v, 4, &a),
                  PTERUN_STATUS_OK);
  PT_CHECK(a.rank == 0 && a.numel == 1 && ((float*)a.data)[0] == 1.f);
  cli_npy_free(&a);
  /* empty: a zero dimension makes huge others harmless */
  PT_CHECK_STATUS(parse(1,
                        "{'descr': '<f4', 'fortran_order': False, "
                        "'shape': (0, 9223372036854775807), }\n",
                        NULL, 0, &a),
                  PTERUN_STATUS_OK);
  PT_CHECK(a.numel == 0 && a.nbytes == 0 && a.data != NULL);
  cli_npy_free(&a);
  /* Python 2 long suffix */
  PT_CHECK_STATUS(parse(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3L,), }", v, 12, &a),
                  PTERUN_STATUS_OK);
  cli_npy_free(&a);
  return 0;
}

static int test_fortran_and_big_endian(void) {
  /* Column-major 2x3 holding logical [[0,1,2],[3,4,5]]: stored 0,3,1,4,2,5. */
  int32_t f[6] = {0, 3, 1, 4, 2, 5};
  unsigned char be[6 * 4];
  cli_npy a;
  int k;
  PT_CHECK_STATUS(
      parse(1, "{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }", f, sizeof f, &a),
      PTERUN_STATUS_OK);
  for (k = 0; k < 6; ++k) PT_CHECK(((int32_t*)a.data)[k] == k);
  cli_npy_free(&a);
  /* 3-d Fortran order: element (i,j,l) at i + 2j + 6l */
  {
    int32_t f3[24], want = 0;
    int i, j, l;
    for (i = 0; i < 2; ++i)
      for (j = 0; j < 3; ++j)
        for (l = 0; l < 4; ++l) f3[i + 2 * j + 6 * l] = i * 12 + j * 4 + l;
    PT_CHECK_STATUS(parse(1, "{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3, 4), }", f3,
                          sizeof f3, &a),
                    PTERUN_STATUS_OK);
    for (k = 0; k < 24; ++k, ++want) PT_CHECK(((int32_t*)a.data)[k] == want);
    cli_npy_free(&a);
  }
  /* big-endian int32 is byte-swapped */
  for (k = 0; k < 6; ++k) {
    be[4 * k] = 0;
    be[4 * k + 1] = 0;
    be[4 * k + 2] = 1;
    be[4 * k + 3] = (unsigned char)k;
  }
  PT_CHECK_STATUS(
      parse(1, "{'descr': '>i4', 'fortran_order': False, 'shape': (6,), }", be, sizeof be, &a),
      PTERUN_STATUS_OK);
  for (k = 0; k < 6; ++k) PT_CHECK(((int32_t*)a.data)[k] == 256 + k);
  cli_npy_free(&a);
  return 0;
}

/* Every case must fail with `want` and a message naming the file. */
typedef struct bad_case {
  const char* what;
  int major;
  const char* header;
  size_t nbytes;
  pterun_status want;
  const char* needle; /* expected substring of the message */
} bad_case;

static int test_malformed_headers(void) {
  static const bad_case kBad[] = {
      {"missing descr", 1, "{'fortran_order': False, 'shape': (2,), }", 8,
       PTERUN_STATUS_INVALID_DATA, "missing key 'descr'"},
      {"missing shape", 1, "{'descr': '<f4', 'fortran_order': False}", 4,
       PTERUN_STATUS_INVALID_DATA, "missing key 'shape'"},
      {"missing fortran_order", 1, "{'descr': '<f4', 'shape': (1,)}", 4, PTERUN_STATUS_INVALID_DATA,
       "fortran_order"},
      {"unknown key", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}", 4,
       PTERUN_STATUS_INVALID_DATA, "unexpected key 'x'"},
      {"duplicate key", 1, "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': ()}",
       4, PTERUN_STATUS_INVALID_DATA, "twice"},
      {"shape not a tuple", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': [2, 3]}", 24,
       PTERUN_STATUS_INVALID_DATA, "shape"},
      {"1-tuple without comma", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3)}", 12,
       PTERUN_STATUS_INVALID_DATA, "not a tuple"},
      {"negative dim", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3)}", 0,
       PTERUN_STATUS_INVALID_DATA, "negative"},
      {"non-numeric dim", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (a,)}", 0,
       PTERUN_STATUS_INVALID_DATA, "dimension"},
      {"unclosed shape", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3", 0,
       PTERUN_STATUS_INVALID_DATA, "shape"},
      {"dim past int64", 1,
       "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}", 0,
       PTERUN_STATUS_INVALID_DATA, "64 bits"},
      {"numel overflow", 1,
       "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4)}", 0,
       PTERUN_STATUS_INVALID_DATA, "overflow"},
      {"byte count overflow", 1,
       "{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904,)}", 0,
       PTERUN_STATUS_INVALID_DATA, "too large"},
      {"too many dims", 1,
       "{'descr': '|u1', 'fortran_order': False, "
       "'shape': (1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1)}",
       1, PTERUN_STATUS_NOT_SUPPORTED, "more than 16"},
      {"bad fortran value", 1, "{'descr': '<f4', 'fortran_order': 0, 'shape': ()}", 4,
       PTERUN_STATUS_INVALID_DATA, "True or False"},
      {"Truex", 1, "{'descr': '<f4', 'fortran_order': Truex, 'shape': ()}", 4,
       PTERUN_STATUS_INVALID_DATA, "True or False"},
      {"complex dtype", 1, "{'descr': '<c8', 'fortran_order': False, 'shape': ()}", 8,
       PTERUN_STATUS_NOT_SUPPORTED, "'<c8' is not supported"},
      {"V2 (bfloat16 guess)", 1, "{'descr': '|V2', 'fortran_order': False, 'shape': ()}", 2,
       PTERUN_STATUS_NOT_SUPPORTED, "not supported"},
      {"string dtype", 1, "{'descr': '|S4', 'fortran_order': False, 'shape': ()}", 4,
       PTERUN_STATUS_NOT_SUPPORTED, "not supported"},
      {"no byte order", 1, "{'descr': '|f4', 'fortran_order': False, 'shape': ()}", 4,
       PTERUN_STATUS_INVALID_DATA, "byte order"},
      {"structured dtype", 1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': ()}", 4,
       PTERUN_STATUS_NOT_SUPPORTED, "structured"},
      {"escape in string", 1, "{'descr': '<f\\4', 'fortran_order': False, 'shape': ()}", 4,
       PTERUN_STATUS_INVALID_DATA, "ASCII"},
      {"unterminated string", 1, "{'descr': '<f4, 'fortran_order': False, 'shape': ()}", 4,
       PTERUN_STATUS_INVALID_DATA, "malformed"},
      {"garbage after dict", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': ()} x", 4,
       PTERUN_STATUS_INVALID_DATA, "padding"},
      {"no braces", 1, "'descr': '<f4'", 4, PTERUN_STATUS_INVALID_DATA, "'{'"},
      {"empty header", 1, "", 4, PTERUN_STATUS_INVALID_DATA, "'{'"},
      {"missing colon", 1, "{'descr' '<f4', 'fortran_order': False, 'shape': ()}", 4,
       PTERUN_STATUS_INVALID_DATA, "':'"},
      {"data too short", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 20,
       PTERUN_STATUS_INVALID_DATA,
       "header says shape (2, 3) = 24 bytes but file has 20 bytes of data"},
      {"data too long", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 28,
       PTERUN_STATUS_INVALID_DATA, "28 bytes of data"},
      {"version 4.0", 4, "{'descr': '<f4', 'fortran_order': False, 'shape': ()}", 4,
       PTERUN_STATUS_NOT_SUPPORTED, "version 4.0"},
      {"version 0", 0, "{'descr': '<f4', 'fortran_order': False, 'shape': ()}", 4,
       PTERUN_STATUS_NOT_SUPPORTED, "version"},
  };
  static unsigned char zeros[64];
  size_t k;
  for (k = 0; k < sizeof kBad / sizeof kBad[0]; ++k) {
    cli_npy a;
    pterun_status st = parse(kBad[k].major, kBad[k].header, zeros, kBad[k].nbytes, &a);
    if (st != kBad[k].want || strstr(g_err, kBad[k].needle) == NULL ||
        strncmp(g_err, "t.npy: ", 7) != 0) {
      fprintf(stderr, "case '%s': got %s \"%s\", want %s with \"%s\"\n", kBad[k].what,
              pterun_status_name(st), g_err, pterun_status_name(kBad[k].want), kBad[k].needle);
      cli_npy_free(&a);
      return 1;
    }
    PT_CHECK(a.data == NULL); /* nothing allocated on failure */
  }
  return 0;
}

static int test_preamble_errors(void) {
  cli_npy a;
  unsigned char b[256];
  size_t n =
      build(b, sizeof b, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': ()}", "\0\0\0\0", 4);
  PT_CHECK(n > 0);
  /* bad magic */
  b[1] = 'X';
  PT_CHECK_STATUS(cli_npy_read_buffer(b, n, "m.npy", &a, g_err, sizeof g_err),
                  PTERUN_STATUS_INVALID_DATA);
  PT_CHECK(strstr(g_err, "m.npy: not a .npy file (bad magic)") != NULL);
  b[1] = 'N';
  /* truncated preamble */
  PT_CHECK_STATUS(cli_npy_read_buffer(b, 7, "m.npy", &a, g_err, sizeof g_err),
                  PTERUN_STATUS_INVALID_DATA);
  PT_CHECK_STATUS(cli_npy_read_buffer(NULL, 0, NULL, &a, g_err, sizeof g_err),
                  PTERUN_STATUS_INVALID_DATA);
  /* header length past EOF */
  b[8] = 0xff;
  b[9] = 0x7f;
  PT_CHECK_STATUS(cli_npy_read_buffer(b, n, "m.npy", &a, g_err, sizeof g_err),
                  PTERUN_STATUS_INVALID_DATA);
  PT_CHECK(strstr(g_err, "runs past the end") != NULL);
  /* bool bytes other than 0/1 */
  n = build(b, sizeof b, 1, "{'descr': '|b1', 'fortran_order': False, 'shape': (2,)}", "\x01\x02",
            2);
  PT_CHECK_STATUS(cli_npy_read_buffer(b, n, "m.npy", &a, g_err, sizeof g_err),
                  PTERUN_STATUS_INVALID_DATA);
  PT_CHECK(strstr(g_err, "bool element 1") != NULL);
  /* a NULL err buffer is allowed */
  PT_CHECK_STATUS(cli_npy_read_buffer(b, 3, "m.npy", &a, NULL, 0), PTERUN_STATUS_INVALID_DATA);
  return 0;
}

static int test_round_trip_buffer(void) {
  static const int32_t kDtypes[] = {PTERUN_DTYPE_F16, PTERUN_DTYPE_F32, PTERUN_DTYPE_F64,
                                    PTERUN_DTYPE_I8,  PTERUN_DTYPE_I16, PTERUN_DTYPE_I32,
                                    PTERUN_DTYPE_I64, PTERUN_DTYPE_U8,  PTERUN_DTYPE_U16,
                                    PTERUN_DTYPE_U32, PTERUN_DTYPE_U64, PTERUN_DTYPE_BOOL};
  static const int64_t kShapes[][3] = {{0, 0, 0}, {5, 0, 0}, {2, 3, 0}, {2, 0, 4}, {1, 2, 3}};
  static const uint32_t kRanks[] = {0, 1, 2, 3, 3};
  size_t d, s, i;
  for (d = 0; d < sizeof kDtypes / sizeof kDtypes[0]; ++d) {
    for (s = 0; s < sizeof kShapes / sizeof kShapes[0]; ++s) {
      char pre[CLI_NPY_MAX_PREAMBLE];
      size_t plen = 0, numel = 1, isz = pterun_dtype_size(kDtypes[d]), total;
      unsigned char* img;
      cli_npy a;
      uint32_t k;
      for (k = 0; k < kRanks[s]; ++k) numel *= (size_t)kShapes[s][k];
      PT_CHECK_STATUS(cli_npy_format_header(kDtypes[d], kRanks[s], kShapes[s], pre, sizeof pre,
                                            &plen, g_err, sizeof g_err),
                      PTERUN_STATUS_OK);
      PT_CHECK(plen % 64 == 0 && pre[plen - 1] == '\n' && pre[6] == 1);
      total = plen + numel * isz;
      img = (unsigned char*)malloc(total);
      PT_CHECK(img != NULL);
      memcpy(img, pre, plen);
      for (i = 0; i < numel * isz; ++i)
        img[plen + i] =
            kDtypes[d] == PTERUN_DTYPE_BOOL ? (unsigned char)(i & 1) : (unsigned char)(i * 7 + 3);
      if (cli_npy_read_buffer(img, total, "rt.npy", &a, g_err, sizeof g_err) != PTERUN_STATUS_OK) {
        fprintf(stderr, "round trip: %s\n", g_err);
        free(img);
        return 1;
      }
      PT_CHECK(a.dtype == kDtypes[d] && a.rank == kRanks[s] && a.numel == numel);
      PT_CHECK(memcmp(a.shape, kShapes[s], sizeof(int64_t) * kRanks[s]) == 0);
      PT_CHECK(numel == 0 || memcmp(a.data, img + plen, numel * isz) == 0);
      cli_npy_free(&a);
      free(img);
    }
  }
  /* bfloat16 has no numpy form */
  {
    char pre[CLI_NPY_MAX_PREAMBLE];
    size_t plen;
    PT_CHECK_STATUS(cli_npy_format_header(PTERUN_DTYPE_BF16, 0, NULL, pre, sizeof pre, &plen, g_err,
                                          sizeof g_err),
                    PTERUN_STATUS_NOT_SUPPORTED);
  }
  return 0;
}

static int test_round_trip_file(void) {
  char path[] = "/tmp/pterun_test_npy_XXXXXX";
  double v[6] = {0.5, -1.25, 3.0, 1e300, -0.0, 42.0};
  int64_t shape[2] = {3, 2};
  cli_npy a;
  int fd = mkstemp(path);
  PT_CHECK(fd >= 0);
  close(fd);
  PT_CHECK_STATUS(
      cli_npy_write_file(path, PTERUN_DTYPE_F64, 2, shape, v, sizeof v, g_err, sizeof g_err),
      PTERUN_STATUS_OK);
  PT_CHECK_STATUS(cli_npy_read_file(path, &a, g_err, sizeof g_err), PTERUN_STATUS_OK);
  PT_CHECK(a.dtype == PTERUN_DTYPE_F64 && a.rank == 2 && a.shape[0] == 3 && a.shape[1] == 2);
  PT_CHECK(memcmp(a.data, v, sizeof v) == 0);
  PT_CHECK(((uintptr_t)a.data & 15u) == 0);
  cli_npy_free(&a);
  /* size mismatch is refused */
  PT_CHECK_STATUS(cli_npy_write_file(path, PTERUN_DTYPE_F64, 2, shape, v, 40, g_err, sizeof g_err),
                  PTERUN_STATUS_INVALID_ARGUMENT);
  unlink(path);
  /* missing file */
  PT_CHECK_STATUS(cli_npy_read_file("/nonexistent/x.npy", &a, g_err, sizeof g_err),
                  PTERUN_STATUS_IO_ERROR);
  PT_CHECK(strstr(g_err, "/nonexistent/x.npy: cannot open") != NULL);
  return 0;
}

/* Every truncation and every single-byte change of a valid file must be
 * either accepted or rejected cleanly (ASan/UBSan builds catch the rest). */
static int test_mutations(void) {
  unsigned char img[256], mut[256];
  static const unsigned char kVals[] = {0, 1, 0x20, '(', ')', ',', '\'', '9', '}', 0x80, 0xff};
  int32_t data[6] = {1, 2, 3, 4, 5, 6};
  size_t n = build(img, sizeof img, 1,
                   "{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }       \n", data,
                   sizeof data);
  size_t len, pos, v;
  cli_npy a;
  PT_CHECK(n > 0);
  for (len = 0; len <= n; ++len) {
    memcpy(mut, img, len);
    if (cli_npy_read_buffer(mut, len, "f.npy", &a, g_err, sizeof g_err) == PTERUN_STATUS_OK) {
      PT_CHECK(len == n);
      cli_npy_free(&a);
    }
  }
  for (pos = 0; pos < n; ++pos) {
    for (v = 0; v < sizeof kVals; ++v) {
      memcpy(mut, img, n);
      mut[pos] = kVals[v];
      if (cli_npy_read_buffer(mut, n, "f.npy", &a, g_err, sizeof g_err) == PTERUN_STATUS_OK)
        cli_npy_free(&a);
      else
        PT_CHECK(g_err[0] != '\0');
    }
  }
  return 0;
}

/* Half and bfloat16 elements go through the kit's converters (checked
 * exhaustively in tests/kernels/test_kernel_util.c): values round-trip,
 * overflow gives inf, NaN stays NaN. */
static int test_half_conversions(void) {
  static const float kVals[] = {
      0.f, -0.f, 1.f, -2.5f, 65504.f, 6.1035156e-05f, 5.9604645e-08f, 0.333251953125f};
  uint16_t buf[2];
  size_t k;
  for (k = 0; k < sizeof kVals / sizeof kVals[0]; ++k) {
    cli_elem_set(PTERUN_DTYPE_F16, buf, 1, kVals[k]);
    PT_CHECK(cli_elem_get(PTERUN_DTYPE_F16, buf, 1) == kVals[k]);
  }
  cli_elem_set(PTERUN_DTYPE_BF16, buf, 0, 1.5);
  PT_CHECK(cli_elem_get(PTERUN_DTYPE_BF16, buf, 0) == 1.5);
  cli_elem_set(PTERUN_DTYPE_F16, buf, 0, 1e6);
  PT_CHECK(buf[0] == 0x7c00); /* overflow -> inf */
  cli_elem_set(PTERUN_DTYPE_F16, buf, 0, 1.0 + 1.0 / 4096.0);
  PT_CHECK(buf[0] == 0x3c00); /* rounds to even */
  cli_elem_set(PTERUN_DTYPE_F16, buf, 0, NAN);
  PT_CHECK(isnan(cli_elem_get(PTERUN_DTYPE_F16, buf, 0)));
  cli_elem_set(PTERUN_DTYPE_BF16, buf, 0, NAN);
  PT_CHECK(isnan(cli_elem_get(PTERUN_DTYPE_BF16, buf, 0)));
  return 0;
}

/* Row-major NCHW data laid out channels-last (dim order 0,2,3,1) and back. */
static int test_layout(void) {
  int64_t sizes[4] = {1, 2, 2, 3}, rm[4], cl[4];
  uint8_t order[4] = {0, 2, 3, 1};
  int32_t src[12], nhwc[12], back[12];
  int k, h, w, c;
  for (k = 0; k < 12; ++k) src[k] = k;
  pterun_dim_order_strides((uint32_t)(4), sizes, NULL, rm);
  pterun_dim_order_strides((uint32_t)(4), sizes, order, cl);
  PT_CHECK(rm[0] == 12 && rm[1] == 6 && rm[2] == 3 && rm[3] == 1);
  PT_CHECK(cl[1] == 1 && cl[3] == 2 && cl[2] == 6 && cl[0] == 12);
  cli_strided_copy(nhwc, cl, src, rm, 4, sizes, sizeof(int32_t));
  for (c = 0; c < 2; ++c)
    for (h = 0; h < 2; ++h)
      for (w = 0; w < 3; ++w) PT_CHECK(nhwc[(h * 3 + w) * 2 + c] == src[c * 6 + h * 3 + w]);
  cli_strided_copy(back, rm, nhwc, cl, 4, sizes, sizeof(int32_t));
  PT_CHECK(memcmp(back, src, sizeof src) == 0);
  PT_CHECK(cli_dim_order_is_identity(4, order) == 0);
  return 0;
}

int main(void) {
  PT_RUN(test_every_dtype);
  PT_RUN(test_versions_and_shapes);
  PT_RUN(test_fortran_and_big_endian);
  PT_RUN(test_malformed_headers);
  PT_RUN(test_preamble_errors);
  PT_RUN(test_round_trip_buffer);
  PT_RUN(test_round_trip_file);
  PT_RUN(test_mutations);
  PT_RUN(test_half_conversions);
  PT_RUN(test_layout);
  printf("%d passed, %d failed\n", 10 - pt_failures, pt_failures);
  return pt_failures ? 1 : 0;
}
