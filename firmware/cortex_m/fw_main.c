/* The firmware's application: runs one embedded ExecuTorch program (a .pte
 * linked into flash) on one embedded .npy input and prints every output
 * element as hex bits, so the emulated Cortex-M run and the host run of this
 * same file can be compared byte for byte. No file system, no threads, no
 * malloc: every allocation comes from one caller arena (a bump allocator). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "pterun/kernels/cortex_m.h"
#include "pterun/kernels/portable.h"
#include "pterun/kernels/quantized.h"
#include "pterun/optimize.h"
#include "pterun/pterun.h"

void fw_write(const char* s, uint32_t n);

extern const uint8_t fw_program[];
extern const uint8_t fw_program_end[];
extern const uint8_t fw_input[];
extern const uint8_t fw_input_end[];

#ifndef FW_ARENA_BYTES
#define FW_ARENA_BYTES (384u * 1024u)
#endif
static _Alignas(16) uint8_t g_arena[FW_ARENA_BYTES];
static size_t g_used, g_peak;

static void* arena_alloc(void* ctx, size_t size, size_t alignment) {
  size_t at = (g_used + alignment - 1) & ~(alignment - 1);
  (void)ctx;
  if (at > sizeof g_arena || size > sizeof g_arena - at) return NULL;
  g_used = at + size;
  if (g_used > g_peak) g_peak = g_used;
  return g_arena + at;
}
static void arena_free(void* ctx, void* p) {
  (void)ctx;
  (void)p; /* released all at once: the firmware loads one program */
}
static const pterun_allocator kArena = {NULL, arena_alloc, arena_free};

static void put(const char* s) {
  fw_write(s, (uint32_t)strlen(s));
}
static void put_hex(uint64_t v, int digits) {
  char b[17];
  int i;
  for (i = digits - 1; i >= 0; --i, v >>= 4) b[i] = "0123456789abcdef"[v & 15];
  fw_write(b, (uint32_t)digits);
}
static void put_dec(uint64_t v) {
  char b[21];
  int i = 20;
  b[i] = 0;
  do b[--i] = (char)('0' + v % 10);
  while ((v /= 10) != 0 && i > 0);
  put(b + i);
}

static void log_fn(void* ctx, pterun_log_level level, const char* msg) {
  (void)ctx;
  (void)level;
  put("pterun: ");
  put(msg);
  put("\n");
}

/* The data of a version-1 .npy image (header checked only for its length). */
static const uint8_t* npy_data(const uint8_t* npy, size_t size, size_t* nbytes) {
  size_t hlen;
  if (size < 10 || memcmp(npy, "\x93NUMPY\x01\x00", 8) != 0) return NULL;
  hlen = (size_t)npy[8] | ((size_t)npy[9] << 8);
  if (10 + hlen > size) return NULL;
  *nbytes = size - 10 - hlen;
  return npy + 10 + hlen;
}

static int fail(const char* what, pterun_status st) {
  put("error: ");
  put(what);
  put(": ");
  put(pterun_status_str(st));
  put("\n");
  return 1;
}

int main(void) {
  const pterun_logger logger = {log_fn, NULL, PTERUN_LOG_WARNING};
  pterun_registry* reg = NULL;
  pterun_program* prog = NULL;
  pterun_method* m = NULL;
  pterun_load_options lo = PTERUN_LOAD_OPTIONS_INIT;
  pterun_method_options mo = PTERUN_METHOD_OPTIONS_INIT;
  pterun_io_info info;
  pterun_status st;
  const uint8_t* in;
  size_t in_bytes = 0, i;
  int64_t k;

  put("pterun firmware: ");
  put(PTERUN_VERSION_STRING);
  put("\n");
  st = pterun_registry_create(&kArena, &logger, &reg);
  if (st != PTERUN_STATUS_OK) return fail("registry", st);
  if ((st = pterun_registry_set_optimizer(reg, pterun_optimizer_default())) != PTERUN_STATUS_OK ||
      (st = pterun_registry_add(reg, pterun_kernels_portable())) != PTERUN_STATUS_OK ||
      (st = pterun_registry_add(reg, pterun_kernels_quantized())) != PTERUN_STATUS_OK ||
      (st = pterun_registry_add(reg, pterun_kernels_cortex_m())) != PTERUN_STATUS_OK)
    return fail("kernels", st);
  lo.logger = logger;
  lo.allocator = &kArena;
  st = pterun_program_load_buffer(fw_program, (size_t)(fw_program_end - fw_program), &lo, &prog);
  if (st != PTERUN_STATUS_OK) return fail("program", st);
  mo.registry = reg;
  mo.allocator = &kArena;
  mo.scratch_bytes = 16u * 1024u;
  if ((st = pterun_method_load(prog, "forward", &mo, &m)) != PTERUN_STATUS_OK)
    return fail("method", st);
  if ((st = pterun_program_method_input(prog, 0, 0, &info)) != PTERUN_STATUS_OK)
    return fail("input info", st);
  in = npy_data(fw_input, (size_t)(fw_input_end - fw_input), &in_bytes);
  if (in == NULL || in_bytes != info.nbytes)
    return fail("input .npy", PTERUN_STATUS_INVALID_ARGUMENT);
  {
    /* the .npy holds the logical (row-major) layout */
    static const uint8_t kRowMajor[PTERUN_MAX_RANK] = {0, 1, 2, 3, 4, 5, 6, 7};
    pterun_tensor_view v = {info.dtype, info.rank, info.sizes, kRowMajor, (void*)in, in_bytes};
    if ((st = pterun_method_set_input(m, 0, &v)) != PTERUN_STATUS_OK) return fail("set input", st);
  }
  if ((st = pterun_method_execute(m)) != PTERUN_STATUS_OK) return fail("execute", st);
  for (i = 0; i < pterun_method_output_count(m); ++i) {
    const pterun_value* out;
    const pterun_tensor* t;
    size_t es;
    if ((st = pterun_method_output(m, i, &out)) != PTERUN_STATUS_OK) return fail("output", st);
    if (out->tag != PTERUN_VALUE_TENSOR) continue;
    t = out->u.tensor;
    es = pterun_dtype_size(t->dtype);
    put("output ");
    put_dec(i);
    put(" ");
    put(pterun_dtype_name(t->dtype));
    put(" numel ");
    put_dec((uint64_t)t->numel);
    put(":");
    for (k = 0; k < t->numel; ++k) {
      uint64_t bits = 0;
      memcpy(&bits, (const uint8_t*)t->data + (size_t)k * es, es); /* little endian */
      put(" ");
      put_hex(bits, (int)(2 * es));
    }
    put("\n");
  }
  put("arena peak bytes: ");
  put_dec(g_peak);
  put("\n");
  pterun_method_destroy(m);
  pterun_program_destroy(prog);
  pterun_registry_destroy(reg);
  return 0;
}
