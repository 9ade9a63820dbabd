/* The AVX2 tiles of the blocked (NCHW16c) convolution (kernels/blocked_conv.h). This file
 * alone is compiled with -mavx2 -mfma; it runs only where the dispatch table
 * (kernels/dispatch.h) picks AVX2 for the blocked convolution.
 *
 * Dense: 1 output block x up to 6 pixels of one output row, 12 YMM accumulators (each
 * pixel's 16 output channels are two YMMs). Per input channel and tap: 2 weight loads and
 * one broadcast input scalar per pixel for 2 FMAs, so 8 loads feed 12 FMAs, the ratio of
 * the AVX2 GEMM's 6 x 16 tile, with no im2col copy and no B packing. The AVX-512 file's
 * 28-accumulator wide tiles, two-row tiles and chunked planes need 32 registers; with 16
 * the one tile shape serves every plane, and a row's pixels are split into tiles of equal
 * width (7: 4 + 3, not 6 + 1) so that no tile runs at a sixth of its FMA rate.
 *
 * Depthwise: up to 6 pixels of one row of a channel block, 12 YMM accumulators, one
 * input load per pixel and tap for each half.
 *
 * Taps in the padding: each pixel gets its own pointer, to a zero block where its tap
 * falls outside the input row, as in the AVX-512 border tile. */
#include <immintrin.h>

#include "kernels/blocked_conv_impl.h"

#if defined(__AVX2__) && defined(__FMA__)
#include "kernels/blocked_avx2.h"

#define PX 6 /* pixels per tile */
#define INLINE static inline __attribute__((always_inline))

static const float zero_block[NNP_BLOCK] __attribute__((aligned(32))) = {0};

INLINE void store_tile(const nnp_bconv_kernel *k, const float *r, float *y, int64_t ob, int64_t oh, int64_t ow0,
                       const int np, const __m256 *lo, const __m256 *hi) {
  const nnp_conv2d_desc *d = &k->d;
  const int64_t o = ((ob * d->oh + oh) * d->ow + ow0) * NNP_BLOCK;
#pragma GCC unroll 6
  for (int p = 0; p < np; p++)
    nnp_blocked_store16_avx2(k->bias + ob * NNP_BLOCK, &k->ep, k->d.m - ob * NNP_BLOCK, lo[p], hi[p],
                             r ? r + o + p * NNP_BLOCK : NULL, y + o + p * NNP_BLOCK);
}

/* The FMAs of one tap over the tile: pixel p's input channel i is at XP(p)[i]. */
#define DENSE_TAP(XP)                                                      \
  for (int64_t i = 0; i < cvalid; i++) {                                   \
    const __m256 w_lo = _mm256_load_ps(wk + i * NNP_BLOCK);                \
    const __m256 w_hi = _mm256_load_ps(wk + i * NNP_BLOCK + 8);            \
    _Pragma("GCC unroll 6") for (int p = 0; p < np; p++) {                 \
      const __m256 xb = _mm256_broadcast_ss(XP(p) + i);                    \
      lo[p] = _mm256_fmadd_ps(xb, w_lo, lo[p]);                            \
      hi[p] = _mm256_fmadd_ps(xb, w_hi, hi[p]);                            \
    }                                                                      \
  }
#define INSIDE(p) (xp + (p) * xs)
#define PER_PIXEL(p) (xpp[p])

