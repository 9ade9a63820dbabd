/* The AVX2 + FMA direct convolution kernel (kernels/dconv.h): 4 output channels x 3 YMM
 * vectors of 8 output positions, 12 accumulators + 3 input vectors + 1 weight broadcast
 * of the 16 YMM registers. The padding masks (kernels/dconv.h) are expanded to vector
 * masks once per tap, outside the channel loop; vmaskmovps does not read (or fault on)
 * masked-off lanes. This file alone is compiled with -mavx2 -mfma. */
#include <immintrin.h>

#include "kernels/dconv.h"

#if defined(__AVX2__) && defined(__FMA__)
#include "kernels/act_avx2.h"

enum { MB = 4, VL = 8 };

/* lane i of the result is all ones where bit i of m is set */
static inline __m256i lanes(unsigned m) {
  const __m256i bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
  return _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32((int)m), bit), bit);
}

/* Inline (forced): GCC kept it out of line, and a call per output vector, twelve a tile,
 * made the caller spill its live vectors around each call (all YMM registers are
 * caller-saved): grouped 3x3 layers 2-13% slower (bench_conv_layers 1 1 g3x3 direct). */
static inline __attribute__((always_inline)) void store8(float *yn, int64_t P, int64_t m, int64_t p0, __m256 v,
                                                         const nnp_epilogue *ep) {
  int64_t rem = P - p0;
  float *dst = yn + m * P + p0;
  if (rem < VL || (ep && ep->act == NNP_ACT_SIGMOID)) { /* a ragged vector or expf: through a buffer */
    float buf[VL];
    _mm256_storeu_ps(buf, v);
    for (int l = 0; l < rem && l < VL; l++) dst[l] = nnp_epilogue_apply(ep, m, p0 + l, buf[l]);
    return;
  }
  if (ep) {
    if (ep->bias_kind == NNP_BIAS_ROW) v = _mm256_add_ps(v, _mm256_set1_ps(ep->bias[m]));
    if (ep->residual) v = _mm256_add_ps(v, _mm256_loadu_ps(ep->residual + m * P + p0));
    v = nnp_act8(ep, v);
  }
  _mm256_storeu_ps(dst, v);
}

/* As the AVX-512 tile (dconv_avx512.c, named accumulators for the same reason), on 8
 * lanes. */
#define ROW(i)                                                                       \
  do {                                                                               \
    __m256 wv = _mm256_broadcast_ss(wp + i);                                         \
    a##i##0 = _mm256_fmadd_ps(wv, x0, a##i##0);                                      \
    if (NV > 1) a##i##1 = _mm256_fmadd_ps(wv, x1, a##i##1);                          \
    if (NV > 2) a##i##2 = _mm256_fmadd_ps(wv, x2, a##i##2);                          \
  } while (0)
#define STORE(i)                                                                     \
  do {                                                                               \
    if (i < mr) {                                                                    \
      store8(yn, P, m0 + i, v0 * VL, a##i##0, ep);                                   \
      if (NV > 1) store8(yn, P, m0 + i, (v0 + 1) * VL, a##i##1, ep);                 \
      if (NV > 2) store8(yn, P, m0 + i, (v0 + 2) * VL, a##i##2, ep);                 \
    }                                                                                \
  } while (0)

static inline __attribute__((always_inline)) void tile(const nnp_dconv *k, const float *xn, const float *wb,
                                                       float *yn, int64_t m0, int mr, int64_t v0, const int NV,
                                                       const nnp_epilogue *ep) {
  const int64_t C = k->cg, P = k->P, cs = k->cstride, taps = k->taps;
  const __m256 z = _mm256_setzero_ps();
  __m256 a00 = z, a01 = z, a02 = z, a10 = z, a11 = z, a12 = z, a20 = z, a21 = z, a22 = z, a30 = z, a31 = z, a32 = z;
  const uint16_t *mrow = k->mask + v0 * taps;
  for (int64_t t = 0; t < taps; t++) { /* tap outer: its masks stay in registers */
    unsigned b0 = mrow[t], b1 = NV > 1 ? mrow[taps + t] : 0, b2 = NV > 2 ? mrow[2 * taps + t] : 0;
    if (!(b0 | b1 | b2)) continue; /* the tap reads only padding for these positions */
    const __m256i k0 = lanes(b0), k1 = lanes(b1), k2 = lanes(b2);
    const float *xp = xn + v0 * VL + k->off[t], *wp = wb + t * C * MB;
    for (int64_t c = 0; c < C; c++, xp += cs, wp += MB) {
      __m256 x0 = _mm256_maskload_ps(xp, k0), x1 = z, x2 = z;
      if (NV > 1) x1 = _mm256_maskload_ps(xp + VL, k1);
      if (NV > 2) x2 = _mm256_maskload_ps(xp + 2 * VL, k2);
      ROW(0);
      ROW(1);
      ROW(2);
      ROW(3);
    }
  }
  STORE(0);
  STORE(1);
  STORE(2);
  STORE(3);
}
#undef ROW
#undef STORE

void nnp_dconv_tasks_avx2(const nnp_dconv *k, const float *x, float *y, const nnp_epilogue *ep, int64_t t0,
                          int64_t t1) {
  const nnp_conv2d_desc *d = &k->d;
  const int64_t P = k->P;
  for (int64_t t = t0; t < t1; t++) {
    int64_t n, b, g;
    nnp_dconv_task(k, t, &n, &b, &g);
    int64_t m0, c0;
    int mr;
    nnp_dconv_block(k, b, &m0, &mr, &c0);
    const float *xn = x + (n * d->c + c0) * k->cstride, *wb = k->w + b * k->taps * k->cg * MB;
    float *yn = y + n * d->m * P;
    nnp_epilogue loc, *lp = NULL;
    if (ep) {
      loc = *ep;
      if (loc.residual) loc.residual += n * d->m * P;
      loc.ld_res = P;
      lp = &loc;
    }
    const int64_t v0 = g * 3;
    switch (k->vecs - v0 < 3 ? k->vecs - v0 : 3) {
      case 3: tile(k, xn, wb, yn, m0, mr, v0, 3, lp); break;
      case 2: tile(k, xn, wb, yn, m0, mr, v0, 2, lp); break;
      default: tile(k, xn, wb, yn, m0, mr, v0, 1, lp); break;
    }
  }
}
#else
void nnp_dconv_tasks_avx2(const nnp_dconv *k, const float *x, float *y, const nnp_epilogue *ep, int64_t t0,
                          int64_t t1) {
  nnp_dconv_tasks_generic(k, x, y, ep, t0, t1);
}
#endif
