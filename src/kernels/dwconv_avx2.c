/* Depthwise convolution for AVX2 + FMA (this file gets -mavx2 -mfma).
 *
 * Stride 1 and 2: eight output columns per vector, all taps accumulated in a register
 * (one store per output, against one load + store per tap for the row-at-a-time
 * generic kernel). A stride-2 tap reads 16 consecutive inputs and keeps the even ones
 * (shuffle + permute). Taps in the padding read zeros through masked loads; the ragged
 * end of a row stores through a mask. Other strides use the generic code compiled here. */
#include <immintrin.h>
#include <string.h>

#include "kernels/act_avx2.h"
#include "kernels/dwconv.h"

#define DWCONV_FN dwconv_planes_any_avx2
static void dwconv_planes_any_avx2(const nnp_conv2d_desc *d, const float *x, const float *w, float *y,
                                   const nnp_epilogue *ep, int64_t b, int64_t e);
#include "kernels/dwconv_impl.h"

static inline __m256 load_s2(const float *p) {
  __m256 a = _mm256_loadu_ps(p), b = _mm256_loadu_ps(p + 8);
  __m256 ev = _mm256_shuffle_ps(a, b, 0x88); /* a0 a2 b0 b2 | a4 a6 b4 b6 */
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(ev), 0xD8));
}


/* Where and how one vector of eight outputs is stored (epilogue applied). */
typedef struct dw_out {
  const nnp_epilogue *ep; /* per-plane epilogue (bias, residual already offset) or NULL */
  float *yp;
  int64_t OW;
  __m256 bias;
  bool vec_act;
} dw_out;

static inline void dw_store(const dw_out *o, __m256 acc, int64_t oh, int64_t ow) {
  float *yr = o->yp + oh * o->OW;
  const int64_t valid = o->OW - ow;
  if (valid < 8 && (!o->vec_act || !o->ep)) { /* ragged end, sigmoid: the scalar epilogue */
    float t[8];
    _mm256_storeu_ps(t, acc);
    for (int64_t i = 0; i < valid; i++) yr[ow + i] = nnp_epilogue_apply(o->ep, 0, oh * o->OW + ow + i, t[i]);
    return;
  }
  if (!o->ep) {
    _mm256_storeu_ps(yr + ow, acc);
    return;
  }
  if (valid < 8) { /* the ragged end (all of a 7-wide row): masked loads and stores */
    const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)valid), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    acc = _mm256_add_ps(acc, o->bias);
    if (o->ep->residual) acc = _mm256_add_ps(acc, _mm256_maskload_ps(o->ep->residual + oh * o->OW + ow, mask));
    _mm256_maskstore_ps(yr + ow, mask, nnp_act8(o->ep, acc));
    return;
  }
  acc = _mm256_add_ps(acc, o->bias);
  if (o->ep->residual) acc = _mm256_add_ps(acc, _mm256_loadu_ps(o->ep->residual + oh * o->OW + ow));
  if (o->vec_act) _mm256_storeu_ps(yr + ow, nnp_act8(o->ep, acc));
  else {
    float t[8];
    _mm256_storeu_ps(t, acc);
    for (int i = 0; i < 8; i++) yr[ow + i] = nnp_act_apply(o->ep, t[i]);
  }
}

/* Lanes [lo, hi) of 8 set (masked loads read zeros elsewhere and never touch memory). */
static inline __m256i lane_mask(int64_t lo, int64_t hi) {
  const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  if (lo < 0) lo = 0;
  if (hi > 8) hi = 8;
  return _mm256_and_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32((int)hi), iota),
                          _mm256_cmpgt_epi32(iota, _mm256_set1_epi32((int)lo - 1)));
}

/* Eight outputs' inputs of one tap in input row xr: columns c0 + i*sw (sw 1 or 2), zero
 * where a column is outside [0, W) (the padding). */
static inline __m256 load_tap_masked(const float *xr, int64_t c0, int64_t W, int64_t sw) {
  if (sw == 1) return _mm256_maskload_ps(xr + c0, lane_mask(-c0, W - c0));
  __m256 a = _mm256_maskload_ps(xr + c0, lane_mask(-c0, W - c0));
  __m256 b = _mm256_maskload_ps(xr + c0 + 8, lane_mask(-c0 - 8, W - c0 - 8));
  __m256 ev = _mm256_shuffle_ps(a, b, 0x88);
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(ev), 0xD8));
}

/* The input is read in place: no padded copy of the plane (that copy was a fifth of the
 * depthwise time on 112x112 planes). Vectors whose taps all fall inside the row use
 * plain loads; the few at the left and right edges use masked loads that read zeros for
 * the padding; taps above or below the plane are skipped. Four output rows at a time
 * where all their taps are inside the plane: four independent FMA chains (one chain of
 * KH*KW dependent FMAs was latency-bound), each weight broadcast shared by four. */
