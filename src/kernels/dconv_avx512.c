/* The AVX-512F direct convolution kernel (kernels/dconv.h): 8 output channels x 3 ZMM
 * vectors of 16 output positions, 24 accumulators over all input channels and taps.
 * Per input channel and tap: 3 masked loads of the input (the mask zeroes the padding
 * and the lanes past the plane; masked-off lanes are never read, so a vector that starts
 * before the plane or ends past it does not fault) and 8 weight broadcasts for 24 FMAs.
 * This file alone is compiled with -mavx512f; it runs only where the dispatch table (kernels/dispatch.h) picks AVX-512. */
#include <immintrin.h>

#include "kernels/dconv.h"

#if defined(__AVX512F__) && defined(__AVX512VL__)
#include "kernels/act_avx512.h"

enum { MB = 8, VL = 16 };

/* Stores channel m's vector of positions p0.. (rem of them in the plane) through the
 * epilogue. */
static inline void store16(float *yn, int64_t P, int64_t m, int64_t p0, __m512 v, const nnp_epilogue *ep) {
  int64_t rem = P - p0;
  __mmask16 sm = rem >= VL ? (__mmask16)0xffff : (__mmask16)((1u << rem) - 1u);
  float *dst = yn + m * P + p0;
  if (ep && ep->act == NNP_ACT_SIGMOID) { /* scalar expf: through a buffer */
    float buf[VL];
    _mm512_storeu_ps(buf, v);
    for (int l = 0; l < rem && l < VL; l++) dst[l] = nnp_epilogue_apply(ep, m, p0 + l, buf[l]);
    return;
  }
  if (ep) {
    if (ep->bias_kind == NNP_BIAS_ROW) v = _mm512_add_ps(v, _mm512_set1_ps(ep->bias[m]));
    if (ep->residual) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(sm, ep->residual + m * P + p0));
    v = nnp_act16(ep, v);
  }
  _mm512_mask_storeu_ps(dst, sm, v);
}

/* Channels m0.. (mr of them valid) x vectors v0 .. v0 + NV - 1 of image xn -> yn. NV is a
 * constant at each call site. The 24 accumulators are named variables, not an array:
 * GCC kept an array of them in memory and stored every accumulator on every channel. */
#define ROW(i)                                                                       \
  do {                                                                               \
    __m512 wv = _mm512_set1_ps(wp[i]);                                               \
    a##i##0 = _mm512_fmadd_ps(wv, x0, a##i##0);                                      \
    if (NV > 1) a##i##1 = _mm512_fmadd_ps(wv, x1, a##i##1);                          \
    if (NV > 2) a##i##2 = _mm512_fmadd_ps(wv, x2, a##i##2);                          \
  } while (0)
#define STORE(i)                                                                     \
  do {                                                                               \
    if (i < mr) {                                                                    \
      store16(yn, P, m0 + i, v0 * VL, a##i##0, ep);                                  \
      if (NV > 1) store16(yn, P, m0 + i, (v0 + 1) * VL, a##i##1, ep);                \
      if (NV > 2) store16(yn, P, m0 + i, (v0 + 2) * VL, a##i##2, ep);                \
    }                                                                                \
  } while (0)

static inline __attribute__((always_inline)) void tile(const nnp_dconv *k, const float *xn, const float *wb,
                                                       float *yn, int64_t m0, int mr, int64_t v0, const int NV,
                                                       const nnp_epilogue *ep) {
  const int64_t C = k->d.c, P = k->P, taps = k->taps;
  const __m512 z = _mm512_setzero_ps();
  __m512 a00 = z, a01 = z, a02 = z, a10 = z, a11 = z, a12 = z, a20 = z, a21 = z, a22 = z, a30 = z, a31 = z, a32 = z;
  __m512 a40 = z, a41 = z, a42 = z, a50 = z, a51 = z, a52 = z, a60 = z, a61 = z, a62 = z, a70 = z, a71 = z, a72 = z;
  const uint16_t *mrow = k->mask + v0 * taps;
  for (int64_t t = 0; t < taps; t++) {
    __mmask16 k0 = mrow[t], k1 = NV > 1 ? mrow[taps + t] : 0, k2 = NV > 2 ? mrow[2 * taps + t] : 0;
    if (!(k0 | k1 | k2)) continue; /* the tap reads only padding for these positions */
    const float *xp = xn + v0 * VL + k->off[t], *wp = wb + t * C * MB;
    for (int64_t c = 0; c < C; c++, xp += P, wp += MB) {
      __m512 x0 = _mm512_maskz_loadu_ps(k0, xp), x1 = z, x2 = z;
      if (NV > 1) x1 = _mm512_maskz_loadu_ps(k1, xp + VL);
      if (NV > 2) x2 = _mm512_maskz_loadu_ps(k2, xp + 2 * VL);
      ROW(0);
      ROW(1);
      ROW(2);
      ROW(3);
      ROW(4);
      ROW(5);
      ROW(6);
      ROW(7);
    }
  }
  STORE(0);
  STORE(1);
  STORE(2);
  STORE(3);
  STORE(4);
  STORE(5);
  STORE(6);
  STORE(7);
}
#undef ROW
#undef STORE

void nnp_dconv_tasks_avx512(const nnp_dconv *k, const float *x, float *y, const nnp_epilogue *ep, int64_t t0,
                            int64_t t1) {
  const nnp_conv2d_desc *d = &k->d;
  const int64_t P = k->P;
  for (int64_t t = t0; t < t1; t++) {
    int64_t n, b, g;
    nnp_dconv_task(k, t, &n, &b, &g);
    const float *xn = x + n * d->c * P, *wb = k->w + b * k->taps * d->c * MB;
    float *yn = y + n * d->m * P;
    nnp_epilogue loc, *lp = NULL;
    if (ep) {
      loc = *ep;
      if (loc.residual) loc.residual += n * d->m * P;
      loc.ld_res = P;
      lp = &loc;
    }
    int64_t m0 = b * MB, v0 = g * 3;
    int mr = (int)(d->m - m0 < MB ? d->m - m0 : MB);
    switch (k->vecs - v0 < 3 ? k->vecs - v0 : 3) {
      case 3: tile(k, xn, wb, yn, m0, mr, v0, 3, lp); break;
      case 2: tile(k, xn, wb, yn, m0, mr, v0, 2, lp); break;
      default: tile(k, xn, wb, yn, m0, mr, v0, 1, lp); break;
    }
  }
}
#else
/* Built without AVX-512 support in the compiler: never selected (see kernels/cpu.c). */
void nnp_dconv_tasks_avx512(const nnp_dconv *k, const float *x, float *y, const nnp_epilogue *ep, int64_t t0,
                            int64_t t1) {
  nnp_dconv_tasks_generic(k, x, y, ep, t0, t1);
}
#endif
