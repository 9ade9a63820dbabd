/* Depthwise convolution for AVX-512F (this file alone gets -mavx512f -mavx512vl; it is
 * only called where the dispatch table (kernels/dispatch.h) picks AVX-512).
 *
 * Square 3x3 and 5x5 kernels, stride 1 or 2 (both directions), no dilation: what
 * MobileNet and EfficientNet use. Everything else runs the AVX2 kernel.
 *
 * Sixteen output columns per ZMM and DW_ROWS output rows per pass: each input vector
 * loaded is used by every output row whose taps reach it (a 3x3 stride-1 pass loads
 * 6 x 3 vectors for 4 x 9 FMAs), and all taps accumulate in registers, so each output is
 * stored once with the fused epilogue (bias, residual, Relu/Clip/HardSwish; Sigmoid
 * through the scalar nnp_act_apply).
 *
 * Why not the AVX2 kernel's approach: it copies every plane into a zero-bordered buffer
 * (memcpy + memset were a quarter of the depthwise time in mobilenet_v2's profile) and
 * computes 8 columns per vector.
 *  - stride 1 reads X in place. Blocks whose taps stay inside the row use plain loads;
 *    the edge blocks use masked loads (lanes outside the row read as zero), and a block
 *    starting left of the row an expand load from the row's first element, so no
 *    pointer ever leaves the row.
 *  - stride 2 deinterleaves each input row once into its even and odd columns (with the
 *    padding as zeros, loaded as above), kept in a small ring of rows: then every tap is
 *    one contiguous unmasked load, where loading 32 columns and permuting would cost a
 *    shuffle per tap. */
#include <immintrin.h>
#include <stdint.h>

#include "kernels/dwconv.h"

#if defined(__AVX512F__)
#include "kernels/act_avx512.h"


enum { DW_ROWS = 4 };                    /* output rows per pass */
#define DW_S2_MAX_FLOATS (16 * 1024)     /* the stride-2 row ring, on the stack (64 KiB) */

/* lanes [0, n), n clamped to [0, 16] */
static inline __mmask16 lanes_below(int64_t n) {
  return n >= 16 ? (__mmask16)0xffff : n <= 0 ? (__mmask16)0 : (__mmask16)((1u << n) - 1);
}

/* Where one plane's outputs go and what is applied on the way. */
typedef struct dw_out {
  const nnp_epilogue *ep; /* this plane's epilogue (bias and residual offset), or NULL */
  float *yp;
  int64_t OW;
  __m512 bias;
} dw_out;

/* Sigmoid has no vector form here: the scalar one, out of line (it is rare, and inlined
 * into every unrolled store it would bloat the hot loops). */
static __attribute__((noinline)) void store_sigmoid(const nnp_epilogue *ep, float *yr, __m512 acc, __mmask16 m) {
  float t[16];
  _mm512_storeu_ps(t, acc);
  for (int i = 0; i < 16; i++)
    if (m >> i & 1) yr[i] = nnp_act_apply(ep, t[i]);
}

/* Output row oh, columns [ow, ow + 16) under mask m (the ragged end of the row). */
static inline void dw_store(const dw_out *o, __m512 acc, int64_t oh, int64_t ow, __mmask16 m) {
  float *yr = o->yp + oh * o->OW + ow;
  if (o->ep) {
    acc = _mm512_add_ps(acc, o->bias);
    /* the residual may be Y itself: read before the store, same elements */
    if (o->ep->residual) acc = _mm512_add_ps(acc, _mm512_maskz_loadu_ps(m, o->ep->residual + oh * o->OW + ow));
    if (o->ep->act == NNP_ACT_SIGMOID) {
      store_sigmoid(o->ep, yr, acc, m);
      return;
    }
    acc = nnp_act16(o->ep, acc);
  }
  _mm512_mask_storeu_ps(yr, m, acc);
}

/* How to load input columns [c0, c0 + 16) of any row W wide, zero outside the row:
 * lanes m from column off, or, for a block starting left of the row, an expand load of
 * lanes m from column 0 (lanes [s, s + W) get columns 0.. in order). The pointer never
 * leaves the row; lanes outside it are masked off. Worked out once per block and tap
 * column, not per row: the branches and shifts cost more than the load. */
