/* The AVX-512F row of the blocked MaxPool (kernels/blocked_pool.h): one ZMM per output
 * pixel, the max over the window's in-bounds taps. This file alone is compiled with
 * -mavx512f; it runs only after nnp_cpu_has_avx512f().
 *
 * _mm512_max_ps(v, m) is `v > m ? v : m` lane by lane, the generic kernel's comparison,
 * so a NaN input is skipped the same way and the two are equal bit for bit. */
#include <immintrin.h>
#include <math.h>

#include "kernels/blocked_conv.h"
#include "kernels/blocked_pool.h"

#if defined(__AVX512F__)
void nnp_maxpool2d_blocked_row_avx512(const nnp_pool2d_desc *d, const float *x, float *y, int64_t oh) {
  const int64_t h0 = oh * d->sh - d->ph;
  const int64_t ih0 = h0 < 0 ? 0 : h0, ih1 = h0 + d->kh < d->h ? h0 + d->kh : d->h;
  for (int64_t ow = 0; ow < d->ow; ow++) {
    const int64_t w0 = ow * d->sw - d->pw;
    const int64_t iw0 = w0 < 0 ? 0 : w0, iw1 = w0 + d->kw < d->w ? w0 + d->kw : d->w;
    __m512 m = _mm512_set1_ps(-INFINITY);
    for (int64_t ih = ih0; ih < ih1; ih++) {
      const float *r = x + ih * d->w * NNP_BLOCK;
      for (int64_t iw = iw0; iw < iw1; iw++) m = _mm512_max_ps(_mm512_loadu_ps(r + iw * NNP_BLOCK), m);
    }
    _mm512_storeu_ps(y + ow * NNP_BLOCK, m);
  }
}
#else
/* Built without AVX-512 support in the compiler: never selected (see kernels/cpu.c). */
void nnp_maxpool2d_blocked_row_avx512(const nnp_pool2d_desc *d, const float *x, float *y, int64_t oh) {
  (void)d, (void)x, (void)y, (void)oh;
}
#endif
