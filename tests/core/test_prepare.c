/* Load-time kernel preparation (kernel ABI 3) on a real exported program
 * (tests/fixtures/mlp: permute_copy + addmm + relu + softmax). A test library
 * is the portable one with addmm given a prepare that copies ("packs") its
 * constant mat2: the prepare sees constants and only the sizes of planned
 * tensors, its state reaches every execute, is counted in the method's
 * memory and comes from load-time allocations only; failures and hostile
 * prepares leave a clean refusal or an unchanged result. tests/fixtures/lstm
 * checks state shared by key (pterun_kernel_shared_state). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/npy.h"
#include "pterun/optimize.h"
#include "pterun/kernels/portable.h"
#include "pterun/pterun.h"
#include "tests/harness/pt_test.h"
#include "tests/harness/pt_values.h"

static int pt_failures;
static pterun_logger g_silent;

/* ---- a counting allocator that can be told to fail -------------------- */
static size_t g_allocs;
static int g_fail_next; /* 1: the next allocation returns NULL */
static void* count_alloc(void* ctx, size_t size, size_t align) {
  (void)ctx;
  ++g_allocs;
  if (g_fail_next) {
    g_fail_next = 0;
    return NULL;
  }
  size_t a = align < sizeof(void*) ? sizeof(void*) : align;
  void* p = NULL;
  return posix_memalign(&p, a, size ? size : 1) == 0 ? p : NULL;
}
static void count_free(void* ctx, void* p) {
  (void)ctx;
  free(p);
}
static const pterun_allocator kCounting = {NULL, count_alloc, count_free};

/* ---- the test addmm: portable addmm plus a prepare -------------------- */
enum { MODE_PACK, MODE_SHARED, MODE_SHARED_FAIL, MODE_NOTHING, MODE_FAIL, MODE_OOM, MODE_HOSTILE };
static int g_mode;
static pterun_kernel_fn g_addmm; /* the portable kernel */
static int g_prepares, g_hidden_ok, g_const_ok, g_bad_allocs_refused;
static size_t g_copied;                  /* bytes the prepares copied */
static int g_fresh, g_found, g_distinct; /* shared blocks made / reused; distinct weights */
static const void* g_seen[64];           /* the weights' data pointers seen so far */
static int g_executes, g_state_seen, g_state_matches, g_exec_alloc_refused;

typedef struct packed {
  const void* src; /* the constant it was made from (checked at execute) */
  int64_t rows, cols;
  float* copy; /* second block, linked from the first */
} packed;

/* The weight's transpose (folded at load) may be shown as a strided view of
 * the file's bytes (dim order [1, 0]); this prepare copies its bytes raw and
 * execute runs the portable addmm, which reads mat2 through its strides: it
 * may say so (pterun_kernel_packed_constant), and the view then stays. */
static int g_claims = 1, g_views_seen;
static void claim(pterun_kernel_context* ctx, const pterun_tensor* mat2) {
  g_views_seen += mat2->dim_order[0] == 1 && mat2->strides[0] == 1;
  if (g_claims) pterun_kernel_packed_constant(ctx, mat2, 0);
}