typedef struct col_load {
  __mmask16 m;
  bool expand;
  int64_t off;
} col_load;

static inline col_load col_plan(int64_t c0, int64_t W) {
  if (c0 >= 0) return (col_load){.m = c0 >= W ? 0 : lanes_below(W - c0), .expand = false, .off = c0 >= W ? 0 : c0};
  const int64_t s = -c0;
  return (col_load){.m = s >= 16 ? 0 : (__mmask16)(lanes_below(s + W) & ~lanes_below(s)), .expand = true, .off = 0};
}

static inline __m512 col_load_row(const float *xr, col_load c) {
  return c.expand ? _mm512_maskz_expandloadu_ps(c.m, xr) : _mm512_maskz_loadu_ps(c.m, xr + c.off);
}


/* ---- stride 1 ---- */

/* R output rows from oh, the 16 columns at ow. inner: every tap of the block is inside
 * the row (plain loads). KH, KW, R, inner are constants after inlining: the loops unroll
 * and acc[] lives in registers. */
static inline __attribute__((always_inline)) void s1_block(const float *xp, int64_t H, int64_t W, const float *wc,
                                                           const dw_out *o, int64_t oh, int64_t ow, int64_t ph,
                                                           int64_t pw, const int KH, const int KW, const int R,
                                                           const bool inner) {
  __m512 acc[DW_ROWS];
  col_load cl[8];
  #pragma GCC unroll 16
  for (int j = 0; j < R; j++) acc[j] = _mm512_setzero_ps();
  if (!inner) {
    #pragma GCC unroll 16
    for (int kw = 0; kw < KW; kw++) cl[kw] = col_plan(ow - pw + kw, W);
  }
  #pragma GCC unroll 16
  for (int r = 0; r < R + KH - 1; r++) { /* input row oh - ph + r feeds output j with tap kh = r - j */
    const int64_t ih = oh - ph + r;
    if (ih < 0 || ih >= H) continue; /* a padding row adds zero */
    const float *xr = xp + ih * W;
    #pragma GCC unroll 16
    for (int kw = 0; kw < KW; kw++) {
      const __m512 v = inner ? _mm512_loadu_ps(xr + ow - pw + kw) : col_load_row(xr, cl[kw]);
      #pragma GCC unroll 16
      for (int j = 0; j < R; j++) {
        const int kh = r - j;
        if (kh >= 0 && kh < KH) acc[j] = _mm512_fmadd_ps(_mm512_set1_ps(wc[kh * KW + kw]), v, acc[j]);
      }
    }
  }
  const __mmask16 m = lanes_below(o->OW - ow);
  #pragma GCC unroll 16
  for (int j = 0; j < R; j++) dw_store(o, acc[j], oh + j, ow, m);
}

static inline __attribute__((always_inline)) void s1_rows(const float *xp, int64_t H, int64_t W, const float *wc,
                                                          const dw_out *o, int64_t oh, int64_t ph, int64_t pw,
                                                          const int KH, const int KW, const int R) {
  for (int64_t ow = 0; ow < o->OW; ow += 16) {
    if (ow - pw >= 0 && ow + 15 - pw + KW - 1 < W) s1_block(xp, H, W, wc, o, oh, ow, ph, pw, KH, KW, R, true);
    else s1_block(xp, H, W, wc, o, oh, ow, ph, pw, KH, KW, R, false);
  }
}

static inline __attribute__((always_inline)) void s1_plane(const nnp_conv2d_desc *d, const float *xp,
                                                           const float *wc, const dw_out *o, const int K) {
  int64_t oh = 0;
  for (; oh + DW_ROWS <= d->oh; oh += DW_ROWS) s1_rows(xp, d->h, d->w, wc, o, oh, d->ph, d->pw, K, K, DW_ROWS);
  /* the last 1..3 rows in one pass too: a single row is one chain of K * K dependent
   * FMAs (latency-bound), which on 7x7 planes cost more than the 4-row pass */
  switch (d->oh - oh) {
    case 3: s1_rows(xp, d->h, d->w, wc, o, oh, d->ph, d->pw, K, K, 3); break;
    case 2: s1_rows(xp, d->h, d->w, wc, o, oh, d->ph, d->pw, K, K, 2); break;
    case 1: s1_rows(xp, d->h, d->w, wc, o, oh, d->ph, d->pw, K, K, 1); break;
    default: break;
  }
}

