/* Body of the f32 range scan for one vector width. Included by
 * minmax_<isa>.c after defining MX_FN (the function's name), MX_LANES
 * (floats per vector), MX_V (the vector type) and MX_LOADU, MX_SET1,
 * MX_STOREU, MX_MIN, MX_MAX (the intrinsics).
 *
 * MX_MIN(v, m) must be `v < m ? v : m` and MX_MAX(v, m) `v > m ? v : m` lane
 * by lane (minps/maxps and their AVX/AVX-512 forms return the second operand
 * when either is NaN or both are equal): the portable variant's step. Every
 * lane starts from the caller's bounds, so a NaN element never enters and a
 * NaN start stays in every lane; without NaN the minimum and maximum of a set
 * do not depend on the order it is scanned in, except for which of -0 and +0
 * is kept (pc_minmax_zero makes it +0). So the lanes, the four accumulators
 * and the scalar tail give the portable variant's bits at every width. */
#include "src/compute/minmax/minmax.h"

void MX_FN(const float* x, size_t n, float* min, float* max) {
  float lo = *min, hi = *max;
  size_t i = 0;
  if (n >= MX_LANES) {
    MX_V l0 = MX_SET1(lo), h0 = MX_SET1(hi);
    MX_V l1 = l0, l2 = l0, l3 = l0, h1 = h0, h2 = h0, h3 = h0;
    float lt[MX_LANES], ht[MX_LANES];
    /* Four independent chains: min/max latency, not throughput, bounds one. */
    for (; i + 4 * MX_LANES <= n; i += 4 * MX_LANES) {
      const MX_V v0 = MX_LOADU(x + i), v1 = MX_LOADU(x + i + MX_LANES);
      const MX_V v2 = MX_LOADU(x + i + 2 * MX_LANES), v3 = MX_LOADU(x + i + 3 * MX_LANES);
      l0 = MX_MIN(v0, l0), h0 = MX_MAX(v0, h0);
      l1 = MX_MIN(v1, l1), h1 = MX_MAX(v1, h1);
      l2 = MX_MIN(v2, l2), h2 = MX_MAX(v2, h2);
      l3 = MX_MIN(v3, l3), h3 = MX_MAX(v3, h3);
    }
    for (; i + MX_LANES <= n; i += MX_LANES) {
      const MX_V v = MX_LOADU(x + i);
      l0 = MX_MIN(v, l0), h0 = MX_MAX(v, h0);
    }
    /* An accumulator holds NaN only when the start did (then all do). */
    l0 = MX_MIN(MX_MIN(l1, l0), MX_MIN(l3, l2));
    h0 = MX_MAX(MX_MAX(h1, h0), MX_MAX(h3, h2));
    MX_STOREU(lt, l0);
    MX_STOREU(ht, h0);
    for (int k = 0; k < MX_LANES; ++k) {
      lo = lt[k] < lo ? lt[k] : lo;
      hi = ht[k] > hi ? ht[k] : hi;
    }
  }
  for (; i < n; ++i) pc_minmax_step(x[i], &lo, &hi);
  *min = pc_minmax_zero(lo);
  *max = pc_minmax_zero(hi);
}