void nnp_dwconv_planes_avx2(const nnp_conv2d_desc *d, const float *x, const float *w, float *y,
                            const nnp_epilogue *ep, int64_t b, int64_t e) {
  const int64_t H = d->h, W = d->w, OH = d->oh, OW = d->ow, KH = d->kh, KW = d->kw, sw = d->sw, sh = d->sh;
  const int64_t ph = d->ph, pw = d->pw, dh = d->dh, dw = d->dw;
  if ((sw != 1 && sw != 2) || KH * KW > 64) {
    dwconv_planes_any_avx2(d, x, w, y, ep, b, e);
    return;
  }
  const int64_t OWr = (OW + 7) / 8 * 8, P = OH * OW;
  const int64_t span = 7 * sw + (sw == 2 ? 1 : 0); /* last column a vector's tap reads, past its first */
  const bool vec_act = !ep || ep->act != NNP_ACT_SIGMOID;
  for (int64_t plane = b; plane < e; plane++) {
    const int64_t c = plane % d->c;
    const float *xp = x + plane * H * W, *wc = w + c * KH * KW;
    float *yp = y + plane * P;
    nnp_epilogue loc = {0};
    if (ep) {
      loc = *ep;
      if (loc.bias_kind == NNP_BIAS_ROW) loc.bias = ep->bias + c;
      if (loc.residual) loc.residual = ep->residual + plane * P;
      loc.ld_res = 0;
    }
    __m256 wv[64];
    for (int64_t t = 0; t < KH * KW; t++) wv[t] = _mm256_set1_ps(wc[t]);
    const __m256 bias = _mm256_set1_ps(ep && loc.bias_kind == NNP_BIAS_ROW ? loc.bias[0] : 0.0f);
    const dw_out o = {.ep = ep ? &loc : NULL, .yp = yp, .OW = OW, .bias = bias, .vec_act = vec_act};
    for (int64_t oh = 0; oh < OH;) {
      const int64_t ih0 = oh * sh - ph;
      /* all taps of rows oh..oh+3 inside the plane */
      if (oh + 4 <= OH && ih0 >= 0 && (oh + 3) * sh - ph + (KH - 1) * dh < H) {
        const int64_t rs = sh * W; /* input distance between consecutive output rows */
        for (int64_t ow = 0; ow < OWr; ow += 8) {
          const int64_t c0 = ow * sw - pw;
          const bool inside = c0 >= 0 && c0 + (KW - 1) * dw + span < W;
          __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
          for (int64_t kh = 0; kh < KH; kh++) {
            const float *xr = xp + (ih0 + kh * dh) * W;
            const __m256 *wk = wv + kh * KW;
            for (int64_t kw = 0; kw < KW; kw++) {
              const int64_t cc = c0 + kw * dw;
              __m256 v0, v1, v2, v3;
              if (inside && sw == 1) {
                v0 = _mm256_loadu_ps(xr + cc);
                v1 = _mm256_loadu_ps(xr + rs + cc);
                v2 = _mm256_loadu_ps(xr + 2 * rs + cc);
                v3 = _mm256_loadu_ps(xr + 3 * rs + cc);
              } else if (inside) {
                v0 = load_s2(xr + cc);
                v1 = load_s2(xr + rs + cc);
                v2 = load_s2(xr + 2 * rs + cc);
                v3 = load_s2(xr + 3 * rs + cc);
              } else {
                v0 = load_tap_masked(xr, cc, W, sw);
                v1 = load_tap_masked(xr + rs, cc, W, sw);
                v2 = load_tap_masked(xr + 2 * rs, cc, W, sw);
                v3 = load_tap_masked(xr + 3 * rs, cc, W, sw);
              }
              a0 = _mm256_fmadd_ps(wk[kw], v0, a0);
              a1 = _mm256_fmadd_ps(wk[kw], v1, a1);
              a2 = _mm256_fmadd_ps(wk[kw], v2, a2);
              a3 = _mm256_fmadd_ps(wk[kw], v3, a3);
            }
          }
          dw_store(&o, a0, oh, ow);
          dw_store(&o, a1, oh + 1, ow);
          dw_store(&o, a2, oh + 2, ow);
          dw_store(&o, a3, oh + 3, ow);
        }
        oh += 4;
        continue;
      }
      for (int64_t ow = 0; ow < OWr; ow += 8) { /* one row: taps outside the plane skipped */
        const int64_t c0 = ow * sw - pw;
        const bool inside = c0 >= 0 && c0 + (KW - 1) * dw + span < W;
        __m256 acc = _mm256_setzero_ps();
        for (int64_t kh = 0; kh < KH; kh++) {
          const int64_t ih = ih0 + kh * dh;
          if (ih < 0 || ih >= H) continue;
          const float *xr = xp + ih * W;
          const __m256 *wk = wv + kh * KW;
          for (int64_t kw = 0; kw < KW; kw++) {
            const int64_t cc = c0 + kw * dw;
            __m256 v = inside ? (sw == 1 ? _mm256_loadu_ps(xr + cc) : load_s2(xr + cc)) : load_tap_masked(xr, cc, W, sw);
            acc = _mm256_fmadd_ps(wk[kw], v, acc);
          }
        }
        dw_store(&o, acc, oh, ow);
      }
      oh++;
    }
  }
}