/* ---- stride 2 ---- */

/* The stride-2 work area: a ring of prepared input rows, each its even padded columns
 * then its odd ones (ne floats each). */
typedef struct s2_ring {
  float *rows;
  int64_t ne, slots;
  int64_t tag[2 * DW_ROWS + 5]; /* input row held by each slot, -1: none */
  /* padded columns [16k, 16k + 16), the same for every row (2 * ne / 16 of them: at
   * least 8 slots fit under DW_S2_MAX_FLOATS) */
  col_load cols[DW_S2_MAX_FLOATS / 16 / 8];
} s2_ring;

/* Input row ih prepared (NULL: a padding row). Padded column p (input column p - pw,
 * zero outside the row) is at [p / 2] for p even, [ne + p / 2] for p odd. */
static const float *s2_row(s2_ring *g, const float *xp, int64_t H, int64_t W, int64_t pw, int64_t ih) {
  if (ih < 0 || ih >= H) return NULL;
  float *dst = g->rows + (ih % g->slots) * 2 * g->ne;
  if (g->tag[ih % g->slots] == ih) return dst;
  g->tag[ih % g->slots] = ih;
  const float *xr = xp + ih * W;
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  for (int64_t i = 0; i < g->ne; i += 16) { /* padded columns [2i, 2i + 32) */
    const __m512 a = col_load_row(xr, g->cols[i / 8]), b = col_load_row(xr, g->cols[i / 8 + 1]);
    _mm512_storeu_ps(dst + i, _mm512_permutex2var_ps(a, even, b));
    _mm512_storeu_ps(dst + g->ne + i, _mm512_permutex2var_ps(a, odd, b));
  }
  return dst;
}

/* R output rows from oh, every column: input row 2 * oh - ph + r feeds output j with
 * tap kh = r - 2j; output column ow's tap kw reads padded column 2 * ow + kw, i.e. the
 * even (kw even) or odd half at ow + kw / 2: one unmasked load. */
static inline __attribute__((always_inline)) void s2_rows(s2_ring *g, const float *xp, int64_t H, int64_t W,
                                                          const float *wc, const dw_out *o, int64_t oh, int64_t ph,
                                                          int64_t pw, const int K, const int R) {
  const float *rows[2 * DW_ROWS + 5];
  for (int r = 0; r < 2 * (R - 1) + K; r++) rows[r] = s2_row(g, xp, H, W, pw, 2 * oh - ph + r);
  for (int64_t ow = 0; ow < o->OW; ow += 16) {
    __m512 acc[DW_ROWS];
    #pragma GCC unroll 16
    for (int j = 0; j < R; j++) acc[j] = _mm512_setzero_ps();
    #pragma GCC unroll 16
    for (int r = 0; r < 2 * (R - 1) + K; r++) {
      if (!rows[r]) continue;
      #pragma GCC unroll 16
      for (int kw = 0; kw < K; kw++) {
        const __m512 v = _mm512_loadu_ps(rows[r] + (kw & 1) * g->ne + ow + kw / 2);
        #pragma GCC unroll 16
        for (int j = 0; j < R; j++) {
          const int kh = r - 2 * j;
          if (kh >= 0 && kh < K) acc[j] = _mm512_fmadd_ps(_mm512_set1_ps(wc[kh * K + kw]), v, acc[j]);
        }
      }
    }
    const __mmask16 m = lanes_below(o->OW - ow);
    #pragma GCC unroll 16
    for (int j = 0; j < R; j++) dw_store(o, acc[j], oh + j, ow, m);
  }
}

