/* The AVX-512F tiles of the blocked (NCHW16c) convolution (kernels/blocked_conv.h).
 * This file alone is compiled with -mavx512f; it runs only where the dispatch table (kernels/dispatch.h) picks AVX-512.
 *
 * Dense, strides 1 and 2: the wide tile (dense_wide below), 1-2 blocks x up to 14
 * pixels, or two rows of a plane at most 7 wide. Other strides: the border tile,
 * 1 or 2 output channel blocks x up to 8 output pixels of one output row,
 * 16 ZMM accumulators. Per input channel and tap it loads 1-2 weight vectors (16 output
 * channels each, packed [ob][icb][kh][kw][16 ic][16]) and broadcasts one input scalar per pixel
 * for 1-2 FMAs, so the inner loop is 8 broadcasts + 16 FMAs + 2 loads: the GEMM tile's
 * ratio, without the im2col copy. Padded input channels are not visited (the loop runs
 * over the real channels of the last block only).
 *
 * Where a tap's 8 pixels are all inside the input row, their inputs are one base pointer
 * plus a stride; at the borders (padding) each pixel gets its own pointer, to a zero
 * block where the tap falls into the padding. The pixel count and the block count are
 * compile-time constants of each tile variant, so the accumulator arrays stay in
 * registers.
 *
 * Depthwise tiles: per channel block, 8 pixels as 8 vectors over the block's 16 channels,
 * one FMA per pixel and tap with the tap's 16 weights; at strides 1 and 2 with 3, 5 or 7
 * taps a row, each input vector is loaded once per row of taps (dw_regs_tile). */
#include <immintrin.h>
#include <math.h>

#include "kernels/blocked_conv_impl.h"

#if defined(__AVX512F__)
#include "kernels/act_avx512.h"

#define PX 8   /* output pixels per border tile */
#define PXW NNP_BCONV_WIDE_PX /* output pixels per wide tile (strides 1 and 2) */
#define INLINE static inline __attribute__((always_inline))

static const float zero_block[NNP_BLOCK] __attribute__((aligned(64))) = {0};

/* nnp_act16, plus sigmoid (the blocked tiles have no scalar path to leave it to) */
INLINE __m512 act16(const nnp_epilogue *ep, __m512 v) {
  switch (ep->act) {
    case NNP_ACT_SIGMOID: { /* scalar expf, as the generic kernel */
      float t[NNP_BLOCK];
      _mm512_storeu_ps(t, v);
      for (int l = 0; l < NNP_BLOCK; l++) t[l] = nnp_act_apply(ep, t[l]);
      return _mm512_loadu_ps(t);
    }
    default: return nnp_act16(ep, v);
  }
}

/* The epilogue of one pixel of block ob: bias, residual (read before y is written: y
 * may be r), activation, then the lanes past m forced to 0. */
INLINE void store_px(const nnp_bconv_kernel *k, int64_t ob, __m512 v, const float *r, float *y) {
  v = _mm512_add_ps(v, _mm512_load_ps(k->bias + ob * NNP_BLOCK));
  if (r) v = _mm512_add_ps(v, _mm512_loadu_ps(r));
  v = act16(&k->ep, v);
  const int64_t valid = k->d.m - ob * NNP_BLOCK;
  if (valid < NNP_BLOCK) v = _mm512_maskz_mov_ps((__mmask16)((1u << valid) - 1u), v);
  _mm512_storeu_ps(y, v);
}

/* The epilogue of a tile's nb x np accumulators (a1 unused where nb is 1). */
INLINE void store_tile(const nnp_bconv_kernel *k, const float *r, float *y, int64_t ob, const int nb, int64_t oh,
                       int64_t ow0, const int np, const __m512 *a0, const __m512 *a1) {
  const nnp_conv2d_desc *d = &k->d;
  const int64_t o0 = ((ob * d->oh + oh) * d->ow + ow0) * NNP_BLOCK;
#pragma GCC unroll 16
  for (int p = 0; p < np; p++)
    store_px(k, ob, a0[p], r ? r + o0 + p * NNP_BLOCK : NULL, y + o0 + p * NNP_BLOCK);
  if (nb > 1) {
    const int64_t o1 = o0 + d->oh * d->ow * NNP_BLOCK;
#pragma GCC unroll 16
    for (int p = 0; p < np; p++)
      store_px(k, ob + 1, a1[p], r ? r + o1 + p * NNP_BLOCK : NULL, y + o1 + p * NNP_BLOCK);
  }
}

