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

#define DW_PAD_MAX_FLOATS (64 * 1024) /* 256 KiB on the stack, per thread */

void nnp_dwconv_planes_avx2(const nnp_conv2d_desc *d, const float *x, const float *w, float *y,
                            const nnp_epilogue *ep, int64_t b, int64_t e) {
  const int64_t H = d->h, W = d->w, OH = d->oh, OW = d->ow, KH = d->kh, KW = d->kw, sw = d->sw, sh = d->sh;
  const int64_t OWr = (OW + 7) / 8 * 8;
  /* The plane is copied into a zero-bordered buffer big enough for every tap of every
   * (rounded-up) vector of outputs, so the inner loop has no bounds tests at all. */
  int64_t PH = (OH - 1) * sh + (KH - 1) * d->dh + 1, PW = (OWr - 1) * sw + (KW - 1) * d->dw + 1 + (sw == 2 ? 1 : 0);
  if (PH < H + d->ph) PH = H + d->ph;
  if (PW < W + d->pw) PW = W + d->pw;
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
    memset(buf, 0, sizeof buf);
    for (int64_t r = 0; r < H; r++) memcpy(buf + (r + d->ph) * PW + d->pw, xp + r * W, (size_t)W * sizeof(float));
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
    for (int64_t oh = 0; oh < OH; oh++) {
      float *yr = yp + oh * OW;
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
        if (ow + 8 > OW) { /* the ragged end: scalar epilogue on the valid columns */
          float t[8];
          _mm256_storeu_ps(t, acc);
          for (int64_t i = 0; ow + i < OW; i++) yr[ow + i] = nnp_epilogue_apply(ep ? &loc : NULL, 0, oh * OW + ow + i, t[i]);
          continue;
        }
        if (!ep) {
          _mm256_storeu_ps(yr + ow, acc);
          continue;
        }
        acc = _mm256_add_ps(acc, bias);
        if (loc.residual) acc = _mm256_add_ps(acc, _mm256_loadu_ps(loc.residual + oh * OW + ow));
        if (vec_act) _mm256_storeu_ps(yr + ow, nnp_act8(&loc, acc));
        else {
          float t[8];
          _mm256_storeu_ps(t, acc);
          for (int i = 0; i < 8; i++) yr[ow + i] = nnp_act_apply(&loc, t[i]);
        }
      }
    }
  }
}
