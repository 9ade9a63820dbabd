/* The AVX-512F row of the blocked MaxPool and AveragePool (kernels/blocked_pool.h): one
 * ZMM per output pixel, the max or the sum over the window's in-bounds taps. This file alone is compiled with
 * -mavx512f; it runs only where the dispatch table (kernels/dispatch.h) picks AVX-512.
 *
 * _mm512_max_ps(v, m) is `v > m ? v : m` lane by lane, the generic kernel's comparison,
 * so a NaN input is skipped the same way and the two are equal bit for bit. */
#include <immintrin.h>
#include <math.h>

#include "kernels/blocked_conv.h"
#include "kernels/blocked_pool.h"

#if defined(__AVX512F__)
/* The window sum (a: average) or max of output (oh, ow): the generic rows' order */
static inline __m512 window(const nnp_pool2d_desc *d, bool average, const float *x, int64_t hs, int64_t h0,
                            int64_t h1, int64_t ow) {
  const int64_t ws = ow * d->sw - d->pw;
  int64_t w0, w1;
  nnp_pool_taps(ow, d->sw, d->pw, d->kw, d->w, &w0, &w1);
  __m512 m = average ? _mm512_setzero_ps() : _mm512_set1_ps(-INFINITY);
  for (int64_t kh = h0; kh < h1; kh++) {
    const int64_t at = (hs + kh) * d->w + ws; /* tap (kh, 0), maybe left of the row */
    if (average)
      for (int64_t kw = w0; kw < w1; kw++) m = _mm512_add_ps(m, _mm512_loadu_ps(x + (at + kw) * NNP_BLOCK));
    else
      for (int64_t kw = w0; kw < w1; kw++) m = _mm512_max_ps(_mm512_loadu_ps(x + (at + kw) * NNP_BLOCK), m);
  }
  return m;
}

void nnp_pool2d_blocked_row_avx512(const nnp_pool2d_desc *d, const nnp_avgpool2d_desc *a, const float *x, float *y,
                                   int64_t oh) {
  const int64_t hs = oh * d->sh - d->ph; /* the window's first row, maybe padding */
  int64_t h0, h1;
  nnp_pool_taps(oh, d->sh, d->ph, d->kh, d->h, &h0, &h1);
  if (!a) {
    for (int64_t ow = 0; ow < d->ow; ow++) _mm512_storeu_ps(y + ow * NNP_BLOCK, window(d, false, x, hs, h0, h1, ow));
    return;
  }
  const int64_t ch = nnp_avgpool_count(oh, d->sh, d->ph, a->ph_end, d->kh, d->h, a->include_pad);
  for (int64_t ow = 0; ow < d->ow; ow++) {
    const __m512 m = window(d, true, x, hs, h0, h1, ow);
    const int64_t cnt = ch * nnp_avgpool_count(ow, d->sw, d->pw, a->pw_end, d->kw, d->w, a->include_pad);
    _mm512_storeu_ps(y + ow * NNP_BLOCK, cnt > 0 ? _mm512_div_ps(m, _mm512_set1_ps((float)cnt)) : _mm512_setzero_ps());
  }
}
#else
/* Built without AVX-512 support in the compiler: never selected (see kernels/cpu.c). */
void nnp_pool2d_blocked_row_avx512(const nnp_pool2d_desc *d, const nnp_avgpool2d_desc *a, const float *x, float *y,
                                   int64_t oh) {
  (void)d, (void)a, (void)x, (void)y, (void)oh;
}
#endif
