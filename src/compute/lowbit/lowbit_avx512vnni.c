/* Low-bit linear microkernel for AVX-512 VNNI (vpdpbusd, 64-byte vectors).
 * Built with -mavx512f -mavx512bw -mavx512vnni by src/compute/isa.cmake;
 * selected at run time only when pterun_cpu_features() reports them.
 * Body: dot_tmpl.h. */
#include "src/compute/lowbit/ukernel.h"

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VNNI__)
#include <immintrin.h>
#include <string.h>

#define LT_FN pc_lowbit_dot__avx512vnni
#define LT_TILE pc_lowbit_tile__avx512vnni
#define LT_QUANT pc_lowbit_quant__avx512vnni
#include "src/compute/lowbit/x86_avx512.h"
#define LT_DPBUSD(acc, u, s) _mm512_dpbusd_epi32((acc), (u), (s))
#include "src/compute/lowbit/dot_tmpl.h"

#else
typedef int pc_lowbit_avx512vnni_unavailable; /* not an empty translation unit */
#endif
