/* The AVX2 dot products of kernels/qgemv.h: vpmaddwd multiplies int16 pairs and adds each
 * pair into an int32 lane, exact for operands in [-255, 255]; the partial sums of 16 k
 * per step are added into int32 lanes and reduced once at the end. This file alone is
 * compiled with -mavx2 -mfma; it runs only where the dispatch table (kernels/dispatch.h) picks AVX2. */
#include <immintrin.h>

#include "kernels/qgemv.h"

#if defined(__AVX2__)
static inline int32_t hsum(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
  return _mm_cvtsi128_si32(s);
}

void nnp_qgemv_dot4_avx2(int64_t kpad, const int16_t *x, const int16_t *w, int64_t ldw, int32_t acc[4]) {
  __m256i s0 = _mm256_setzero_si256(), s1 = s0, s2 = s0, s3 = s0;
  for (int64_t k = 0; k < kpad; k += 16) {
    __m256i xv = _mm256_loadu_si256((const __m256i *)(x + k));
    s0 = _mm256_add_epi32(s0, _mm256_madd_epi16(xv, _mm256_loadu_si256((const __m256i *)(w + k))));
    s1 = _mm256_add_epi32(s1, _mm256_madd_epi16(xv, _mm256_loadu_si256((const __m256i *)(w + ldw + k))));
    s2 = _mm256_add_epi32(s2, _mm256_madd_epi16(xv, _mm256_loadu_si256((const __m256i *)(w + 2 * ldw + k))));
    s3 = _mm256_add_epi32(s3, _mm256_madd_epi16(xv, _mm256_loadu_si256((const __m256i *)(w + 3 * ldw + k))));
  }
  acc[0] = hsum(s0);
  acc[1] = hsum(s1);
  acc[2] = hsum(s2);
  acc[3] = hsum(s3);
}
#else /* never called off x86 (the dispatch table picks no AVX2 there): the portable sums */
void nnp_qgemv_dot4_avx2(int64_t kpad, const int16_t *x, const int16_t *w, int64_t ldw, int32_t acc[4]) {
  for (int j = 0; j < 4; j++) {
    int32_t s = 0;
    for (int64_t k = 0; k < kpad; k++) s += (int32_t)x[k] * w[j * ldw + k];
    acc[j] = s;
  }
}
#endif