/* A depthwise tile's epilogue terms, read from k once and kept in ZMMs across its
 * stores: store_px reads them through k at each store, and GCC reloaded them before
 * every one (the bias pointer, the activation's kind and bounds, the block's real
 * channels: about 25 instructions per stored vector). The depthwise tiles keep 8 sums,
 * so the terms fit beside them; in the dense tiles (28 sums) the same change measured
 * 3-7% slower, so those keep store_px. Relu and Clip are one min(max(v, lo), hi),
 * nnp_act16's operations in its order (Relu: hi = +inf). */
typedef struct epi16 {
  __m512 bias, lo, hi;
  __mmask16 valid; /* lanes of real channels; the others are stored as 0 */
  int act;
} epi16;

INLINE epi16 epi_load(const nnp_bconv_kernel *k, int64_t ob) {
  const int64_t valid = k->d.m - ob * NNP_BLOCK;
  const bool clip = k->ep.act == NNP_ACT_CLIP;
  return (epi16){.bias = _mm512_load_ps(k->bias + ob * NNP_BLOCK),
                 .lo = _mm512_set1_ps(clip ? k->ep.act_min : 0.0f),
                 .hi = _mm512_set1_ps(clip ? k->ep.act_max : INFINITY),
                 .valid = valid < NNP_BLOCK ? (__mmask16)((1u << valid) - 1u) : (__mmask16)0xffff,
                 .act = k->ep.act};
}

/* store_px with the terms of e */
INLINE void store_px_epi(const nnp_bconv_kernel *k, const epi16 *e, __m512 v, const float *r, float *y) {
  v = _mm512_add_ps(v, e->bias);
  if (r) v = _mm512_add_ps(v, _mm512_loadu_ps(r));
  if (e->act == NNP_ACT_RELU || e->act == NNP_ACT_CLIP) v = _mm512_min_ps(_mm512_max_ps(v, e->lo), e->hi);
  else if (e->act != NNP_ACT_NONE) v = act16(&k->ep, v);
  _mm512_storeu_ps(y, _mm512_maskz_mov_ps(e->valid, v));
}

INLINE void dense_tile(const nnp_bconv_kernel *k, const float *x, float *y, const float *r, int64_t ob, const int nb,
                       int64_t oh, int64_t ow0, const int np) {
  const nnp_conv2d_desc *d = &k->d;
  const int64_t taps = d->kh * d->kw, ws = NNP_BLOCK; /* weights: one input channel further */
  const int64_t wnext = k->cb * taps * NNP_BLOCK * NNP_BLOCK; /* the next output block's weights */
  const float *w0 = k->w + ob * wnext;
  /* every loop over a0/a1 is unrolled: an index the compiler cannot resolve makes it
   * keep the arrays on the stack (zeroed with rep stos, 11% of a 1x1 layer) */
  __m512 a0[PX], a1[PX];
#pragma GCC unroll 8
  for (int p = 0; p < PX; p++) a0[p] = a1[p] = _mm512_setzero_ps();
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
          for (int64_t i = 0; i < cvalid; i++) {
            const __m512 wv0 = _mm512_load_ps(wk + i * ws);
            const __m512 wv1 = nb > 1 ? _mm512_load_ps(wk + wnext + i * ws) : wv0;
#pragma GCC unroll 8
            for (int p = 0; p < np; p++) {
              const __m512 xb = _mm512_set1_ps(xp[p * xs + i]);
              a0[p] = _mm512_fmadd_ps(xb, wv0, a0[p]);
              if (nb > 1) a1[p] = _mm512_fmadd_ps(xb, wv1, a1[p]);
            }
          }
        } else { /* a border: taps in the padding read a zero block */
          const float *xp[PX];
          int any = 0;
#pragma GCC unroll 8
          for (int p = 0; p < np; p++) {
            const int64_t iw = iw0 + p * d->sw;
            const bool in = iw >= 0 && iw < d->w;
            xp[p] = in ? xrow + iw * NNP_BLOCK : zero_block;
            any |= in;
          }
          if (!any) continue;
          for (int64_t i = 0; i < cvalid; i++) {
            const __m512 wv0 = _mm512_load_ps(wk + i * ws);
            const __m512 wv1 = nb > 1 ? _mm512_load_ps(wk + wnext + i * ws) : wv0;
#pragma GCC unroll 8
            for (int p = 0; p < np; p++) {
              const __m512 xb = _mm512_set1_ps(xp[p][i]);
              a0[p] = _mm512_fmadd_ps(xb, wv0, a0[p]);
              if (nb > 1) a1[p] = _mm512_fmadd_ps(xb, wv1, a1[p]);
            }
          }
        }
      }
    }
  }
  store_tile(k, r, y, ob, nb, oh, ow0, np, a0, a1);
}