INLINE void dense_tile(const nnp_bconv_kernel *k, const float *x, float *y, const float *r, int64_t ob, int64_t oh,
                       int64_t ow0, const int np) {
  const nnp_conv2d_desc *d = &k->d;
  const int64_t taps = d->kh * d->kw;
  const float *w0 = k->w + ob * k->cb * taps * NNP_BLOCK * NNP_BLOCK;
  __m256 lo[PX], hi[PX];
#pragma GCC unroll 6
  for (int p = 0; p < PX; p++) lo[p] = hi[p] = _mm256_setzero_ps();
  for (int64_t cb = 0; cb < k->cb; cb++) {
    const int64_t cvalid = d->c - cb * NNP_BLOCK < NNP_BLOCK ? d->c - cb * NNP_BLOCK : NNP_BLOCK;
    for (int64_t kh = 0; kh < d->kh; kh++) {
      const int64_t ih = oh * d->sh - d->ph + kh * d->dh;
      if (ih < 0 || ih >= d->h) continue;
      const float *xrow = x + (cb * d->h + ih) * d->w * NNP_BLOCK;
      for (int64_t kw = 0; kw < d->kw; kw++) {
        const float *wk = w0 + (cb * taps + kh * d->kw + kw) * NNP_BLOCK * NNP_BLOCK;
        const int64_t iw0 = ow0 * d->sw - d->pw + kw * d->dw;
        if (iw0 >= 0 && iw0 + (np - 1) * d->sw < d->w) {
          const float *xp = xrow + iw0 * NNP_BLOCK;
          const int64_t xs = d->sw * NNP_BLOCK;
          DENSE_TAP(INSIDE)
        } else { /* a border: taps in the padding read a zero block */
          const float *xpp[PX];
          int any = 0;
#pragma GCC unroll 6
          for (int p = 0; p < np; p++) {
            const int64_t iw = iw0 + p * d->sw;
            const int in = iw >= 0 && iw < d->w;
            xpp[p] = in ? xrow + iw * NNP_BLOCK : zero_block;
            any |= in;
          }
          if (any) DENSE_TAP(PER_PIXEL)
        }
      }
    }
  }
  store_tile(k, r, y, ob, oh, ow0, np, lo, hi);
}
#undef DENSE_TAP
#undef INSIDE
#undef PER_PIXEL

INLINE void dw_tile(const nnp_bconv_kernel *k, const float *x, float *y, const float *r, int64_t cb, int64_t oh,
                    int64_t ow0, const int np) {
  const nnp_conv2d_desc *d = &k->d;
  const float *wb = k->w + cb * d->kh * d->kw * NNP_BLOCK;
  __m256 lo[PX], hi[PX];
#pragma GCC unroll 6
  for (int p = 0; p < PX; p++) lo[p] = hi[p] = _mm256_setzero_ps();
  for (int64_t kh = 0; kh < d->kh; kh++) {
    const int64_t ih = oh * d->sh - d->ph + kh * d->dh;
    if (ih < 0 || ih >= d->h) continue;
    const float *xrow = x + (cb * d->h + ih) * d->w * NNP_BLOCK;
    for (int64_t kw = 0; kw < d->kw; kw++) {
      const float *wt = wb + (kh * d->kw + kw) * NNP_BLOCK;
      const __m256 w_lo = _mm256_load_ps(wt), w_hi = _mm256_load_ps(wt + 8);
      const int64_t iw0 = ow0 * d->sw - d->pw + kw * d->dw;
      const int inside = iw0 >= 0 && iw0 + (np - 1) * d->sw < d->w;
#pragma GCC unroll 6
      for (int p = 0; p < np; p++) {
        const int64_t iw = iw0 + p * d->sw;
        if (!inside && (iw < 0 || iw >= d->w)) continue;
        const float *xv = xrow + iw * NNP_BLOCK;
        lo[p] = _mm256_fmadd_ps(_mm256_loadu_ps(xv), w_lo, lo[p]);
        hi[p] = _mm256_fmadd_ps(_mm256_loadu_ps(xv + 8), w_hi, hi[p]);
      }
    }
  }
  store_tile(k, r, y, cb, oh, ow0, np, lo, hi);
}

typedef void (*tile_fn)(const nnp_bconv_kernel *, const float *, float *, const float *, int64_t, int64_t, int64_t);

/* One function per pixel count: the constant keeps the accumulators in registers. */
#define VARIANT(NAME, NP)                                                                                     \
  static void NAME##_##NP(const nnp_bconv_kernel *k, const float *x, float *y, const float *r, int64_t b,     \
                          int64_t oh, int64_t ow0) {                                                          \
    NAME##_tile(k, x, y, r, b, oh, ow0, NP);                                                                  \
  }
#define VARIANTS(NAME) \
  VARIANT(NAME, 1) VARIANT(NAME, 2) VARIANT(NAME, 3) VARIANT(NAME, 4) VARIANT(NAME, 5) VARIANT(NAME, 6)
VARIANTS(dense)
VARIANTS(dw)
static const tile_fn dense_fns[PX] = {dense_1, dense_2, dense_3, dense_4, dense_5, dense_6};
static const tile_fn dw_fns[PX] = {dw_1, dw_2, dw_3, dw_4, dw_5, dw_6};

