/* Depthwise convolution for AVX2 + FMA (this file gets -mavx2 -mfma).
 *
 * Stride 1 and 2: eight output columns per vector, all taps accumulated in a register
 * (one store per output, against one load + store per tap for the row-at-a-time
 * generic kernel). A stride-2 tap reads 16 consecutive inputs and keeps the even ones
 * (shuffle + permute). Columns whose taps leave the row (the padding) and the ragged
 * end run the scalar epilogue path. Other strides use the generic code compiled here. */
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


/* The first n (1..8) lanes of v to dst. vmaskmovps stores are microcoded on AMD Zen
 * (one every dozen or more cycles): on 7- and 14-wide planes, where every row ends in
 * a ragged vector, the masked store was the hottest instruction of the kernel. */
static inline void store_first(float *dst, __m256 v, int64_t n) {
  if (n >= 8) {
    _mm256_storeu_ps(dst, v);
    return;
  }
  __m128 h = _mm256_castps256_ps128(v);
  if (n >= 4) {
    _mm_storeu_ps(dst, h);
    h = _mm256_extractf128_ps(v, 1);
    dst += 4;
    n -= 4;
  }
  if (n >= 2) {
    _mm_storel_pi((__m64 *)dst, h);
    h = _mm_movehl_ps(h, h);
    dst += 2;
    n -= 2;
  }
  if (n) _mm_store_ss(dst, h);
}

/* Where and how one vector of eight outputs is stored (epilogue applied). */
typedef struct dw_out {
  const nnp_epilogue *ep; /* per-plane epilogue (bias, residual already offset) or NULL */
  float *yp;
  int64_t OW;
  __m256 bias;
  bool vec_act;
} dw_out;

static inline __attribute__((always_inline)) void dw_store(const dw_out *o, __m256 acc, int64_t oh, int64_t ow) {
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
    store_first(yr + ow, nnp_act8(o->ep, acc), valid);
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

#define DW_PAD_MAX_FLOATS (64 * 1024) /* 256 KiB on the stack, per thread */

#include "kernels/dwconv_c8_avx2.h"
#include "kernels/dwconv_fast_avx2.h"

/* Row vectors: the register-tiled 3x3/5x5 path, else a padded copy of each plane. */
static void dwconv_rows_avx2(const nnp_conv2d_desc *d, const float *x, const float *w, float *y,
                             const nnp_epilogue *ep, int64_t b, int64_t e) {
  const int64_t H = d->h, W = d->w, OH = d->oh, OW = d->ow, KH = d->kh, KW = d->kw, sw = d->sw, sh = d->sh;
  const int64_t OWr = (OW + 7) / 8 * 8;
  /* The plane is copied into a zero-bordered buffer big enough for every tap of every
   * (rounded-up) vector of outputs, so the inner loop has no bounds tests at all. */
  int64_t PH = (OH - 1) * sh + (KH - 1) * d->dh + 1, PW = (OWr - 1) * sw + (KW - 1) * d->dw + 1 + (sw == 2 ? 1 : 0);
  if (PH < H + d->ph) PH = H + d->ph;
  if (PW < W + d->pw) PW = W + d->pw;
  if (dw_fast_planes(d, x, w, y, ep, b, e)) return;
  if ((sw != 1 && sw != 2) || KH * KW > 64 || PH * PW > DW_PAD_MAX_FLOATS) {
    dwconv_planes_any_avx2(d, x, w, y, ep, b, e);
    return;
  }
  float buf[PH * PW];
  const int64_t P = OH * OW;
  const bool vec_act = !ep || ep->act != NNP_ACT_SIGMOID;
  for (int64_t plane = b; plane < e; plane++) {
    const int64_t c = plane % d->c;
    const float *xp = x + plane * H * W, *wc = w + c * KH * KW;
    float *yp = y + plane * P;
    /* Zero only the border (the interior is overwritten by the copy). */
    memset(buf, 0, (size_t)(d->ph * PW) * sizeof(float));
    for (int64_t r = 0; r < H; r++) {
      float *row = buf + (r + d->ph) * PW;
      memset(row, 0, (size_t)d->pw * sizeof(float));
      memcpy(row + d->pw, xp + r * W, (size_t)W * sizeof(float));
      memset(row + d->pw + W, 0, (size_t)(PW - d->pw - W) * sizeof(float));
    }
    memset(buf + (H + d->ph) * PW, 0, (size_t)((PH - H - d->ph) * PW) * sizeof(float));
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
    /* Four output rows at a time: four independent FMA chains (one chain of KH*KW
     * dependent FMAs per vector was latency-bound), each weight load shared by four. */
    int64_t oh = 0;
    for (; oh + 4 <= OH; oh += 4)
      for (int64_t ow = 0; ow < OWr; ow += 8) {
        __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        const int64_t rs = sh * PW; /* input distance between consecutive output rows */
        for (int64_t kh = 0; kh < KH; kh++) {
          const float *xr = buf + (oh * sh + kh * d->dh) * PW + ow * sw;
          const __m256 *wk = wv + kh * KW;
          if (sw == 1)
            for (int64_t kw = 0; kw < KW; kw++) {
              const float *q = xr + kw * d->dw;
              a0 = _mm256_fmadd_ps(wk[kw], _mm256_loadu_ps(q), a0);
              a1 = _mm256_fmadd_ps(wk[kw], _mm256_loadu_ps(q + rs), a1);
              a2 = _mm256_fmadd_ps(wk[kw], _mm256_loadu_ps(q + 2 * rs), a2);
              a3 = _mm256_fmadd_ps(wk[kw], _mm256_loadu_ps(q + 3 * rs), a3);
            }
          else
            for (int64_t kw = 0; kw < KW; kw++) {
              const float *q = xr + kw * d->dw;
              a0 = _mm256_fmadd_ps(wk[kw], load_s2(q), a0);
              a1 = _mm256_fmadd_ps(wk[kw], load_s2(q + rs), a1);
              a2 = _mm256_fmadd_ps(wk[kw], load_s2(q + 2 * rs), a2);
              a3 = _mm256_fmadd_ps(wk[kw], load_s2(q + 3 * rs), a3);
            }
        }
        dw_store(&o, a0, oh, ow);
        dw_store(&o, a1, oh + 1, ow);
        dw_store(&o, a2, oh + 2, ow);
        dw_store(&o, a3, oh + 3, ow);
      }
    for (; oh < OH; oh++)
      for (int64_t ow = 0; ow < OWr; ow += 8) {
        __m256 acc = _mm256_setzero_ps();
        for (int64_t kh = 0; kh < KH; kh++) {
          const float *xr = buf + (oh * sh + kh * d->dh) * PW + ow * sw;
          const __m256 *wk = wv + kh * KW;
          if (sw == 1)
            for (int64_t kw = 0; kw < KW; kw++) acc = _mm256_fmadd_ps(wk[kw], _mm256_loadu_ps(xr + kw * d->dw), acc);
          else
            for (int64_t kw = 0; kw < KW; kw++) acc = _mm256_fmadd_ps(wk[kw], load_s2(xr + kw * d->dw), acc);
        }
        dw_store(&o, acc, oh, ow);
      }
  }
}

void nnp_dwconv_planes_avx2(const nnp_conv2d_desc *d, const float *x, const float *w, float *y,
                            const nnp_epilogue *ep, int64_t b, int64_t e) {
  if (!dw_c8_planes(d, x, w, y, ep, b, e, dwconv_rows_avx2)) dwconv_rows_avx2(d, x, w, y, ep, b, e);
}