/* The FMAs of one tap over the tile's pixels: columns [PA, np - PBS) of each of its
 * rows (the others' inputs lie in the padding); row q's column c reads
 * xq[q] + (c - PA) * sw * 16, a constant offset. */
#define WIDE_TAP(PA, PBS)                                                                \
  for (int64_t i = 0; i < cvalid; i++) {                                                 \
    const __m512 wv0 = _mm512_load_ps(wk + i * NNP_BLOCK);                               \
    const __m512 wv1 = nb > 1 ? _mm512_load_ps(wk + wnext + i * NNP_BLOCK) : wv0;        \
    _Pragma("GCC unroll 2") for (int q = 0; q < rows; q++) {                             \
      _Pragma("GCC unroll 16") for (int c = PA; c < np - (PBS); c++) {                   \
        const __m512 xb = _mm512_set1_ps(xq[q][(c - (PA)) * sw * NNP_BLOCK + i]);        \
        a0[q * np + c] = _mm512_fmadd_ps(xb, wv0, a0[q * np + c]);                       \
        if (nb > 1) a1[q * np + c] = _mm512_fmadd_ps(xb, wv1, a1[q * np + c]);           \
      }                                                                                  \
    }                                                                                    \
  }

/* Zeros for the missing row of a two-row wide tile: its pixels' reads, at most
 * (PXW / 2 - 1) * 2 * 16 + 15 floats in. */
static const float zero_row[PXW * 2 * NNP_BLOCK] __attribute__((aligned(64))) = {0};

/* The wide tile, for strides 1 and 2: up to PXW pixels of one row, the stride SW a
 * compile-time constant, so each pixel's input is one base pointer plus the constant
 * p * SW * 64 bytes (all 14 broadcasts address off one register; the border tile needs
 * a register per pixel). 2 blocks x 14 pixels are 28 accumulators + 2 weight vectors +
 * 1 broadcast = 31 of the 32 ZMMs; per input channel 2 weight loads feed 28 FMAs (16 in
 * the border tile), so the weights, streamed from L2 once per tile, cost half as much
 * per FMA. Where a tap reaches into the padding, only the pixels [pa, pb) inside the row
 * take it: the usual ranges (one or two pixels off the left, one off the right) are
 * compile-time loops of their own, others test each pixel.
 *
 * rows 2: two whole output rows oh, oh + 1 of np <= PXW / 2 pixels (7x7 planes: 14
 * pixels, not 7, per pass over the weights), one base pointer per row; a row whose
 * input row lies in the padding reads zero_row (a few wasted FMAs on the first and
 * last row pairs, against a second set of loop bodies). The two rows' outputs are
 * contiguous, so the store is that of 2 * np pixels. */
