/* dot_tmpl.h's vector operations on 64-byte AVX-512 vectors (shared by
 * lowbit_avx512bw.c and lowbit_avx512vnni.c). */
#define LT_V 64
#define LT_VEC __m512i
#define LT_LOAD(p) _mm512_loadu_si512((const void*)(p))
#define LT_STORE(p, v) _mm512_storeu_si512((void*)(p), (v))
#define LT_ZERO() _mm512_setzero_si512()
#define LT_SET1_8(c) _mm512_set1_epi8((char)(c))
#define LT_SET1_16(c) _mm512_set1_epi16((short)(c))
#define LT_AND(a, b) _mm512_and_si512((a), (b))
#define LT_XOR(a, b) _mm512_xor_si512((a), (b))
#define LT_SRL4(x) _mm512_srli_epi16((x), 4)
#define LT_ADD8(a, b) _mm512_add_epi8((a), (b))
#define LT_ADD16(a, b) _mm512_add_epi16((a), (b))
#define LT_ADD32(a, b) _mm512_add_epi32((a), (b))
/* a 64-byte load is a whole 4-bit chunk: qa[0..7] below, qa[8..15] above */
#define LT_ACT4(h0, h1, off) _mm512_inserti64x4(_mm512_set1_epi64(h0), _mm256_set1_epi64x(h1), 1)
#define LT_ACT(h) _mm512_set1_epi64(h)
#define LT_CVT16(p) _mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i*)(const void*)(p)))
#define LT_ACT16(h) _mm512_cvtepi8_epi16(_mm256_set1_epi64x(h))
#define LT_MADDUBS(u, s) _mm512_maddubs_epi16((u), (s))
#define LT_MADD(x, y) _mm512_madd_epi16((x), (y))
/* the two 32-byte halves hold the same columns (qa[0..7], qa[8..15]):
 * folded, they are AVX2's layout, where one vphaddd orders the columns */
#define LT_HALVES(v) _mm256_add_epi32(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64((v), 1))
#define LT_COLS32(lo, hi) _mm256_hadd_epi32(LT_HALVES(lo), LT_HALVES(hi))
