/* Softmax rows on AVX2 (kernels/softmax.h); this file gets -mavx2 -mfma. */
#include "kernels/softmax.h"

#include <math.h>
#include <string.h>

#if defined(__AVX2__) && defined(__FMA__)
#include "kernels/exp_avx2.h"

static float hmax8(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_shuffle_ps(m, m, 1));
  return _mm_cvtss_f32(m);
}

static float hsum8(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
  return _mm_cvtss_f32(s);
}

/* One row (nnp_softmax_rows' row function); the last 1..7 elements through a padded
 * vector (padding -inf: e^-inf = 0). */
void nnp_softmax_row_avx2(const float *x, float *y, int64_t n) {
  const int64_t vend = n / 8 * 8, r = n - vend;
  float t[8];
  for (int i = 0; i < 8; i++) t[i] = i < r ? x[vend + i] : -INFINITY;
  __m256 m = _mm256_loadu_ps(t);
  for (int64_t i = 0; i < vend; i += 8) m = _mm256_max_ps(m, _mm256_loadu_ps(x + i));
  const __m256 mx = _mm256_set1_ps(hmax8(m));
  __m256 s = _mm256_setzero_ps();
  for (int64_t i = 0; i < vend; i += 8) {
    const __m256 e = nnp_exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i), mx));
    _mm256_storeu_ps(y + i, e);
    s = _mm256_add_ps(s, e);
  }
  if (r) {
    const __m256 e = nnp_exp8(_mm256_sub_ps(_mm256_loadu_ps(t), mx)); /* -inf lanes: exp8 clamps to 0 */
    _mm256_storeu_ps(t, e);
    s = _mm256_add_ps(s, e);
  }
  const __m256 inv = _mm256_set1_ps(1.0f / hsum8(s));
  for (int64_t i = 0; i < vend; i += 8) _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_loadu_ps(y + i), inv));
  for (int64_t i = 0; i < r; i++) y[vend + i] = t[i] * _mm256_cvtss_f32(inv);
}
#else
void nnp_softmax_row_avx2(const float *x, float *y, int64_t n) {
  (void)x, (void)y, (void)n; /* never selected without AVX2 (ops/reduce.c) */
}
#endif
