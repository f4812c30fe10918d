/* Fuzz target: load + execute. Every method is loaded with a small scratch
 * arena and a small instruction budget; inputs are generated from a seed
 * derived from the program bytes (shapes anywhere within the bounds of
 * dynamic inputs, arbitrary bytes as values); each method runs twice so
 * state carried from one execute to the next is exercised too.
 *
 * Input memory stays allocated until the method is destroyed (each round has
 * its own buffers), so the harness never frees memory a method may still
 * have bound. A round in which an input's last set_input was refused must not
 * execute: execute has to answer INVALID_STATE (issue 21 defect 7a: a refused
 * call left the earlier binding in place, and execute read freed memory); the
 * second round also refuses one call on a bound input deliberately, checks
 * that, and binds it again. */
#include <stdbool.h>

#include "tests/fuzz/fuzz_common.h"

#define FZ_MAX_INPUT_BYTES ((size_t)1 << 20)
#define FZ_MAX_INPUTS 32

static void run_method(const pterun_program* p, size_t mi, uint64_t* seed) {
  const char* name = pterun_program_method_name(p, mi);
  pterun_method_options mo = PTERUN_METHOD_OPTIONS_INIT;
  mo.registry = fz_registry();
  mo.logger = pterun_logger_silent();
  mo.instruction_budget = 2000;
  // Small scratch arenas (0 would mean the default 4 MiB): none, or 1..4096.
  mo.scratch_bytes = (size_t)(fz_next(seed) % 4097);
  if (mo.scratch_bytes == 0) mo.scratch_bytes = PTERUN_NO_SCRATCH;
  mo.allocator = &fz_allocator;
  pterun_method* m = NULL;
  pterun_status st = pterun_method_load(p, name, &mo, &m);
  FZ_CHECK_STATUS(st);
  if (st != PTERUN_STATUS_OK) return;
  void* bufs[2][FZ_MAX_INPUTS] = {{0}};
  bool refused[FZ_MAX_INPUTS] = {0};               /* the input's last set_input was refused */
  pterun_tensor_view views[FZ_MAX_INPUTS] = {{0}}; /* this round's accepted bindings */
  int64_t vsizes[FZ_MAX_INPUTS][PTERUN_MAX_RANK];
  uint8_t vorder[FZ_MAX_INPUTS][PTERUN_MAX_RANK];
  size_t n_in = pterun_method_input_count(m);
  for (int round = 0; round < 2; ++round) {
    memset(views, 0, sizeof views);
    for (size_t i = 0; i < n_in && i < FZ_MAX_INPUTS; ++i) {
      pterun_io_info io;
      if (pterun_program_method_input(p, mi, i, &io) != PTERUN_STATUS_OK) abort();
      if (io.tag != PTERUN_VALUE_TENSOR) {
        pterun_value v;
        memset(&v, 0, sizeof v);
        v.tag = io.tag;
        if (io.tag == PTERUN_VALUE_INT) v.u.i = io.int_value;
        if (io.tag == PTERUN_VALUE_BOOL) v.u.b = io.int_value != 0;
        if (io.tag == PTERUN_VALUE_DOUBLE) v.u.d = io.double_value;
        if (io.tag == PTERUN_VALUE_STRING) {
          v.u.str.data = "";
          v.u.str.len = 0;
        }
        st = pterun_method_set_input_value(m, i, &v);
        FZ_CHECK_STATUS(st);
        refused[i] = st != PTERUN_STATUS_OK;
        continue;
      }
      int64_t sizes[PTERUN_MAX_RANK];
      uint64_t numel = 1;
      for (uint8_t d = 0; d < io.rank; ++d) {
        sizes[d] = io.sizes[d];
        // Dynamic dims: sometimes the bound, sometimes anything up to it (or
        // a little past it, which must be refused).
        if (io.dynamism != PTERUN_SHAPE_STATIC && (fz_next(seed) & 1))
          sizes[d] = (int64_t)(fz_next(seed) % (uint64_t)(io.sizes[d] + 2));
        if (sizes[d] > 0 && numel > FZ_MAX_INPUT_BYTES / (uint64_t)sizes[d])
          numel = FZ_MAX_INPUT_BYTES + 1;
        else
          numel *= (uint64_t)sizes[d];
      }
      size_t es = pterun_dtype_size(io.dtype);
      if (es == 0 || numel > FZ_MAX_INPUT_BYTES / es) continue;
      size_t nbytes = (size_t)numel * es;
      uint8_t* buf =
          aligned_alloc(64, (nbytes + 63) & ~(size_t)63 ? (nbytes + 63) & ~(size_t)63 : 64);
      bufs[round][i] = buf;
      if (buf == NULL) continue;
      for (size_t k = 0; k < nbytes; ++k) buf[k] = (uint8_t)fz_next(seed);
      // Bool inputs must hold 0/1 to be meaningful; keep some invalid ones.
      if (io.dtype == PTERUN_DTYPE_BOOL && (fz_next(seed) & 3))
        for (size_t k = 0; k < nbytes; ++k) buf[k] &= 1;
      memcpy(vsizes[i], sizes, sizeof sizes);
      memcpy(vorder[i], io.dim_order, sizeof vorder[i]);
      views[i] = (pterun_tensor_view){io.dtype, io.rank, vsizes[i], vorder[i], buf, nbytes};
      st = pterun_method_set_input(m, i, &views[i]);
      FZ_CHECK_STATUS(st);
      refused[i] = st != PTERUN_STATUS_OK;
    }
    bool any_refused = false;
    for (size_t i = 0; i < n_in && i < FZ_MAX_INPUTS; ++i) any_refused |= refused[i];
    // Second round, every inputs bound: refuse one call on a bound tensor
    // input (a dtype the method does not take); execute must refuse to run
    // until that input is bound again.
    size_t j = n_in > 0 ? (size_t)(fz_next(seed) % n_in) : 0;
    if (round == 1 && !any_refused && j < FZ_MAX_INPUTS && views[j].data != NULL) {
      pterun_tensor_view bad = views[j];
      bad.dtype = bad.dtype == PTERUN_DTYPE_F32 ? PTERUN_DTYPE_I32 : PTERUN_DTYPE_F32;
      if (pterun_method_set_input(m, j, &bad) != PTERUN_STATUS_INPUT_MISMATCH)
        FZ_FAIL("a set_input with the wrong dtype was accepted");
      if (pterun_method_execute(m) != PTERUN_STATUS_INVALID_STATE)
        FZ_FAIL("execute ran after a refused set_input (stale binding)");
      if (pterun_method_set_input(m, j, &views[j]) != PTERUN_STATUS_OK)
        FZ_FAIL("binding an input again with the view it accepted was refused");
    }
    st = pterun_method_execute(m);
    FZ_CHECK_STATUS(st);
    if (any_refused && st != PTERUN_STATUS_INVALID_STATE)
      FZ_FAIL("execute ran after a refused set_input (stale binding)");
    if (st == PTERUN_STATUS_OK) {
      for (size_t k = 0; k < pterun_method_output_count(m); ++k) {
        const pterun_value* out;
        if (pterun_method_output(m, k, &out) != PTERUN_STATUS_OK) abort();
        if (out->tag == PTERUN_VALUE_TENSOR && out->u.tensor->data != NULL) {
          // Touch every byte the output claims (ASan checks the extent).
          volatile uint8_t sink = 0;
          const pterun_tensor* t = out->u.tensor;
          for (size_t b = 0; b < t->nbytes; b += 61) sink ^= ((const uint8_t*)t->data)[b];
          if (t->nbytes > 0) sink ^= ((const uint8_t*)t->data)[t->nbytes - 1];
          (void)sink;
        }
      }
    }
  }
  pterun_method_destroy(m); /* only now is no input memory bound */
  for (int round = 0; round < 2; ++round)
    for (size_t i = 0; i < FZ_MAX_INPUTS; ++i) free(bufs[round][i]);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  uint8_t* buf = fz_copy(data, size);
  if (buf == NULL) return 0;
  pterun_load_options lo = fz_load_options();
  pterun_program* p = NULL;
  if (pterun_program_load_buffer(buf, size, &lo, &p) == PTERUN_STATUS_OK) {
    uint64_t seed = fz_hash(data, size) | 1;
    size_t n = pterun_program_method_count(p);
    for (size_t i = 0; i < n && i < 4; ++i) run_method(p, i, &seed);
    pterun_program_destroy(p);
  }
  free(buf);
  return 0;
}