INLINE void dense_wide(const nnp_bconv_kernel *k, const float *x, float *y, const float *r, int64_t ob, const int nb,
                       int64_t oh, int64_t ow0, const int np, const int sw, const int rows, int64_t cb0,
                       int64_t cb1, float *part) {
  const nnp_conv2d_desc *d = &k->d;
  const int64_t taps = d->kh * d->kw;
  const int64_t wnext = k->cb * taps * NNP_BLOCK * NNP_BLOCK; /* the next output block's weights */
  const float *w0 = k->w + ob * wnext;
  const int npx = rows * np;
  __m512 a0[PXW], a1[PXW];
  if (cb0 == 0) {
#pragma GCC unroll 16
    for (int p = 0; p < PXW; p++) a0[p] = a1[p] = _mm512_setzero_ps();
  } else { /* the sums of input blocks [0, cb0), left in part by the call before */
#pragma GCC unroll 16
    for (int p = 0; p < PXW; p++) {
      a0[p] = p < npx ? _mm512_load_ps(part + p * NNP_BLOCK) : _mm512_setzero_ps();
      a1[p] = p < npx && nb > 1 ? _mm512_load_ps(part + (npx + p) * NNP_BLOCK) : _mm512_setzero_ps();
    }
  }
  if (taps == 1 && d->ph == 0 && d->pw == 0) {
    /* 1x1 without padding: every pixel of every row inside its input row, so the border
     * arithmetic below, once per input block here, is left out (1x1 layers 10-20% faster) */
    const int64_t plane = d->h * d->w * NNP_BLOCK;
    const float *xq[2];
#pragma GCC unroll 2
    for (int q = 0; q < rows; q++) xq[q] = x + cb0 * plane + ((oh + q) * d->sh * d->w + ow0 * sw) * NNP_BLOCK;
    const float *wk = w0 + cb0 * NNP_BLOCK * NNP_BLOCK;
    for (int64_t cb = cb0; cb < cb1; cb++, wk += NNP_BLOCK * NNP_BLOCK) {
      const int64_t cvalid = d->c - cb * NNP_BLOCK < NNP_BLOCK ? d->c - cb * NNP_BLOCK : NNP_BLOCK;
      WIDE_TAP(0, 0)
#pragma GCC unroll 2
      for (int q = 0; q < rows; q++) xq[q] += plane;
    }
  } else /* any kernel and padding: the border arithmetic per input block and tap */
  for (int64_t cb = cb0; cb < cb1; cb++) {
    const int64_t cvalid = d->c - cb * NNP_BLOCK < NNP_BLOCK ? d->c - cb * NNP_BLOCK : NNP_BLOCK;
    for (int64_t kh = 0; kh < d->kh; kh++) {
      const float *xrow[2];
      bool any = false;
#pragma GCC unroll 2
      for (int q = 0; q < rows; q++) {
        const int64_t ih = (oh + q) * d->sh - d->ph + kh * d->dh;
        const bool in = ih >= 0 && ih < d->h;
        xrow[q] = in ? x + (cb * d->h + ih) * d->w * NNP_BLOCK : NULL;
        any |= in;
      }
      if (!any) continue;
      const float *wk = w0 + (cb * taps + kh * d->kw) * NNP_BLOCK * NNP_BLOCK;
      for (int64_t kw = 0; kw < d->kw; kw++, wk += NNP_BLOCK * NNP_BLOCK) {
        const int64_t iw0 = ow0 * sw - d->pw + kw * d->dw;
        const int pa = iw0 >= 0 ? 0 : (int)((-iw0 + sw - 1) / sw); /* the first pixel inside the row */
        const int64_t room = d->w - 1 - iw0;                        /* p * sw <= room */
        const int pb = room < 0 ? 0 : room / sw + 1 < np ? (int)(room / sw + 1) : np;
        if (pa >= pb) continue;
        const float *xq[2]; /* pixel pa's input in each row */
#pragma GCC unroll 2
        for (int q = 0; q < rows; q++) xq[q] = xrow[q] ? xrow[q] + (iw0 + pa * sw) * NNP_BLOCK : zero_row;
        if (pb == np) {
          if (pa == 0) {
            WIDE_TAP(0, 0)
          } else if (pa == 1) {
            WIDE_TAP(1, 0)
          } else if (pa == 2) {
            WIDE_TAP(2, 0)
          } else {
            goto any;
          }
        } else if (pb == np - 1 && pa == 0) {
          WIDE_TAP(0, 1)
        } else if (pb == np - 1 && pa == 1) {
          WIDE_TAP(1, 1)
        } else {
        any:
          for (int64_t i = 0; i < cvalid; i++) {
            const __m512 wv0 = _mm512_load_ps(wk + i * NNP_BLOCK);
            const __m512 wv1 = nb > 1 ? _mm512_load_ps(wk + wnext + i * NNP_BLOCK) : wv0;
#pragma GCC unroll 2
            for (int q = 0; q < rows; q++) {
#pragma GCC unroll 16
              for (int c = 0; c < np; c++) {
                if (c < pa || c >= pb) continue;
                const __m512 xb = _mm512_set1_ps(xq[q][(c - pa) * sw * NNP_BLOCK + i]);
                a0[q * np + c] = _mm512_fmadd_ps(xb, wv0, a0[q * np + c]);
                if (nb > 1) a1[q * np + c] = _mm512_fmadd_ps(xb, wv1, a1[q * np + c]);
              }
            }
          }
        }
      }
    }
  }
  if (cb1 < k->cb) { /* more input blocks to come: park the sums */
#pragma GCC unroll 16
    for (int p = 0; p < PXW; p++) {
      if (p < npx) _mm512_store_ps(part + p * NNP_BLOCK, a0[p]);
      if (p < npx && nb > 1) _mm512_store_ps(part + (npx + p) * NNP_BLOCK, a1[p]);
    }
    return;
  }
  store_tile(k, r, y, ob, nb, oh, ow0, npx, a0, a1);
}
#undef WIDE_TAP