static PTERUN_KERNEL(t_addmm_prepare) {
  ++g_prepares;
  if (nargs != 7) return PTERUN_STATUS_OK;
  pterun_tensor* mat1 = args[1]->u.tensor;
  pterun_tensor* mat2 = args[2]->u.tensor;
  pterun_tensor* out = args[5]->u.tensor;
  // Planned tensors: sizes known, data hidden. The folded weight: readable.
  g_hidden_ok += mat1->data == NULL && mat1->capacity == 0 && mat1->numel > 0 &&
                 out->data == NULL && out->numel > 0;
  g_const_ok += mat2->data != NULL && mat2->nbytes == (size_t)mat2->numel * 4;
  g_bad_allocs_refused += pterun_kernel_state_alloc(ctx, 64, 3) == NULL &&
                          pterun_kernel_state_alloc(ctx, 64, 8192) == NULL &&
                          pterun_kernel_state_alloc(ctx, 0, 16) == NULL &&
                          pterun_kernel_state_alloc(ctx, SIZE_MAX - 8, 64) == NULL &&
                          pterun_kernel_preparing(ctx) && pterun_kernel_state(ctx) == NULL;
  switch (g_mode) {
    case MODE_NOTHING: return PTERUN_STATUS_OK;
    case MODE_FAIL:
      return pterun_kernel_fail(ctx, PTERUN_STATUS_NOT_SUPPORTED, "test prepare refuses");
    case MODE_OOM:
      g_fail_next = 1;
      if (pterun_kernel_state_alloc(ctx, sizeof(packed), 16) != NULL) return PTERUN_STATUS_INTERNAL;
      return pterun_kernel_fail(ctx, PTERUN_STATUS_OUT_OF_MEMORY, "no memory for packing");
    case MODE_HOSTILE:
      // Scribbles over what it was shown: the method must restore it.
      mat1->data = (void*)out;
      mat1->sizes[0] = 1;
      out->capacity = 1;
      args[3]->u.i = 12345; /* beta */
      return PTERUN_STATUS_OK;
    default: break;
  }
  packed* p = pterun_kernel_state_alloc(ctx, sizeof *p, _Alignof(packed));
  if (p == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
  if (g_mode == MODE_SHARED || g_mode == MODE_SHARED_FAIL) {
    int seen = 0, fresh = -1;
    for (int k = 0; k < g_distinct; ++k) seen |= g_seen[k] == mat2->data;
    if (!seen && g_distinct < 64) g_seen[g_distinct++] = mat2->data;
    const void* key[2] = {mat2->data, (const void*)(uintptr_t)mat2->nbytes};
    p->copy = pterun_kernel_shared_state(ctx, key, sizeof key, mat2->nbytes, 64, &fresh);
    if (p->copy == NULL || ((uintptr_t)p->copy & 63) != 0 || fresh < 0)
      return PTERUN_STATUS_OUT_OF_MEMORY;
    if (pterun_kernel_state(ctx) != NULL) return PTERUN_STATUS_INTERNAL; /* own state only */
    p->src = mat2->data;
    p->rows = mat2->sizes[0];
    p->cols = mat2->sizes[1];
    if (!fresh) {
      ++g_found;
      claim(ctx, mat2);
      return PTERUN_STATUS_OK;
    }
    ++g_fresh;
    // A prepare that fails after taking a fresh block: the load fails and
    // the block is never handed to anybody.
    if (g_mode == MODE_SHARED_FAIL && g_fresh == 2)
      return pterun_kernel_fail(ctx, PTERUN_STATUS_NOT_SUPPORTED, "test prepare refuses");
    memcpy(p->copy, mat2->data, mat2->nbytes);
    g_copied += mat2->nbytes;
    claim(ctx, mat2);
    return PTERUN_STATUS_OK;
  }
  p->copy = pterun_kernel_state_alloc(ctx, mat2->nbytes, 64);
  if (p->copy == NULL || ((uintptr_t)p->copy & 63) != 0) return PTERUN_STATUS_OUT_OF_MEMORY;
  if (pterun_kernel_state(ctx) != NULL) return PTERUN_STATUS_INTERNAL; /* execute-time only */
  memcpy(p->copy, mat2->data, mat2->nbytes);
  g_copied += mat2->nbytes;
  p->src = mat2->data;
  p->rows = mat2->sizes[0];
  p->cols = mat2->sizes[1];
  claim(ctx, mat2);
  return PTERUN_STATUS_OK;
}

static PTERUN_KERNEL(t_addmm) {
  ++g_executes;
  g_exec_alloc_refused +=
      pterun_kernel_state_alloc(ctx, 16, 16) == NULL && !pterun_kernel_preparing(ctx);
  const packed* p = pterun_kernel_state(ctx);
  if (p != NULL) {
    const pterun_tensor* mat2 = args[2]->u.tensor;
    ++g_state_seen;
    g_state_matches += p->src == mat2->data && p->rows == mat2->sizes[0] &&
                       p->cols == mat2->sizes[1] && memcmp(p->copy, mat2->data, mat2->nbytes) == 0;
  }
  return g_addmm(ctx, args, nargs);
}

static pterun_kernel g_table[512];
static pterun_kernel_library g_lib;

static pterun_registry* make_registry(void) {
  const pterun_kernel_library* pk = pterun_kernels_portable();
  if (pk->count > sizeof g_table / sizeof g_table[0]) return NULL;
  for (size_t k = 0; k < pk->count; ++k) {
    g_table[k] = pk->kernels[k];
    if (strcmp(g_table[k].op, "aten::addmm.out") == 0) {
      g_addmm = g_table[k].fn;
      g_table[k].fn = t_addmm;
      g_table[k].prepare = t_addmm_prepare;
    }
  }
  g_lib = (pterun_kernel_library){PTERUN_KERNEL_ABI_VERSION, "test_prepare", pk->count, g_table};
  pterun_registry* r = NULL;
  if (pterun_registry_create(NULL, &g_silent, &r) != PTERUN_STATUS_OK) return NULL;
  if (pterun_registry_set_optimizer(r, pterun_optimizer_default()) != PTERUN_STATUS_OK) return NULL;
  if (pterun_registry_add(r, &g_lib) != PTERUN_STATUS_OK || g_addmm == NULL) {
    pterun_registry_destroy(r);
    return NULL;
  }
  return r;
}

static char* fixture(const char* rel) {
  static char path[2][512];
  static int k;
  k ^= 1;
  snprintf(path[k], sizeof path[k], "%s/%s", PTERUN_FIXTURES_DIR, rel);
  return path[k];
}

static int g_release; /* run_fixture: pterun_method_options.release_packed_constants */

static void reset_counts(void) {
  g_prepares = g_hidden_ok = g_const_ok = g_bad_allocs_refused = 0;
  g_executes = g_state_seen = g_state_matches = g_exec_alloc_refused = 0;
  g_copied = 0;
  g_fresh = g_found = g_distinct = 0;
  g_views_seen = 0;
}

/* Loads fixture `dir` with `mode`, runs it `runs` times and checks the
 * result against ExecuTorch's. Returns the load status (OK: ran and matched). */
static pterun_status run_fixture(const char* dir, pterun_registry* reg, int mode, int no_prepare,
                                 int runs, size_t* runtime_bytes, int* mismatch) {
  char rel[3][128];
  snprintf(rel[0], sizeof rel[0], "%s/model.pte", dir);
  snprintf(rel[1], sizeof rel[1], "%s/forward_input_0.npy", dir);
  snprintf(rel[2], sizeof rel[2], "%s/forward_et_0.npy", dir);
  char err[CLI_NPY_ERR_SIZE];
  pterun_load_options lo = PTERUN_LOAD_OPTIONS_INIT;
  lo.logger = g_silent;
  pterun_program* p = NULL;
  pterun_status st = pterun_program_load_file(fixture(rel[0]), PTERUN_FILE_MMAP, &lo, &p);
  if (st != PTERUN_STATUS_OK) return st;
  pterun_method_options o = PTERUN_METHOD_OPTIONS_INIT;
  o.registry = reg;
  o.logger = g_silent;
  o.allocator = &kCounting;
  o.no_kernel_prepare = no_prepare;
  o.release_packed_constants = g_release;
  o.no_fusion = 1;                       /* addmm -> relu would become pterun::addmm_relu */
  pterun_method* m = (pterun_method*)&o; /* must be reset to NULL on failure */
  g_mode = mode;
  reset_counts();
  st = pterun_method_load(p, "forward", &o, &m);
  if (st != PTERUN_STATUS_OK) {
    *mismatch = m != NULL;
    pterun_program_destroy(p);
    return st;
  }
  pterun_method_memory(m, runtime_bytes, NULL);
  {
    /* without the scratch arena: sized from the prepares' reservations, the
     * default without prepares (compared apart in test_memory_query) */
    pterun_method_memory_info mi = PTERUN_METHOD_MEMORY_INFO_INIT;
    if (pterun_method_memory_parts(m, &mi) == PTERUN_STATUS_OK) *runtime_bytes -= mi.scratch_bytes;
  }
  cli_npy x = {0}, want = {0};
  *mismatch = 1;
  if (cli_npy_read_file(fixture(rel[1]), &x, err, sizeof err) == PTERUN_STATUS_OK &&
      cli_npy_read_file(fixture(rel[2]), &want, err, sizeof err) == PTERUN_STATUS_OK) {
    *mismatch = 0;
    for (int r = 0; r < runs; ++r) {
      pterun_tensor_view v = {x.dtype, x.rank, x.shape, NULL, x.data, x.nbytes};
      const pterun_value* out = NULL;
      size_t before = g_allocs;
      if (pterun_method_set_input(m, 0, &v) != PTERUN_STATUS_OK ||
          pterun_method_execute(m) != PTERUN_STATUS_OK ||
          pterun_method_output(m, 0, &out) != PTERUN_STATUS_OK || g_allocs != before ||
          out->tag != PTERUN_VALUE_TENSOR || (size_t)out->u.tensor->numel != want.numel) {
        *mismatch = 1;
        break;
      }
      for (size_t k = 0; k < want.numel; ++k) {
        float g = ((const float*)out->u.tensor->data)[k], w = ((const float*)want.data)[k];
        if (!(fabsf(g - w) <= 1e-6f + 1e-5f * fabsf(w))) *mismatch = 1;
      }
    }
  }
  cli_npy_free(&x);
  cli_npy_free(&want);
  pterun_method_destroy(m);
  pterun_program_destroy(p);
  return PTERUN_STATUS_OK;
}

static pterun_status run_mlp(pterun_registry* reg, int mode, int no_prepare, int runs,
                             size_t* runtime_bytes, int* mismatch) {
  return run_fixture("mlp", reg, mode, no_prepare, runs, runtime_bytes, mismatch);
}

static int prepare_packs_a_constant(void) {
  pterun_registry* reg = make_registry();
  PT_CHECK(reg != NULL);
  size_t packed_rt = 0, plain_rt = 0;
  int mismatch = 1;
  PT_CHECK_STATUS(run_mlp(reg, MODE_PACK, 0, 3, &packed_rt, &mismatch), PTERUN_STATUS_OK);
  size_t g_packed_bytes = g_copied;
  PT_CHECK(!mismatch);
  PT_CHECK(g_prepares == 2); /* two addmm calls, one prepare each */
  PT_CHECK(g_hidden_ok == 2 && g_const_ok == 2 && g_bad_allocs_refused == 2);
  PT_CHECK(g_executes == 6 && g_state_seen == 6 && g_state_matches == 6);
  PT_CHECK(g_exec_alloc_refused == 6);
  // The state is counted: both weights copied, plus headers; and the
  // weights' transposes stay views of the file (unprepared, they are dense
  // folded copies of the same size instead).
  PT_CHECK_STATUS(run_mlp(reg, MODE_PACK, 1, 1, &plain_rt, &mismatch), PTERUN_STATUS_OK);
  PT_CHECK(!mismatch);
  PT_CHECK(g_prepares == 0 && g_state_seen == 0 && g_executes == 2);
  PT_CHECK(g_packed_bytes > 0 && packed_rt >= plain_rt && packed_rt < plain_rt + g_packed_bytes);
  // Nothing kept: execute sees no state.
  PT_CHECK_STATUS(run_mlp(reg, MODE_NOTHING, 0, 2, &plain_rt, &mismatch), PTERUN_STATUS_OK);
  PT_CHECK(!mismatch && g_prepares == 2 && g_state_seen == 0 && g_executes == 4);
  pterun_registry_destroy(reg);
  return 0;
}

/* A transposed weight whose every reader packs it is not copied at load
 * (folded constants 0; the reader saw a view of the file's bytes); one whose
 * reader does not say so is folded into a dense copy, as before, with the
 * same results. */
static int prepare_views_only_when_packed(void) {
  pterun_registry* reg = make_registry();
  PT_CHECK(reg != NULL);
  size_t with_view = 0, with_copy = 0;
  int mismatch = 1;
  g_claims = 1;
  PT_CHECK_STATUS(run_mlp(reg, MODE_PACK, 0, 2, &with_view, &mismatch), PTERUN_STATUS_OK);
  PT_CHECK(!mismatch && g_views_seen == 2 && g_state_matches == g_executes);
  g_claims = 0;
  PT_CHECK_STATUS(run_mlp(reg, MODE_PACK, 0, 2, &with_copy, &mismatch), PTERUN_STATUS_OK);
  PT_CHECK(!mismatch && g_views_seen == 2);
  /* The two weights' dense copies (the prepared copies are the same size). */
  PT_CHECK(with_copy >= with_view + g_copied);
  g_claims = 1;
  pterun_registry_destroy(reg);
  return 0;
}

/* release_packed_constants with the portable kernels (tests/fixtures/
 * linear_nd_relu: a [2, 3, 64] input through a 128 x 64 Linear, whose addmm
 * packs the transposed weight for a fixed row count): the file's bytes of the
 * weight are given back, the results still match ExecuTorch's, and a second
 * load from the same program, which would need them, is refused cleanly. */
static int prepare_releases_packed_weights(void) {
  size_t rt = 0;
  int mismatch = 1;
  pterun_registry* reg = NULL;
  PT_CHECK_STATUS(pterun_registry_create(NULL, &g_silent, &reg), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(pterun_registry_set_optimizer(reg, pterun_optimizer_default()), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(pterun_registry_add(reg, pterun_kernels_portable()), PTERUN_STATUS_OK);
  g_release = 1;
  PT_CHECK_STATUS(run_fixture("linear_nd_relu", reg, MODE_PACK, 0, 3, &rt, &mismatch),
                  PTERUN_STATUS_OK);
  PT_CHECK(!mismatch);
  g_release = 0;
  pterun_load_options lo = PTERUN_LOAD_OPTIONS_INIT;
  lo.logger = g_silent;
  pterun_program* p = NULL;
  const char* file = fixture("linear_nd_relu/model.pte");
  PT_CHECK_STATUS(pterun_program_load_file(file, PTERUN_FILE_MMAP, &lo, &p), PTERUN_STATUS_OK);
  pterun_method_options o = PTERUN_METHOD_OPTIONS_INIT;
  o.registry = reg;
  o.logger = g_silent;
  o.release_packed_constants = 1;
  pterun_method *m1 = NULL, *m2 = NULL;
  PT_CHECK_STATUS(pterun_method_load(p, "forward", &o, &m1), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(pterun_method_load(p, "forward", &o, &m2), PTERUN_STATUS_INVALID_STATE);
  PT_CHECK(m2 == NULL);
  pterun_method_destroy(m1);
  pterun_program_destroy(p);
  // Without the option the bytes stay: any number of loads.
  PT_CHECK_STATUS(pterun_program_load_file(file, PTERUN_FILE_MMAP, &lo, &p), PTERUN_STATUS_OK);
  o.release_packed_constants = 0;
  PT_CHECK_STATUS(pterun_method_load(p, "forward", &o, &m1), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(pterun_method_load(p, "forward", &o, &m2), PTERUN_STATUS_OK);
  pterun_method_destroy(m1);
  pterun_method_destroy(m2);
  pterun_program_destroy(p);
  pterun_registry_destroy(reg);
  return 0;
}

static int prepare_failures_refuse_the_load(void) {
  pterun_registry* reg = make_registry();
  PT_CHECK(reg != NULL);
  size_t rt = 0;
  int left_method = 1;
  PT_CHECK_STATUS(run_mlp(reg, MODE_FAIL, 0, 1, &rt, &left_method), PTERUN_STATUS_NOT_SUPPORTED);
  PT_CHECK(!left_method && g_prepares == 1 && g_executes == 0);
  PT_CHECK_STATUS(run_mlp(reg, MODE_OOM, 0, 1, &rt, &left_method), PTERUN_STATUS_OUT_OF_MEMORY);
  PT_CHECK(!left_method && g_prepares == 1);
  // A prepare that scribbles over its arguments changes nothing.
  int mismatch = 1;
  PT_CHECK_STATUS(run_mlp(reg, MODE_HOSTILE, 0, 2, &rt, &mismatch), PTERUN_STATUS_OK);
  PT_CHECK(!mismatch && g_prepares == 2 && g_executes == 4);
  pterun_registry_destroy(reg);
  return 0;
}

/* tests/fixtures/lstm unrolls its steps: every step's addmm reads the same
 * recurrent weight (one transposed copy, folded at load), so keyed state is
 * made once per weight and counted once. */
static int prepare_shares_state_by_key(void) {
  pterun_registry* reg = make_registry();
  PT_CHECK(reg != NULL);
  size_t shared_rt = 0, private_rt = 0;
  int mismatch = 1;
  PT_CHECK_STATUS(run_fixture("lstm", reg, MODE_SHARED, 0, 2, &shared_rt, &mismatch),
                  PTERUN_STATUS_OK);
  PT_CHECK(!mismatch);
  size_t shared_copied = g_copied;
  int prepares = g_prepares;
  PT_CHECK(g_fresh == g_distinct && g_fresh + g_found == prepares);
  PT_CHECK(g_found > 0 && g_fresh < prepares);
  PT_CHECK(g_executes == 2 * prepares && g_state_seen == g_executes &&
           g_state_matches == g_executes);
  PT_CHECK_STATUS(run_fixture("lstm", reg, MODE_PACK, 0, 1, &private_rt, &mismatch),
                  PTERUN_STATUS_OK);
  PT_CHECK(!mismatch && g_prepares == prepares && g_copied > shared_copied);
  PT_CHECK(private_rt >= shared_rt + (g_copied - shared_copied)); /* counted once */
  // A fresh block whose prepare failed refuses the load and leaks nothing.
  PT_CHECK_STATUS(run_fixture("lstm", reg, MODE_SHARED_FAIL, 0, 1, &shared_rt, &mismatch),
                  PTERUN_STATUS_NOT_SUPPORTED);
  PT_CHECK(!mismatch && g_fresh == 2);
  pterun_registry_destroy(reg);
  return 0;
}

static int prepare_outside_a_method(void) {
  // A direct call has no state and cannot allocate any.
  pterun_kernel_context* none = NULL;
  PT_CHECK(pterun_kernel_state(none) == NULL && pterun_kernel_state_alloc(none, 16, 16) == NULL);
  PT_CHECK(!pterun_kernel_preparing(none));
  int fresh = 7;
  PT_CHECK(pterun_kernel_shared_state(none, "k", 1, 16, 16, &fresh) == NULL && fresh == 0);
  pterun_registry* reg = make_registry();
  PT_CHECK(reg != NULL);
  float a[4] = {1, 2, 3, 4}, b[4] = {1, 0, 0, 1}, c[4] = {0}, y[4] = {0};
  int64_t s22[2] = {2, 2};
  pterun_tensor ta = pt_tensor_make(PTERUN_DTYPE_F32, 2, s22, a, sizeof a);
  pterun_tensor tb = pt_tensor_make(PTERUN_DTYPE_F32, 2, s22, b, sizeof b);
  pterun_tensor tc = pt_tensor_make(PTERUN_DTYPE_F32, 2, s22, c, sizeof c);
  pterun_tensor ty = pt_tensor_make(PTERUN_DTYPE_F32, 2, s22, y, sizeof y);
  pterun_value vc = pt_val_tensor(&tc), va = pt_val_tensor(&ta), vb = pt_val_tensor(&tb);
  pterun_value vy = pt_val_tensor(&ty), one = pt_val_int(1);
  pterun_value* args[7] = {&vc, &va, &vb, &one, &one, &vy, &vy};
  reset_counts();
  PT_CHECK_STATUS(pterun_kernel_invoke(t_addmm, "aten::addmm.out", args, 7, &g_silent, NULL, 0),
                  PTERUN_STATUS_OK);
  PT_CHECK(g_executes == 1 && g_state_seen == 0 && g_exec_alloc_refused == 1);
  PT_CHECK(y[0] == 1 && y[1] == 2 && y[2] == 3 && y[3] == 4);
  // The same operator with the same function but another prepare is a
  // different kernel: refused.
  pterun_kernel other = {.op = "aten::addmm.out", .fn = t_addmm, .prepare = NULL};
  pterun_kernel_library lib = {PTERUN_KERNEL_ABI_VERSION, "test_other", 1, &other};
  PT_CHECK_STATUS(pterun_registry_add(reg, &lib), PTERUN_STATUS_ALREADY_REGISTERED);
  pterun_registry_destroy(reg);
  return 0;
}

int main(void) {
  g_silent = pterun_logger_silent();
  PT_RUN(prepare_packs_a_constant);
  PT_RUN(prepare_views_only_when_packed);
  PT_RUN(prepare_releases_packed_weights);
  PT_RUN(prepare_failures_refuse_the_load);
  PT_RUN(prepare_shares_state_by_key);
  PT_RUN(prepare_outside_a_method);
  return pt_failures ? 1 : 0;
}
