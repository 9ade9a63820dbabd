/* The AVX-512 VNNI variant of the INT8 GEMM's 6 x 16 tile (kernels/qgemm.h): the same
 * packed int16 pairs and the same YMM accumulators as the AVX2 tile, with vpdpwssd (one
 * instruction: int16 pair products summed into int32, exact, no saturation) in place of
 * vpmaddwd + vpaddd. The target CPU has AVX2 without VNNI, so the AVX2 tile stays
 * the required, tested path; this one is selected at run time only where CPUID reports
 * AVX512_VNNI and AVX512VL (kernels/cpu.c) and NNP_CPU_FEATURES does not rule it out.
 * Integer sums are exact and the requantize is shared, so both tiles give the same bytes;
 * the generic tile is the oracle of both. This file alone is compiled with
 * -mavx512vnni -mavx512vl. */
#include <immintrin.h>

#include "kernels/qgemm.h"

#if defined(__AVX512VNNI__) && defined(__AVX512VL__) && defined(__AVX2__)
#include "kernels/qgemm_store_avx2.h"

static inline __m256i bcast_pair(const int16_t *p) { return _mm256_broadcastd_epi32(_mm_loadu_si32(p)); }
static inline __m256i bcast4(const int8_t *p) { return _mm256_broadcastd_epi32(_mm_loadu_si32(p)); }

void nnp_qgemm_tile_vnni(int64_t K2, const int16_t *a, const int16_t *b, uint8_t *c, int64_t ldc, int mr, int nr,
                         const nnp_qepilogue *ep, int64_t i0) {
  __m256i c00 = _mm256_setzero_si256(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
  __m256i c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
  for (int64_t kp = 0; kp < K2; kp++) {
    __m256i b0 = _mm256_loadu_si256((const __m256i *)b), b1 = _mm256_loadu_si256((const __m256i *)(b + 16)), av;
    av = bcast_pair(a + 0);
    c00 = _mm256_dpwssd_epi32(c00, av, b0); c01 = _mm256_dpwssd_epi32(c01, av, b1);
    av = bcast_pair(a + 2);
    c10 = _mm256_dpwssd_epi32(c10, av, b0); c11 = _mm256_dpwssd_epi32(c11, av, b1);
    av = bcast_pair(a + 4);
    c20 = _mm256_dpwssd_epi32(c20, av, b0); c21 = _mm256_dpwssd_epi32(c21, av, b1);
    av = bcast_pair(a + 6);
    c30 = _mm256_dpwssd_epi32(c30, av, b0); c31 = _mm256_dpwssd_epi32(c31, av, b1);
    av = bcast_pair(a + 8);
    c40 = _mm256_dpwssd_epi32(c40, av, b0); c41 = _mm256_dpwssd_epi32(c41, av, b1);
    av = bcast_pair(a + 10);
    c50 = _mm256_dpwssd_epi32(c50, av, b0); c51 = _mm256_dpwssd_epi32(c51, av, b1);
    a += NNP_QGEMM_MR * 2;
    b += NNP_QGEMM_NR * 2;
  }
  __m256i acc[6][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}, {c40, c41}, {c50, c51}};
  nnp_qtile_store_avx2(acc, c, ldc, mr, nr, ep, i0);
}

/* u8 x s8: per group of 4 k, 64 bytes of B (16 columns x 4) in two YMM, the 4 weight bytes
 * of each row broadcast; vpdpbusd adds the 4 exact products of each column into its lane. */
void nnp_qgemm4_tile_vnni(int64_t K4, const int8_t *a, const uint8_t *b, uint8_t *c, int64_t ldc, int mr, int nr,
                          const nnp_qepilogue *ep, int64_t i0) {
  __m256i c00 = _mm256_setzero_si256(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
  __m256i c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
  for (int64_t kq = 0; kq < K4; kq++) {
    __m256i b0 = _mm256_loadu_si256((const __m256i *)b), b1 = _mm256_loadu_si256((const __m256i *)(b + 32)), av;
    av = bcast4(a + 0);
    c00 = _mm256_dpbusd_epi32(c00, b0, av); c01 = _mm256_dpbusd_epi32(c01, b1, av);
    av = bcast4(a + 4);
    c10 = _mm256_dpbusd_epi32(c10, b0, av); c11 = _mm256_dpbusd_epi32(c11, b1, av);
    av = bcast4(a + 8);
    c20 = _mm256_dpbusd_epi32(c20, b0, av); c21 = _mm256_dpbusd_epi32(c21, b1, av);
    av = bcast4(a + 12);
    c30 = _mm256_dpbusd_epi32(c30, b0, av); c31 = _mm256_dpbusd_epi32(c31, b1, av);
    av = bcast4(a + 16);
    c40 = _mm256_dpbusd_epi32(c40, b0, av); c41 = _mm256_dpbusd_epi32(c41, b1, av);
    av = bcast4(a + 20);
    c50 = _mm256_dpbusd_epi32(c50, b0, av); c51 = _mm256_dpbusd_epi32(c51, b1, av);
    a += NNP_QGEMM_MR * 4;
    b += NNP_QGEMM_NR * 4;
  }
  __m256i acc[6][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}, {c40, c41}, {c50, c51}};
  nnp_qtile_store_avx2(acc, c, ldc, mr, nr, ep, i0);
}
#else
/* The compiler cannot emit VNNI: never selected (nnp_cpu_has_avx512_vnni is false). */
void nnp_qgemm4_tile_vnni(int64_t K4, const int8_t *a, const uint8_t *b, uint8_t *c, int64_t ldc, int mr, int nr,
                          const nnp_qepilogue *ep, int64_t i0) {
  nnp_qgemm4_tile_generic(K4, a, b, c, ldc, mr, nr, ep, i0);
}
void nnp_qgemm_tile_vnni(int64_t K2, const int16_t *a, const int16_t *b, uint8_t *c, int64_t ldc, int mr, int nr,
                         const nnp_qepilogue *ep, int64_t i0) {
  nnp_qgemm_tile_generic(K2, a, b, c, ldc, mr, nr, ep, i0);
}
#endif