/* One function per (blocks, pixels): the constants let the compiler keep a0/a1 in ZMMs. */
#define DENSE_VARIANT(NB, NP)                                                                                   \
  static void dense_##NB##_##NP(const nnp_bconv_kernel *k, const float *x, float *y, const float *r,          \
                                int64_t ob, int64_t oh, int64_t ow0) {                                        \
    dense_tile(k, x, y, r, ob, NB, oh, ow0, NP);                                                              \
  }
#define DENSE_VARIANTS(NB) \
  DENSE_VARIANT(NB, 1) DENSE_VARIANT(NB, 2) DENSE_VARIANT(NB, 3) DENSE_VARIANT(NB, 4) \
  DENSE_VARIANT(NB, 5) DENSE_VARIANT(NB, 6) DENSE_VARIANT(NB, 7) DENSE_VARIANT(NB, 8)
DENSE_VARIANTS(1)
DENSE_VARIANTS(2)

typedef void (*dense_fn)(const nnp_bconv_kernel *, const float *, float *, const float *, int64_t, int64_t, int64_t);
static const dense_fn dense_fns[2][PX] = {
    {dense_1_1, dense_1_2, dense_1_3, dense_1_4, dense_1_5, dense_1_6, dense_1_7, dense_1_8},
    {dense_2_1, dense_2_2, dense_2_3, dense_2_4, dense_2_5, dense_2_6, dense_2_7, dense_2_8}};

/* ... and per (blocks, pixels, stride) for the wide tile, one row or two */
#define WIDE_VARIANT(NB, NP, SW)                                                                                \
  static void wide_##NB##_##NP##_##SW(const nnp_bconv_kernel *k, const float *x, float *y, const float *r,    \
                                      int64_t ob, int64_t oh, int64_t ow0, int64_t cb0, int64_t cb1,          \
                                      float *part) {                                                          \
    dense_wide(k, x, y, r, ob, NB, oh, ow0, NP, SW, 1, cb0, cb1, part);                                       \
  }
#define WIDE2_VARIANT(NB, NP, SW)                                                                               \
  static void wide2_##NB##_##NP##_##SW(const nnp_bconv_kernel *k, const float *x, float *y, const float *r,   \
                                       int64_t ob, int64_t oh, int64_t ow0, int64_t cb0, int64_t cb1,         \
                                       float *part) {                                                         \
    dense_wide(k, x, y, r, ob, NB, oh, ow0, NP, SW, 2, cb0, cb1, part);                                       \
  }
#define WIDE_VARIANTS(NB, SW)                                                                                    \
  WIDE_VARIANT(NB, 1, SW) WIDE_VARIANT(NB, 2, SW) WIDE_VARIANT(NB, 3, SW) WIDE_VARIANT(NB, 4, SW)           \
  WIDE_VARIANT(NB, 5, SW) WIDE_VARIANT(NB, 6, SW) WIDE_VARIANT(NB, 7, SW) WIDE_VARIANT(NB, 8, SW)           \
  WIDE_VARIANT(NB, 9, SW) WIDE_VARIANT(NB, 10, SW) WIDE_VARIANT(NB, 11, SW) WIDE_VARIANT(NB, 12, SW)        \
  WIDE_VARIANT(NB, 13, SW) WIDE_VARIANT(NB, 14, SW)
#define WIDE2_VARIANTS(NB, SW)                                                                                   \
  WIDE2_VARIANT(NB, 1, SW) WIDE2_VARIANT(NB, 2, SW) WIDE2_VARIANT(NB, 3, SW) WIDE2_VARIANT(NB, 4, SW)       \
  WIDE2_VARIANT(NB, 5, SW) WIDE2_VARIANT(NB, 6, SW) WIDE2_VARIANT(NB, 7, SW)
