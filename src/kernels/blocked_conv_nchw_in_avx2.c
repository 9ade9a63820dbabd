/* The AVX2 tile of the NCHW-in, NCHW16c-out convolution (kernels/blocked_conv_nchw_in.h;
 * this file gets -mavx2 -mfma, it runs only where the dispatch table (kernels/dispatch.h)
 * picks AVX2 for the blocked convolution). One output block x up to 6 pixels of one output
 * row, 12 YMM accumulators; per input channel and tap, the block's weights as two YMMs and
 * one broadcast input scalar per pixel, read straight from the input plane. A tap whose
 * pixels run into the padding checks each pixel. */
#include "kernels/blocked_conv_nchw_in.h"

#include <immintrin.h>

#if defined(__AVX2__) && defined(__FMA__)
#include "kernels/blocked_avx2.h"

#define PX 6
#define INLINE static inline __attribute__((always_inline))

INLINE void tile(const nnp_bconv_nchw_kernel *k, const float *x, float *y, const float *r, int64_t ob, int64_t oh,
                 int64_t ow0, const int np) {
  const nnp_conv2d_desc *d = &k->d;
  const int64_t sw = d->sw, taps = d->kh * d->kw;
  const float *w0 = k->w + ob * d->c * taps * NNP_BLOCK;
  __m256 lo[PX], hi[PX];
#pragma GCC unroll 6
  for (int p = 0; p < PX; p++) lo[p] = hi[p] = _mm256_setzero_ps();
  for (int64_t ic = 0; ic < d->c; ic++) {
    for (int64_t kh = 0; kh < d->kh; kh++) {
      const int64_t ih = oh * d->sh - d->ph + kh * d->dh;
      if (ih < 0 || ih >= d->h) continue;
      const float *xrow = x + (ic * d->h + ih) * d->w;
      const float *wk = w0 + (ic * taps + kh * d->kw) * NNP_BLOCK;
      for (int64_t kw = 0; kw < d->kw; kw++, wk += NNP_BLOCK) {
        const __m256 w_lo = _mm256_load_ps(wk), w_hi = _mm256_load_ps(wk + 8);
        const int64_t iw0 = ow0 * sw - d->pw + kw * d->dw;
        const int inside = iw0 >= 0 && iw0 + (np - 1) * sw < d->w;
#pragma GCC unroll 6
        for (int p = 0; p < np; p++) {
          const int64_t iw = iw0 + p * sw;
          if (!inside && (iw < 0 || iw >= d->w)) continue;
          const __m256 xb = _mm256_broadcast_ss(xrow + iw);
          lo[p] = _mm256_fmadd_ps(xb, w_lo, lo[p]);
          hi[p] = _mm256_fmadd_ps(xb, w_hi, hi[p]);
        }
      }
    }
  }
  const int64_t o = ((ob * d->oh + oh) * d->ow + ow0) * NNP_BLOCK;
#pragma GCC unroll 6
  for (int p = 0; p < np; p++)
    nnp_blocked_store16_avx2(k->bias + ob * NNP_BLOCK, &k->ep, d->m - ob * NNP_BLOCK, lo[p], hi[p],
                             r ? r + o + p * NNP_BLOCK : NULL, y + o + p * NNP_BLOCK);
}

typedef void (*tile_fn)(const nnp_bconv_nchw_kernel *, const float *, float *, const float *, int64_t, int64_t,
                        int64_t);
#define TILE_VARIANT(NP)                                                                                     \
  static void tile_##NP(const nnp_bconv_nchw_kernel *k, const float *x, float *y, const float *r, int64_t ob, \
                        int64_t oh, int64_t ow0) {                                                           \
    tile(k, x, y, r, ob, oh, ow0, NP);                                                                       \
  }
TILE_VARIANT(1) TILE_VARIANT(2) TILE_VARIANT(3) TILE_VARIANT(4) TILE_VARIANT(5) TILE_VARIANT(6)
static const tile_fn tiles[PX] = {tile_1, tile_2, tile_3, tile_4, tile_5, tile_6};

void nnp_bconv_nchw_row_avx2(const nnp_bconv_nchw_kernel *k, const float *x, float *y, const float *r, int64_t ob,
                             int nb, int64_t oh) {
  const int64_t ow = k->d.ow, n_tiles = (ow + PX - 1) / PX;
  for (int b = 0; b < nb; b++)
    for (int64_t t = 0, ow0 = 0; t < n_tiles; t++) { /* tiles of equal width, as blocked_conv_avx2.c */
      const int64_t ow1 = (t + 1) * ow / n_tiles;
      tiles[ow1 - ow0 - 1](k, x, y, r, ob + b, oh, ow0);
      ow0 = ow1;
    }
}
#else
/* Built without AVX2 support in the compiler: never selected (see kernels/cpu.c). */
void nnp_bconv_nchw_row_avx2(const nnp_bconv_nchw_kernel *k, const float *x, float *y, const float *r, int64_t ob,
                             int nb, int64_t oh) {
  nnp_bconv_nchw_row_generic(k, x, y, r, ob, nb, oh);
}
#endif
