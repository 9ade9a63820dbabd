/* The AVX2 + FMA direct convolution kernel (kernels/dconv.h): 4 output channels x 3 YMM
 * vectors of 8 output positions, 12 accumulators + 3 input vectors + 1 weight broadcast
 * of the 16 YMM registers. The padding masks (kernels/dconv.h) are expanded to vector
 * masks once per tap, outside the channel loop; vmaskmovps does not read (or fault on)
 * masked-off lanes. This file alone is compiled with -mavx2 -mfma. */
#include <immintrin.h>

#include "kernels/dconv.h"

#if defined(__AVX2__) && defined(__FMA__)
enum { MB = 4, VL = 8 };

static inline __m256 act8(const nnp_epilogue *ep, __m256 v) {
  switch (ep->act) {
    case NNP_ACT_RELU: return _mm256_max_ps(v, _mm256_setzero_ps());
    case NNP_ACT_CLIP:
      return _mm256_min_ps(_mm256_max_ps(v, _mm256_set1_ps(ep->act_min)), _mm256_set1_ps(ep->act_max));
    case NNP_ACT_HARDSWISH: {
      __m256 t = _mm256_add_ps(v, _mm256_set1_ps(3.0f));
      t = _mm256_min_ps(_mm256_max_ps(t, _mm256_setzero_ps()), _mm256_set1_ps(6.0f));
      return _mm256_mul_ps(_mm256_mul_ps(v, t), _mm256_set1_ps(1.0f / 6.0f));
    }
    default: return v;
  }
}

/* lane i of the result is all ones where bit i of m is set */
static inline __m256i lanes(unsigned m) {
  const __m256i bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
  return _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32((int)m), bit), bit);
}

/* As the AVX-512 tile (dconv_avx512.c), on 8 lanes. */
static inline __attribute__((always_inline)) void tile(const nnp_dconv *k, const float *xn, const float *wb,
                                                       float *yn, int64_t m0, int mr, int64_t v0, const int NV,
                                                       const nnp_epilogue *ep) {
  const int64_t C = k->d.c, P = k->P, taps = k->taps;
  __m256 acc[MB][3];
  for (int i = 0; i < MB; i++)
    for (int j = 0; j < NV; j++) acc[i][j] = _mm256_setzero_ps();
  for (int64_t t = 0; t < taps; t++) {
    __m256i mk[3];
    unsigned any = 0;
    for (int j = 0; j < NV; j++) {
      unsigned m = k->mask[(v0 + j) * taps + t];
      any |= m;
      mk[j] = lanes(m);
    }
    if (!any) continue;
    const float *xp = xn + v0 * VL + k->off[t], *wp = wb + t * C * MB;
    for (int64_t c = 0; c < C; c++, xp += P, wp += MB) {
      __m256 xv[3];
      for (int j = 0; j < NV; j++) xv[j] = _mm256_maskload_ps(xp + j * VL, mk[j]);
      for (int i = 0; i < MB; i++) {
        __m256 wv = _mm256_broadcast_ss(wp + i);
        for (int j = 0; j < NV; j++) acc[i][j] = _mm256_fmadd_ps(wv, xv[j], acc[i][j]);
      }
    }
  }
  /* constant bounds only (mr is tested inside): with a variable bound the compiler keeps
   * acc in memory and stored all 24 accumulators on every channel of the loop above */
#pragma GCC unroll 4
  for (int j = 0; j < NV; j++) {
    int64_t p0 = (v0 + j) * VL, rem = P - p0;
#pragma GCC unroll 8
    for (int i = 0; i < MB; i++) {
      if (i >= mr) break;
      int64_t m = m0 + i;
      __m256 v = acc[i][j];
      float *dst = yn + m * P + p0;
      if (rem < VL || (ep && ep->act == NNP_ACT_SIGMOID)) { /* a ragged vector or expf: through a buffer */
        float buf[VL];
        _mm256_storeu_ps(buf, v);
        for (int l = 0; l < rem && l < VL; l++) dst[l] = nnp_epilogue_apply(ep, m, p0 + l, buf[l]);
        continue;
      }
      if (ep) {
        if (ep->bias_kind == NNP_BIAS_ROW) v = _mm256_add_ps(v, _mm256_set1_ps(ep->bias[m]));
        if (ep->residual) v = _mm256_add_ps(v, _mm256_loadu_ps(ep->residual + m * P + p0));
        v = act8(ep, v);
      }
      _mm256_storeu_ps(dst, v);
    }
  }
}

void nnp_dconv_tasks_avx2(const nnp_dconv *k, const float *x, float *y, const nnp_epilogue *ep, int64_t t0,
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
void nnp_dconv_tasks_avx2(const nnp_dconv *k, const float *x, float *y, const nnp_epilogue *ep, int64_t t0,
                          int64_t t1) {
  nnp_dconv_tasks_generic(k, x, y, ep, t0, t1);
}
#endif