WIDE_VARIANTS(1, 1)
WIDE_VARIANTS(2, 1)
WIDE_VARIANTS(1, 2)
WIDE_VARIANTS(2, 2)
WIDE2_VARIANTS(1, 1)
WIDE2_VARIANTS(2, 1)
WIDE2_VARIANTS(1, 2)
WIDE2_VARIANTS(2, 2)
#define WIDE_ROW(NB, SW)                                                                                       \
  {wide_##NB##_1_##SW, wide_##NB##_2_##SW, wide_##NB##_3_##SW, wide_##NB##_4_##SW, wide_##NB##_5_##SW,   \
   wide_##NB##_6_##SW, wide_##NB##_7_##SW, wide_##NB##_8_##SW, wide_##NB##_9_##SW, wide_##NB##_10_##SW,  \
   wide_##NB##_11_##SW, wide_##NB##_12_##SW, wide_##NB##_13_##SW, wide_##NB##_14_##SW}
typedef void (*wide_fn)(const nnp_bconv_kernel *, const float *, float *, const float *, int64_t, int64_t, int64_t,
                        int64_t, int64_t, float *);
static const wide_fn wide_fns[2][2][PXW] = {{WIDE_ROW(1, 1), WIDE_ROW(2, 1)}, {WIDE_ROW(1, 2), WIDE_ROW(2, 2)}};
#define WIDE2_ROW(NB, SW)                                                                                      \
  {wide2_##NB##_1_##SW, wide2_##NB##_2_##SW, wide2_##NB##_3_##SW, wide2_##NB##_4_##SW, wide2_##NB##_5_##SW, \
   wide2_##NB##_6_##SW, wide2_##NB##_7_##SW}
static const wide_fn wide2_fns[2][2][PXW / 2] = {{WIDE2_ROW(1, 1), WIDE2_ROW(2, 1)},
                                                  {WIDE2_ROW(1, 2), WIDE2_ROW(2, 2)}};

/* rows output rows from oh: PXW-pixel wide tiles where the stride is 1 or 2, PX-pixel
 * border tiles otherwise; rows 2 (see nnp_bconv_dense_rows) as one two-row wide tile. */
void nnp_bconv_dense_row_avx512(const nnp_bconv_kernel *k, const float *x, float *y, const float *r, int64_t ob,
                                int nb, int64_t oh, int rows) {
  const nnp_conv2d_desc *d = &k->d;
  const int wide = d->sw == 1 || d->sw == 2;
  if (rows == 2 && wide && 2 * d->ow <= PXW) {
    wide2_fns[d->sw - 1][nb - 1][d->ow - 1](k, x, y, r, ob, oh, 0, 0, k->cb, NULL);
    return;
  }
  const int64_t step = wide ? PXW : PX;
  for (int q = 0; q < rows; q++)
    for (int64_t ow0 = 0; ow0 < d->ow; ow0 += step) {
      const int np = d->ow - ow0 < step ? (int)(d->ow - ow0) : (int)step;
      if (wide) wide_fns[d->sw - 1][nb - 1][np - 1](k, x, y, r, ob, oh + q, ow0, 0, k->cb, NULL);
      else dense_fns[nb - 1][np - 1](k, x, y, r, ob, oh + q, ow0);
    }
}

/* Rows [oh0, oh1) of a plane at most PXW wide, in input block chunks of k->chunk: each
 * chunk's weights (about 24 KB) are read from L2 once and then from L1 by every tile of
 * the rows (two-row tiles on planes at most PXW / 2 wide, one-row tiles up to PXW),
 * where a whole-depth tile streamed all of the block pair's weights from L2 once per
 * tile (4 times per 7x7 plane, 14 times per 14x14 plane). The sums between chunks wait
 * in part; the order of the sums (input block, kh, kw, channel) is the tile's, so the
 * result is that of nnp_bconv_dense_row_avx512 bit for bit. */
void nnp_bconv_dense_plane_avx512(const nnp_bconv_kernel *k, const float *x, float *y, const float *r, int64_t ob,
                                  int nb, int64_t oh0, int64_t oh1) {
  const nnp_conv2d_desc *d = &k->d;
  float part[NNP_BCONV_PLANE_TILES * 2 * PXW * NNP_BLOCK] __attribute__((aligned(64)));
  const int two = 2 * d->ow <= PXW; /* two rows per tile */
  for (int64_t c0 = 0; c0 < k->cb; c0 += k->chunk) {
    const int64_t c1 = c0 + k->chunk < k->cb ? c0 + k->chunk : k->cb;
    float *pt = part;
    for (int64_t oh = oh0; oh < oh1; oh += 1 + two, pt += 2 * PXW * NNP_BLOCK) {
      if (two && oh + 2 <= oh1) wide2_fns[d->sw - 1][nb - 1][d->ow - 1](k, x, y, r, ob, oh, 0, c0, c1, pt);
      else wide_fns[d->sw - 1][nb - 1][d->ow - 1](k, x, y, r, ob, oh, 0, c0, c1, pt);
    }
  }
}

INLINE void dw_tile(const nnp_bconv_kernel *k, const float *x, float *y, const float *r, int64_t cb, int64_t oh,
                    int64_t ow0, const int np) {
  const nnp_conv2d_desc *d = &k->d;
  const float *wb = k->w + cb * d->kh * d->kw * NNP_BLOCK;
  __m512 a[PX];
#pragma GCC unroll 8
  for (int p = 0; p < PX; p++) a[p] = _mm512_setzero_ps();
  for (int64_t kh = 0; kh < d->kh; kh++) {
    const int64_t ih = oh * d->sh - d->ph + kh * d->dh;
    if (ih < 0 || ih >= d->h) continue;
    const float *xrow = x + (cb * d->h + ih) * d->w * NNP_BLOCK;
    for (int64_t kw = 0; kw < d->kw; kw++) {
      const __m512 wv = _mm512_load_ps(wb + (kh * d->kw + kw) * NNP_BLOCK);
      const int64_t iw0 = ow0 * d->sw - d->pw + kw * d->dw;
      if (iw0 >= 0 && iw0 + (np - 1) * d->sw < d->w) {
#pragma GCC unroll 8
        for (int p = 0; p < np; p++)
          a[p] = _mm512_fmadd_ps(_mm512_loadu_ps(xrow + (iw0 + p * d->sw) * NNP_BLOCK), wv, a[p]);
      } else {
#pragma GCC unroll 8
        for (int p = 0; p < np; p++) {
          const int64_t iw = iw0 + p * d->sw;
          if (iw >= 0 && iw < d->w) a[p] = _mm512_fmadd_ps(_mm512_loadu_ps(xrow + iw * NNP_BLOCK), wv, a[p]);
        }
      }
    }
  }
  const int64_t o = ((cb * d->oh + oh) * d->ow + ow0) * NNP_BLOCK;
  const epi16 e = epi_load(k, cb);
#pragma GCC unroll 8
  for (int p = 0; p < np; p++) store_px_epi(k, &e, a[p], r ? r + o + p * NNP_BLOCK : NULL, y + o + p * NNP_BLOCK);
}

#define DW_VARIANT(NP)                                                                                          \
  static void dw_##NP(const nnp_bconv_kernel *k, const float *x, float *y, const float *r, int64_t cb,        \
                      int64_t oh, int64_t ow0) {                                                              \
    dw_tile(k, x, y, r, cb, oh, ow0, NP);                                                                     \
  }
DW_VARIANT(1) DW_VARIANT(2) DW_VARIANT(3) DW_VARIANT(4) DW_VARIANT(5) DW_VARIANT(6) DW_VARIANT(7) DW_VARIANT(8)
static const dense_fn dw_fns[PX] = {dw_1, dw_2, dw_3, dw_4, dw_5, dw_6, dw_7, dw_8};

/* Depthwise at strides SW of 1 or 2, no dilation, KW taps wide: each input row's
 * (np - 1) * SW + KW vectors are loaded once (zero where they fall in the padding) and
 * serve all KW taps of the row from registers, reading X in place. dw_tile loads each
 * vector once per tap, and the earlier padded-plane and two-row tiles also copied the
 * plane or spent their loads on a second row's sums; this one measured 16-35% faster on
 * MobileNet's and EfficientNet's layers (docs/kernels.md). Each sum sees its taps in
 * dw_tile's order; a tap in the padding adds 0 * w where dw_tile skips it. */
INLINE void dw_regs_tile(const nnp_bconv_kernel *k, const float *x, float *y, const float *r, int64_t cb,
                         int64_t oh, int64_t ow0, const int np, const int KW, const int SW) {
  const nnp_conv2d_desc *d = &k->d;
  const float *wb = k->w + cb * d->kh * KW * NNP_BLOCK;
  const int64_t iw0 = ow0 * SW - d->pw;
  const int nv = (np - 1) * SW + KW; /* the input vectors a tap row reads */
  const bool inside = iw0 >= 0 && iw0 + nv <= d->w;
  __m512 a[PX];
#pragma GCC unroll 8
  for (int p = 0; p < PX; p++) a[p] = _mm512_setzero_ps();
  for (int64_t kh = 0; kh < d->kh; kh++) {
    const int64_t ih = oh * d->sh - d->ph + kh;
    if (ih < 0 || ih >= d->h) continue;
    const float *xs = x + ((cb * d->h + ih) * d->w + iw0) * NNP_BLOCK, *wr = wb + kh * KW * NNP_BLOCK;
    __m512 v[(PX - 1) * 2 + 7];
#pragma GCC unroll 21
    for (int q = 0; q < nv; q++)
      v[q] = inside || (iw0 + q >= 0 && iw0 + q < d->w) ? _mm512_loadu_ps(xs + q * NNP_BLOCK) : _mm512_setzero_ps();
#pragma GCC unroll 7
    for (int t = 0; t < KW; t++) {
      const __m512 wv = _mm512_load_ps(wr + t * NNP_BLOCK);
#pragma GCC unroll 8
      for (int p = 0; p < np; p++) a[p] = _mm512_fmadd_ps(v[p * SW + t], wv, a[p]);
    }
  }
  const int64_t o = ((cb * d->oh + oh) * d->ow + ow0) * NNP_BLOCK;
  const epi16 e = epi_load(k, cb);
#pragma GCC unroll 8
  for (int p = 0; p < np; p++) store_px_epi(k, &e, a[p], r ? r + o + p * NNP_BLOCK : NULL, y + o + p * NNP_BLOCK);
}

#define DW_REGS_VARIANT(NP, KW, SW)                                                                             \
  static void dw_regs_##SW##_##KW##_##NP(const nnp_bconv_kernel *k, const float *x, float *y, const float *r,  \
                                         int64_t cb, int64_t oh, int64_t ow0) {                               \
    dw_regs_tile(k, x, y, r, cb, oh, ow0, NP, KW, SW);                                                        \
  }