static inline __attribute__((always_inline)) void s2_plane(s2_ring *g, const nnp_conv2d_desc *d, const float *xp,
                                                           const float *wc, const dw_out *o, const int K) {
  for (int64_t s = 0; s < g->slots; s++) g->tag[s] = -1; /* the ring holds the previous plane's rows */
  int64_t oh = 0;
  for (; oh + DW_ROWS <= d->oh; oh += DW_ROWS) s2_rows(g, xp, d->h, d->w, wc, o, oh, d->ph, d->pw, K, DW_ROWS);
  switch (d->oh - oh) { /* as for stride 1 */
    case 3: s2_rows(g, xp, d->h, d->w, wc, o, oh, d->ph, d->pw, K, 3); break;
    case 2: s2_rows(g, xp, d->h, d->w, wc, o, oh, d->ph, d->pw, K, 2); break;
    case 1: s2_rows(g, xp, d->h, d->w, wc, o, oh, d->ph, d->pw, K, 1); break;
    default: break;
  }
}

/* One function per kernel size and stride, so each inlines with constant loops. */
static void s1_plane_k3(const nnp_conv2d_desc *d, const float *xp, const float *wc, const dw_out *o) {
  s1_plane(d, xp, wc, o, 3);
}
static void s1_plane_k5(const nnp_conv2d_desc *d, const float *xp, const float *wc, const dw_out *o) {
  s1_plane(d, xp, wc, o, 5);
}
static void s2_plane_k3(s2_ring *g, const nnp_conv2d_desc *d, const float *xp, const float *wc, const dw_out *o) {
  s2_plane(g, d, xp, wc, o, 3);
}
static void s2_plane_k5(s2_ring *g, const nnp_conv2d_desc *d, const float *xp, const float *wc, const dw_out *o) {
  s2_plane(g, d, xp, wc, o, 5);
}

void nnp_dwconv_planes_avx512(const nnp_conv2d_desc *d, const float *x, const float *w, float *y,
                              const nnp_epilogue *ep, int64_t b, int64_t e) {
  const int64_t K = d->kh, s = d->sh;
  /* stride 2: the even and odd halves cover the last block's taps (ow + 15 + (K - 1) / 2) */
  const int64_t OWr = (d->ow + 15) / 16 * 16, ne = (OWr + (K - 1) / 2 + 15) / 16 * 16;
  const int64_t slots = 2 * (DW_ROWS - 1) + K + 1; /* a pass's rows, and the one the next pass reuses */
  if ((K != 3 && K != 5) || d->kw != K || (s != 1 && s != 2) || d->sw != s || d->dh != 1 || d->dw != 1 ||
      (s == 2 && slots * 2 * ne > DW_S2_MAX_FLOATS)) {
    nnp_dwconv_planes_avx2(d, x, w, y, ep, b, e);
    return;
  }
  float work[s == 2 ? slots * 2 * ne : 1];
  s2_ring g = {.rows = work, .ne = ne, .slots = slots};
  if (s == 2)
    for (int64_t i = 0; i < 2 * ne; i += 16) g.cols[i / 16] = col_plan(i - d->pw, d->w);
  const int64_t P = d->oh * d->ow;
  for (int64_t plane = b; plane < e; plane++) {
    const int64_t c = plane % d->c;
    const float *xp = x + plane * d->h * d->w, *wc = w + c * K * K;
    nnp_epilogue loc = {0};
    if (ep) {
      loc = *ep;
      if (loc.bias_kind == NNP_BIAS_ROW) loc.bias = ep->bias + c;
      if (loc.residual) loc.residual = ep->residual + plane * P;
      loc.ld_res = 0;
    }
    const dw_out o = {.ep = ep ? &loc : NULL,
                      .yp = y + plane * P,
                      .OW = d->ow,
                      .bias = _mm512_set1_ps(ep && loc.bias_kind == NNP_BIAS_ROW ? loc.bias[0] : 0.0f)};
    if (s == 1) (K == 3 ? s1_plane_k3 : s1_plane_k5)(d, xp, wc, &o);
    else (K == 3 ? s2_plane_k3 : s2_plane_k5)(&g, d, xp, wc, &o);
  }
}

#else
/* Built without AVX-512 support in the compiler: the AVX2 kernel does the work. */
void nnp_dwconv_planes_avx512(const nnp_conv2d_desc *d, const float *x, const float *w, float *y,
                              const nnp_epilogue *ep, int64_t b, int64_t e) {
  nnp_dwconv_planes_avx2(d, x, w, y, ep, b, e);
}
#endif
