/* GELU on AVX-512F (kernels/ewprog.h): ewprog_avx2.c's GELU loop with 16 lanes and the
 * reciprocal estimate of AVX-512 (14 bits) before the same Newton step. This file alone
 * gets -mavx512f. */
#include "kernels/ewprog.h"

#include <immintrin.h>

#if defined(__AVX512F__)
#include "kernels/exp_avx512.h"

/* erf by Abramowitz and Stegun 7.1.26, as erf8 in ewprog_avx2.c */
static inline __m512 erf16(__m512 v) {
  const __m512 x = _mm512_abs_ps(v), one = _mm512_set1_ps(1.0f);
  const __m512 d = _mm512_fmadd_ps(_mm512_set1_ps(0.3275911f), x, one);
  __m512 t = _mm512_rcp14_ps(d);
  t = _mm512_mul_ps(t, _mm512_fnmadd_ps(d, t, _mm512_set1_ps(2.0f)));
  __m512 p = _mm512_set1_ps(1.061405429f);
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-1.453152027f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(1.421413741f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-0.284496736f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(0.254829592f));
  const __m512 e = nnp_exp16(_mm512_sub_ps(_mm512_setzero_ps(), _mm512_mul_ps(x, x)));
  const __m512 y = _mm512_fnmadd_ps(_mm512_mul_ps(p, t), e, one);
  /* the sign of v back on y (y >= 0) */
  return _mm512_castsi512_ps(_mm512_or_epi32(_mm512_castps_si512(y),
                                             _mm512_and_epi32(_mm512_castps_si512(v), _mm512_set1_epi32(INT32_MIN))));
}

static inline __m512 gelu16(__m512 x, __m512 s, __m512 a, __m512 h) {
  return _mm512_mul_ps(_mm512_mul_ps(_mm512_add_ps(erf16(_mm512_mul_ps(x, s)), a), x), h);
}

void nnp_gelu_run_avx512(const float *x, float *y, int64_t i0, int64_t i1, float s, float a, float h) {
  const __m512 vs = _mm512_set1_ps(s), va = _mm512_set1_ps(a), vh = _mm512_set1_ps(h);
  int64_t i = i0;
  for (; i + 16 <= i1; i += 16) _mm512_storeu_ps(y + i, gelu16(_mm512_loadu_ps(x + i), vs, va, vh));
  if (i == i1) return;
  const __mmask16 m = (__mmask16)((1u << (i1 - i)) - 1u); /* the last 1..15 */
  _mm512_mask_storeu_ps(y + i, m, gelu16(_mm512_maskz_loadu_ps(m, x + i), vs, va, vh));
}
#else
void nnp_gelu_run_avx512(const float *x, float *y, int64_t i0, int64_t i1, float s, float a, float h) {
  nnp_gelu_run_avx2(x, y, i0, i1, s, a, h); /* built without AVX-512: never selected (kernels/cpu.c) */
}
#endif