#define DW_REGS_VARIANTS(KW, SW)                                                                                \
  DW_REGS_VARIANT(1, KW, SW) DW_REGS_VARIANT(2, KW, SW) DW_REGS_VARIANT(3, KW, SW) DW_REGS_VARIANT(4, KW, SW)  \
  DW_REGS_VARIANT(5, KW, SW) DW_REGS_VARIANT(6, KW, SW) DW_REGS_VARIANT(7, KW, SW) DW_REGS_VARIANT(8, KW, SW)
#define DW_REGS_TABLE(KW, SW)                                                                                   \
  {dw_regs_##SW##_##KW##_1, dw_regs_##SW##_##KW##_2, dw_regs_##SW##_##KW##_3, dw_regs_##SW##_##KW##_4,          \
   dw_regs_##SW##_##KW##_5, dw_regs_##SW##_##KW##_6, dw_regs_##SW##_##KW##_7, dw_regs_##SW##_##KW##_8}
DW_REGS_VARIANTS(3, 1) DW_REGS_VARIANTS(5, 1) DW_REGS_VARIANTS(7, 1)
DW_REGS_VARIANTS(3, 2) DW_REGS_VARIANTS(5, 2) DW_REGS_VARIANTS(7, 2)
/* [stride - 1][(kw - 3) / 2][pixels - 1] */
static const dense_fn dw_regs_fns[2][3][PX] = {{DW_REGS_TABLE(3, 1), DW_REGS_TABLE(5, 1), DW_REGS_TABLE(7, 1)},
                                               {DW_REGS_TABLE(3, 2), DW_REGS_TABLE(5, 2), DW_REGS_TABLE(7, 2)}};

void nnp_bconv_dw_row_avx512(const nnp_bconv_kernel *k, const float *x, float *y, const float *r, int64_t cb,
                             int64_t oh) {
  const nnp_conv2d_desc *d = &k->d;
  const bool regs = (d->sw == 1 || d->sw == 2) && d->dh == 1 && d->dw == 1 && (d->kw == 3 || d->kw == 5 || d->kw == 7);
  const dense_fn *fns = regs ? dw_regs_fns[d->sw - 1][(d->kw - 3) / 2] : dw_fns; /* dw_fns: any other shape */
  for (int64_t ow0 = 0; ow0 < d->ow; ow0 += PX) {
    const int np = d->ow - ow0 < PX ? (int)(d->ow - ow0) : PX;
    fns[np - 1](k, x, y, r, cb, oh, ow0);
  }
}

#else
/* Built without AVX-512 support in the compiler: never selected (see kernels/cpu.c). */
void nnp_bconv_dense_row_avx512(const nnp_bconv_kernel *k, const float *x, float *y, const float *r, int64_t ob,
                                int nb, int64_t oh, int rows) {
  for (int q = 0; q < rows; q++)
    for (int b = 0; b < nb; b++) nnp_bconv_dense_row_generic(k, x, y, r, ob + b, oh + q);
}
void nnp_bconv_dw_row_avx512(const nnp_bconv_kernel *k, const float *x, float *y, const float *r, int64_t cb,
                             int64_t oh) {
  nnp_bconv_dw_row_generic(k, x, y, r, cb, oh);
}
void nnp_bconv_dense_plane_avx512(const nnp_bconv_kernel *k, const float *x, float *y, const float *r, int64_t ob,
                                  int nb, int64_t oh0, int64_t oh1) {
  for (int64_t oh = oh0; oh < oh1; oh++)
    for (int b = 0; b < nb; b++) nnp_bconv_dense_row_generic(k, x, y, r, ob + b, oh);
}
#endif
