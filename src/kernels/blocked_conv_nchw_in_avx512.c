/* The AVX-512F tile of the NCHW-in, NCHW16c-out convolution (kernels/blocked_conv_nchw_in.h;
 * this file gets -mavx512f, it runs only where the dispatch table (kernels/dispatch.h) picks AVX-512). One output row:
 * 1 or 2 output blocks x up to 14 pixels, 28 ZMM accumulators; per input channel and
 * tap, 1-2 weight vectors and one broadcast input scalar per pixel, read straight from
 * the input plane (stride 1 and 2 as compile-time constants, so the broadcasts address
 * off one pointer). A tap whose pixels run into the padding checks each pixel. */
#include "kernels/blocked_conv_nchw_in.h"

#include <immintrin.h>

#include "kernels/blocked_conv.h"

#if defined(__AVX512F__)
#include "kernels/act_avx512.h"

#define PX 14
#define INLINE static inline __attribute__((always_inline))

INLINE void store_px(const nnp_bconv_nchw_kernel *k, int64_t ob, __m512 v, const float *r, float *y) {
  v = _mm512_add_ps(v, _mm512_load_ps(k->bias + ob * NNP_BLOCK));
  if (r) v = _mm512_add_ps(v, _mm512_loadu_ps(r));
  if (k->ep.act == NNP_ACT_SIGMOID) { /* scalar expf, as the generic kernel */
    float t[NNP_BLOCK];
    _mm512_storeu_ps(t, v);
    for (int l = 0; l < NNP_BLOCK; l++) t[l] = nnp_act_apply(&k->ep, t[l]);
    v = _mm512_loadu_ps(t);
  } else {
    v = nnp_act16(&k->ep, v);
  }
  const int64_t valid = k->d.m - ob * NNP_BLOCK;
  if (valid < NNP_BLOCK) v = _mm512_maskz_mov_ps((__mmask16)((1u << valid) - 1u), v);
  _mm512_storeu_ps(y, v);
}

/* sw: the stride when it is 1 or 2 (a constant), 0 for any other (read from d) */
INLINE void tile(const nnp_bconv_nchw_kernel *k, const float *x, float *y, const float *r, int64_t ob, const int nb,
                 int64_t oh, int64_t ow0, const int np, const int sw_c) {
  const nnp_conv2d_desc *d = &k->d;
  const int64_t sw = sw_c ? sw_c : d->sw, taps = d->kh * d->kw, ws = taps * NNP_BLOCK;
  const float *w0 = k->w + ob * d->c * ws;
  const int64_t wnext = d->c * ws;
  __m512 a0[PX], a1[PX];
#pragma GCC unroll 14
  for (int p = 0; p < PX; p++) a0[p] = a1[p] = _mm512_setzero_ps();
  for (int64_t ic = 0; ic < d->c; ic++) {
    for (int64_t kh = 0; kh < d->kh; kh++) {
      const int64_t ih = oh * d->sh - d->ph + kh * d->dh;
      if (ih < 0 || ih >= d->h) continue;
      const float *xrow = x + (ic * d->h + ih) * d->w;
      const float *wk = w0 + (ic * taps + kh * d->kw) * NNP_BLOCK;
      for (int64_t kw = 0; kw < d->kw; kw++, wk += NNP_BLOCK) {
        const __m512 wv0 = _mm512_load_ps(wk), wv1 = nb > 1 ? _mm512_load_ps(wk + wnext) : wv0;
        const int64_t iw0 = ow0 * sw - d->pw + kw * d->dw;
        if (iw0 >= 0 && iw0 + (np - 1) * sw < d->w) {
          const float *xp = xrow + iw0;
#pragma GCC unroll 14
          for (int p = 0; p < np; p++) {
            const __m512 xb = _mm512_set1_ps(xp[p * sw]);
            a0[p] = _mm512_fmadd_ps(xb, wv0, a0[p]);
            if (nb > 1) a1[p] = _mm512_fmadd_ps(xb, wv1, a1[p]);
          }
        } else {
#pragma GCC unroll 14
          for (int p = 0; p < np; p++) {
            const int64_t iw = iw0 + p * sw;
            if (iw < 0 || iw >= d->w) continue;
            const __m512 xb = _mm512_set1_ps(xrow[iw]);
            a0[p] = _mm512_fmadd_ps(xb, wv0, a0[p]);
            if (nb > 1) a1[p] = _mm512_fmadd_ps(xb, wv1, a1[p]);
          }
        }
      }
    }
  }
  const int64_t o0 = ((ob * d->oh + oh) * d->ow + ow0) * NNP_BLOCK, o1 = o0 + d->oh * d->ow * NNP_BLOCK;
#pragma GCC unroll 14
  for (int p = 0; p < np; p++) store_px(k, ob, a0[p], r ? r + o0 + p * NNP_BLOCK : NULL, y + o0 + p * NNP_BLOCK);
  if (nb > 1) {
#pragma GCC unroll 14
    for (int p = 0; p < np; p++)
      store_px(k, ob + 1, a1[p], r ? r + o1 + p * NNP_BLOCK : NULL, y + o1 + p * NNP_BLOCK);
  }
}

