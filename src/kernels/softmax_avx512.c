/* Softmax rows on AVX-512F (kernels/softmax.h); this file gets -mavx512f. The AVX2
 * kernel's three passes (max, e^(x - max) stored and summed, scaled by the sum's
 * reciprocal) with 16 lanes and the ragged end under a mask instead of a padded copy.
 * Why its own kernel: the attention softmax of vit_b_16 (12 x 197 rows of 197 per block)
 * took 2.7 ms of its ~90 at batch 1 on two Zen 5 threads on the AVX2 kernel; nnp_exp16
 * is nnp_exp8 bit for bit, so each e^x is the AVX2 kernel's, only the sums' order
 * (16 partial sums, not 8) differs. */
#include "kernels/softmax.h"

#include <math.h>

#if defined(__AVX512F__)
#include "kernels/exp_avx512.h"

/* One row: the last 1..15 elements under the mask m (masked-off lanes read as -inf in
 * the max, contribute e^-inf = 0 to the sum and are not stored). */
void nnp_softmax_row_avx512(const float *x, float *y, int64_t n) {
  const int64_t vend = n / 16 * 16;
  const __mmask16 m = (__mmask16)((1u << (n - vend)) - 1u);
  const __m512 ninf = _mm512_set1_ps(-INFINITY);
  __m512 mv = _mm512_mask_loadu_ps(ninf, m, x + vend);
  for (int64_t i = 0; i < vend; i += 16) mv = _mm512_max_ps(mv, _mm512_loadu_ps(x + i));
  const __m512 mx = _mm512_set1_ps(_mm512_reduce_max_ps(mv));
  __m512 s = _mm512_setzero_ps();
  for (int64_t i = 0; i < vend; i += 16) {
    const __m512 e = nnp_exp16(_mm512_sub_ps(_mm512_loadu_ps(x + i), mx));
    _mm512_storeu_ps(y + i, e);
    s = _mm512_add_ps(s, e);
  }
  if (m) {
    const __m512 e = _mm512_maskz_mov_ps(m, nnp_exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + vend), mx)));
    _mm512_mask_storeu_ps(y + vend, m, e);
    s = _mm512_add_ps(s, e);
  }
  const __m512 inv = _mm512_set1_ps(1.0f / _mm512_reduce_add_ps(s));
  for (int64_t i = 0; i < vend; i += 16) _mm512_storeu_ps(y + i, _mm512_mul_ps(_mm512_loadu_ps(y + i), inv));
  if (m) _mm512_mask_storeu_ps(y + vend, m, _mm512_mul_ps(_mm512_maskz_loadu_ps(m, y + vend), inv));
}
#else
void nnp_softmax_row_avx512(const float *x, float *y, int64_t n) {
  (void)x, (void)y, (void)n; /* never selected without AVX-512 (ops/reduce.c) */
}
#endif