/* A row of ow pixels in tiles of equal width (at most PX each) */
static void row_tiles(const tile_fn *fns, const nnp_bconv_kernel *k, const float *x, float *y, const float *r,
                      int64_t b, int64_t oh) {
  const int64_t ow = k->d.ow, tiles = (ow + PX - 1) / PX;
  for (int64_t t = 0, ow0 = 0; t < tiles; t++) {
    const int64_t ow1 = (t + 1) * ow / tiles; /* the first tiles get the smaller share */
    fns[ow1 - ow0 - 1](k, x, y, r, b, oh, ow0);
    ow0 = ow1;
  }
}

/* r[i] := column i of the 8 x 8 matrix whose rows were r[0..7] */
static inline void transpose8(__m256 *r) {
  const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
  const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xee);
  const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xee);
  const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xee);
  const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xee);
  r[0] = _mm256_permute2f128_ps(u0, u4, 0x20), r[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
  r[2] = _mm256_permute2f128_ps(u2, u6, 0x20), r[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
  r[4] = _mm256_permute2f128_ps(u0, u4, 0x31), r[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
  r[6] = _mm256_permute2f128_ps(u2, u6, 0x31), r[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

void nnp_to_blocked_avx2(const float *planes, int64_t hw, float *blk, int64_t p0, int64_t p1) {
  int64_t q = p0;
  for (; q + 8 <= p1; q += 8)
    for (int half = 0; half < NNP_BLOCK; half += 8) { /* rows: 8 planes' pixels q..q+7 */
      __m256 r[8];
      for (int l = 0; l < 8; l++) r[l] = _mm256_loadu_ps(planes + (half + l) * hw + q);
      transpose8(r);
      for (int i = 0; i < 8; i++) _mm256_storeu_ps(blk + (q + i) * NNP_BLOCK + half, r[i]);
    }
  for (; q < p1; q++) /* the chunk's last pixels, one at a time */
    for (int l = 0; l < NNP_BLOCK; l++) blk[q * NNP_BLOCK + l] = planes[l * hw + q];
}

void nnp_from_blocked_avx2(const float *blk, int64_t hw, float *planes, int64_t p0, int64_t p1) {
  int64_t q = p0;
  for (; q + 8 <= p1; q += 8)
    for (int half = 0; half < NNP_BLOCK; half += 8) { /* rows: 8 pixels' half blocks */
      __m256 r[8];
      for (int i = 0; i < 8; i++) r[i] = _mm256_loadu_ps(blk + (q + i) * NNP_BLOCK + half);
      transpose8(r);
      for (int l = 0; l < 8; l++) _mm256_storeu_ps(planes + (half + l) * hw + q, r[l]);
    }
  for (; q < p1; q++)
    for (int l = 0; l < NNP_BLOCK; l++) planes[l * hw + q] = blk[q * NNP_BLOCK + l];
}

void nnp_bconv_dense_row_avx2(const nnp_bconv_kernel *k, const float *x, float *y, const float *r, int64_t ob,
                              int nb, int64_t oh) {
  for (int b = 0; b < nb; b++) row_tiles(dense_fns, k, x, y, r, ob + b, oh);
}

void nnp_bconv_dw_row_avx2(const nnp_bconv_kernel *k, const float *x, float *y, const float *r, int64_t cb,
                           int64_t oh) {
  row_tiles(dw_fns, k, x, y, r, cb, oh);
}
#else
/* Built without AVX2 support in the compiler: never selected (see kernels/cpu.c). */
void nnp_to_blocked_avx2(const float *planes, int64_t hw, float *blk, int64_t p0, int64_t p1) {
  for (int64_t q = p0; q < p1; q++)
    for (int l = 0; l < NNP_BLOCK; l++) blk[q * NNP_BLOCK + l] = planes[l * hw + q];
}
void nnp_from_blocked_avx2(const float *blk, int64_t hw, float *planes, int64_t p0, int64_t p1) {
  for (int64_t q = p0; q < p1; q++)
    for (int l = 0; l < NNP_BLOCK; l++) planes[l * hw + q] = blk[q * NNP_BLOCK + l];
}
void nnp_bconv_dense_row_avx2(const nnp_bconv_kernel *k, const float *x, float *y, const float *r, int64_t ob,
                              int nb, int64_t oh) {
  for (int b = 0; b < nb; b++) nnp_bconv_dense_row_generic(k, x, y, r, ob + b, oh);
}
void nnp_bconv_dw_row_avx2(const nnp_bconv_kernel *k, const float *x, float *y, const float *r, int64_t cb,
                           int64_t oh) {
  nnp_bconv_dw_row_generic(k, x, y, r, cb, oh);
}
#endif
