/* The AVX2 row of the blocked MaxPool and AveragePool (kernels/blocked_pool.h): two YMMs
 * per output pixel (its 16 channels), the max or the sum over the window's in-bounds taps.
 * This file alone is compiled with -mavx2 -mfma; it runs only where the dispatch table
 * (kernels/dispatch.h) picks AVX2 for the blocked pool.
 *
 * _mm256_max_ps(v, m) is `v > m ? v : m` lane by lane, the generic kernel's comparison,
 * so a NaN input is skipped the same way and the two are equal bit for bit. */
#include <immintrin.h>
#include <math.h>

#include "kernels/blocked_conv.h"
#include "kernels/blocked_pool.h"

#if defined(__AVX2__)
/* One half (8 channels, at offset half) of the window sum (average) or max of output ow,
 * in the generic rows' order */
static inline __m256 window(const nnp_pool2d_desc *d, bool average, const float *x, int64_t hs, int64_t h0,
                            int64_t h1, int64_t ow, int half) {
  const int64_t ws = ow * d->sw - d->pw;
  int64_t w0, w1;
  nnp_pool_taps(ow, d->sw, d->pw, d->kw, d->w, &w0, &w1);
  __m256 m = average ? _mm256_setzero_ps() : _mm256_set1_ps(-INFINITY);
  for (int64_t kh = h0; kh < h1; kh++) {
    const float *at = x + ((hs + kh) * d->w + ws) * NNP_BLOCK + half; /* tap (kh, 0), maybe left of the row */
    if (average)
      for (int64_t kw = w0; kw < w1; kw++) m = _mm256_add_ps(m, _mm256_loadu_ps(at + kw * NNP_BLOCK));
    else
      for (int64_t kw = w0; kw < w1; kw++) m = _mm256_max_ps(_mm256_loadu_ps(at + kw * NNP_BLOCK), m);
  }
  return m;
}

void nnp_pool2d_blocked_row_avx2(const nnp_pool2d_desc *d, const nnp_avgpool2d_desc *a, const float *x, float *y,
                                 int64_t oh) {
  const int64_t hs = oh * d->sh - d->ph; /* the window's first row, maybe padding */
  int64_t h0, h1;
  nnp_pool_taps(oh, d->sh, d->ph, d->kh, d->h, &h0, &h1);
  const int64_t ch = a ? nnp_avgpool_count(oh, d->sh, d->ph, a->ph_end, d->kh, d->h, a->include_pad) : 0;
  for (int64_t ow = 0; ow < d->ow; ow++) {
    const int64_t cnt = a ? ch * nnp_avgpool_count(ow, d->sw, d->pw, a->pw_end, d->kw, d->w, a->include_pad) : 1;
    for (int half = 0; half < NNP_BLOCK; half += 8) {
      __m256 m = window(d, a != NULL, x, hs, h0, h1, ow, half);
      if (a) m = cnt > 0 ? _mm256_div_ps(m, _mm256_set1_ps((float)cnt)) : _mm256_setzero_ps();
      _mm256_storeu_ps(y + ow * NNP_BLOCK + half, m);
    }
  }
}
#else
/* Built without AVX2 support in the compiler: never selected (see kernels/cpu.c). */
void nnp_pool2d_blocked_row_avx2(const nnp_pool2d_desc *d, const nnp_avgpool2d_desc *a, const float *x, float *y,
                                 int64_t oh) {
  (void)d, (void)a, (void)x, (void)y, (void)oh;
}
#endif