typedef void (*tile_fn)(const nnp_bconv_nchw_kernel *, const float *, float *, const float *, int64_t, int64_t,
                        int64_t, int);

/* One function per (blocks, pixels): constants keep a0/a1 in registers; the stride
 * picks its body inside. */
#define TILE_VARIANT(NB, NP)                                                                                 \
  static void tile_##NB##_##NP(const nnp_bconv_nchw_kernel *k, const float *x, float *y, const float *r,   \
                               int64_t ob, int64_t oh, int64_t ow0, int sw) {                               \
    if (sw == 1) tile(k, x, y, r, ob, NB, oh, ow0, NP, 1);                                                   \
    else if (sw == 2) tile(k, x, y, r, ob, NB, oh, ow0, NP, 2);                                              \
    else tile(k, x, y, r, ob, NB, oh, ow0, NP, 0);                                                           \
  }
#define TILE_VARIANTS(NB)                                                                                    \
  TILE_VARIANT(NB, 1) TILE_VARIANT(NB, 2) TILE_VARIANT(NB, 3) TILE_VARIANT(NB, 4) TILE_VARIANT(NB, 5)         \
  TILE_VARIANT(NB, 6) TILE_VARIANT(NB, 7) TILE_VARIANT(NB, 8) TILE_VARIANT(NB, 9) TILE_VARIANT(NB, 10)        \
  TILE_VARIANT(NB, 11) TILE_VARIANT(NB, 12) TILE_VARIANT(NB, 13) TILE_VARIANT(NB, 14)
TILE_VARIANTS(1)
TILE_VARIANTS(2)

static const tile_fn tiles[2][PX] = {
    {tile_1_1, tile_1_2, tile_1_3, tile_1_4, tile_1_5, tile_1_6, tile_1_7, tile_1_8, tile_1_9, tile_1_10, tile_1_11,
     tile_1_12, tile_1_13, tile_1_14},
    {tile_2_1, tile_2_2, tile_2_3, tile_2_4, tile_2_5, tile_2_6, tile_2_7, tile_2_8, tile_2_9, tile_2_10, tile_2_11,
     tile_2_12, tile_2_13, tile_2_14}};

void nnp_bconv_nchw_row_avx512(const nnp_bconv_nchw_kernel *k, const float *x, float *y, const float *r, int64_t ob,
                               int nb, int64_t oh) {
  for (int64_t ow0 = 0; ow0 < k->d.ow; ow0 += PX) {
    const int np = k->d.ow - ow0 < PX ? (int)(k->d.ow - ow0) : PX;
    tiles[nb - 1][np - 1](k, x, y, r, ob, oh, ow0, (int)k->d.sw);
  }
}
#else
/* Built without AVX-512 support in the compiler: never selected (see kernels/cpu.c). */
void nnp_bconv_nchw_row_avx512(const nnp_bconv_nchw_kernel *k, const float *x, float *y, const float *r, int64_t ob,
                               int nb, int64_t oh) {
  nnp_bconv_nchw_row_generic(k, x, y, r, ob, nb, oh);
}
#endif
