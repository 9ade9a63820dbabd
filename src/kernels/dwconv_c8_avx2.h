/* Depthwise convolution on small planes with eight channels per vector (AVX2), for
 * square 3x3 and 5x5 kernels, strides 1 and 2, no dilation: the 14x14 and 7x7 layers
 * at the end of MobileNet and EfficientNet. Included by dwconv_avx2.c only (its
 * store_first, -mavx2 -mfma).
 *
 * Why: on a 7-wide plane the row-vector kernels (dwconv_fast_avx2.h) run one ragged
 * vector per output row and pay the per-plane set-up (border, weights, epilogue) for 49
 * outputs; perf showed no hot spot, only overhead spread over the whole function, and
 * the 960-channel 7x7 layer ran at 11% of the FMA peak. Here eight channels are
 * transposed into a zero-bordered [row][column][8] buffer, every output is one full
 * vector over the channels (no ragged ends, the weights of 8 channels in one vector),
 * and the results are transposed back to the NCHW planes. Same taps in the same order
 * (kh, then kw, from zero, padding included), then bias and activation, as the other
 * AVX2 paths: the outputs are the same bits (tests/kernels/test_kernels_conv.c). */
#ifndef NNP_KERNELS_DWCONV_C8_AVX2_H
#define NNP_KERNELS_DWCONV_C8_AVX2_H

/* Planes up to this output width take the channel-vector path: 28 beat 14 on
 * mobilenet_v2's 28x28 layers (0.65-0.74x), and wider planes overflow the buffer or fill
 * the row vectors well (docs/kernels.md). 0 turns the path off (the A/B base). */
#ifndef NNP_DW_C8_MAX_OW
#define NNP_DW_C8_MAX_OW 28
#endif
enum { DWC8_MAX_BUF = 16 * 1024 }; /* floats of the [PH][PW][8] buffer (64 KiB of stack) */

typedef struct dwc8_geo {
  int64_t PH, PW; /* padded input rows and columns the taps read */
} dwc8_geo;

/* Whether planes of this layer take the path; the epilogue must be one the vector
 * path applies the same way (no residual: its planes would need a gather; no sigmoid). */
static bool dwc8_applies(const nnp_conv2d_desc *d, const nnp_epilogue *ep, dwc8_geo *g) {
  const int64_t K = d->kh, S = d->sw;
  if (d->kw != K || (K != 3 && K != 5) || d->sh != S || (S != 1 && S != 2) || d->dh != 1 || d->dw != 1) return false;
  if (d->ow > NNP_DW_C8_MAX_OW || d->c < 8) return false;
  if (ep && (ep->residual || ep->act == NNP_ACT_SIGMOID || ep->bias_kind == NNP_BIAS_COL)) return false;
  g->PH = (d->oh - 1) * S + K;
  g->PW = (d->ow - 1) * S + K;
  return g->PH * g->PW * 8 <= DWC8_MAX_BUF && d->oh * d->ow * 8 <= DWC8_MAX_BUF && d->h * d->w <= 4096;
}

/* r[i] = lane j of v[j] for j = 0..7, i.e. the 8x8 transpose of v. */
static inline void dwc8_transpose(__m256 v[8]) {
  __m256 t0 = _mm256_unpacklo_ps(v[0], v[1]), t1 = _mm256_unpackhi_ps(v[0], v[1]);
  __m256 t2 = _mm256_unpacklo_ps(v[2], v[3]), t3 = _mm256_unpackhi_ps(v[2], v[3]);
  __m256 t4 = _mm256_unpacklo_ps(v[4], v[5]), t5 = _mm256_unpackhi_ps(v[4], v[5]);
  __m256 t6 = _mm256_unpacklo_ps(v[6], v[7]), t7 = _mm256_unpackhi_ps(v[6], v[7]);
  __m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44), s1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  __m256 s2 = _mm256_shuffle_ps(t1, t3, 0x44), s3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  __m256 s4 = _mm256_shuffle_ps(t4, t6, 0x44), s5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  __m256 s6 = _mm256_shuffle_ps(t5, t7, 0x44), s7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  v[0] = _mm256_permute2f128_ps(s0, s4, 0x20);
  v[1] = _mm256_permute2f128_ps(s1, s5, 0x20);
  v[2] = _mm256_permute2f128_ps(s2, s6, 0x20);
  v[3] = _mm256_permute2f128_ps(s3, s7, 0x20);
  v[4] = _mm256_permute2f128_ps(s0, s4, 0x31);
  v[5] = _mm256_permute2f128_ps(s1, s5, 0x31);
  v[6] = _mm256_permute2f128_ps(s2, s6, 0x31);
  v[7] = _mm256_permute2f128_ps(s3, s7, 0x31);
}

/* The eight planes from xp (consecutive, H*W apart) into buf's interior; off[p] is the
 * float offset of input pixel p in buf (-1: no tap reads it). */
static void dwc8_fill(const float *xp, int64_t HW, const int32_t *off, float *buf) {
  int64_t p = 0;
  for (; p + 8 <= HW; p += 8) {
    __m256 v[8];
    for (int c = 0; c < 8; c++) v[c] = _mm256_loadu_ps(xp + c * HW + p);
    dwc8_transpose(v);
    for (int j = 0; j < 8; j++)
      if (off[p + j] >= 0) _mm256_storeu_ps(buf + off[p + j], v[j]);
  }
  for (; p < HW; p++)
    if (off[p] >= 0)
      for (int c = 0; c < 8; c++) buf[off[p] + c] = xp[c * HW + p];
}

/* Bias and activation on the [P][8] sums in place, act a constant after inlining. */
static inline __attribute__((always_inline)) void dwc8_act(float *obuf, int64_t P, const nnp_epilogue *ep,
                                                           __m256 bias, const int act) {
  nnp_epilogue e = *ep;
  e.act = act; /* folds nnp_act8's switch */
  for (int64_t p = 0; p < P; p++)
    _mm256_storeu_ps(obuf + p * 8, nnp_act8(&e, _mm256_add_ps(_mm256_loadu_ps(obuf + p * 8), bias)));
}

/* The epilogue of all P outputs, after the sums: inside the FMA loop, SiLU's constants
 * and the four accumulators left GCC too few registers for the 3x3 weights. */
static void dwc8_epilogue(float *obuf, int64_t P, const nnp_epilogue *ep, __m256 bias) {
#define DWC8_ACT(A) dwc8_act(obuf, P, ep, bias, A)
  NNP_ACT8_CONST(ep->act, DWC8_ACT)
#undef DWC8_ACT
}

/* The [P][8] results back to the eight output planes (P apart) at yp. */
static void dwc8_drain(const float *obuf, int64_t P, float *yp) {
  int64_t p = 0;
  for (; p + 8 <= P; p += 8) {
    __m256 v[8];
    for (int j = 0; j < 8; j++) v[j] = _mm256_loadu_ps(obuf + (p + j) * 8);
    dwc8_transpose(v);
    for (int c = 0; c < 8; c++) _mm256_storeu_ps(yp + c * P + p, v[c]);
  }
  for (; p < P; p++)
    for (int c = 0; c < 8; c++) yp[c * P + p] = obuf[p * 8 + c];
}

/* N (1..4) outputs of one row from ox: N independent chains of K*K FMAs (one chain
 * alone is latency-bound), their sums to o. K, S, N constant after inlining. */
static inline __attribute__((always_inline)) void dwc8_outputs(const float *buf, const dwc8_geo *g,
                                                               const __m256 *wv, float *o, int64_t oy, int64_t ox,
                                                               const int N, const int K, const int S) {
  __m256 a[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
  const float *base = buf + ((oy * S) * g->PW + ox * S) * 8;
  for (int kh = 0; kh < K; kh++)
    for (int kw = 0; kw < K; kw++) {
      const __m256 w = wv[kh * K + kw];
      const float *q = base + (kh * g->PW + kw) * 8;
      for (int n = 0; n < N; n++) a[n] = _mm256_fmadd_ps(w, _mm256_loadu_ps(q + n * S * 8), a[n]);
    }
  for (int n = 0; n < N; n++) _mm256_storeu_ps(o + n * 8, a[n]);
}

static inline __attribute__((always_inline)) void dwc8_compute(const float *buf, const dwc8_geo *g,
                                                               const nnp_conv2d_desc *d, const __m256 *wv,
                                                               float *obuf, const int K, const int S) {
  for (int64_t oy = 0; oy < d->oh; oy++) {
    float *o = obuf + oy * d->ow * 8;
    int64_t ox = 0;
    for (; ox + 4 <= d->ow; ox += 4) dwc8_outputs(buf, g, wv, o + ox * 8, oy, ox, 4, K, S);
    switch (d->ow - ox) {
      case 3: dwc8_outputs(buf, g, wv, o + ox * 8, oy, ox, 3, K, S); break;
      case 2: dwc8_outputs(buf, g, wv, o + ox * 8, oy, ox, 2, K, S); break;
      case 1: dwc8_outputs(buf, g, wv, o + ox * 8, oy, ox, 1, K, S); break;
      default: break;
    }
  }
}

/* Eight channels c0..c0+7 of one image: planes at x and y; buf's border is zero. */
static void dwc8_group(const nnp_conv2d_desc *d, const dwc8_geo *g, const int32_t *off, const float *x,
                       const float *w, float *y, const nnp_epilogue *ep, int64_t c0, float *buf, float *obuf) {
  const int64_t K = d->kh;
  dwc8_fill(x, d->h * d->w, off, buf);
  __m256 wv[25];
  for (int64_t t = 0; t < K * K; t++) {
    float lane[8];
    for (int c = 0; c < 8; c++) lane[c] = w[(c0 + c) * K * K + t];
    wv[t] = _mm256_loadu_ps(lane);
  }
  const __m256 bias = ep && ep->bias_kind == NNP_BIAS_ROW ? _mm256_loadu_ps(ep->bias + c0) : _mm256_setzero_ps();
  if (K == 3 && d->sw == 1) dwc8_compute(buf, g, d, wv, obuf, 3, 1);
  else if (K == 3) dwc8_compute(buf, g, d, wv, obuf, 3, 2);
  else if (d->sw == 1) dwc8_compute(buf, g, d, wv, obuf, 5, 1);
  else dwc8_compute(buf, g, d, wv, obuf, 5, 2);
  if (ep) dwc8_epilogue(obuf, d->oh * d->ow, ep, bias);
  dwc8_drain(obuf, d->oh * d->ow, y);
}

/* Runs planes [b, e) when the layer takes this path and returns true; groups of eight
 * channels of one image go through dwc8_group, the planes left over (a range that
 * starts or ends inside a group, C not a multiple of 8) through `rest`. */
static bool dw_c8_planes(const nnp_conv2d_desc *d, const float *x, const float *w, float *y, const nnp_epilogue *ep,
                         int64_t b, int64_t e,
                         void (*rest)(const nnp_conv2d_desc *, const float *, const float *, float *,
                                      const nnp_epilogue *, int64_t, int64_t)) {
  dwc8_geo g;
  if (!dwc8_applies(d, ep, &g)) return false;
  const int64_t HW = d->h * d->w, P = d->oh * d->ow;
  int32_t off[HW];
  for (int64_t p = 0; p < HW; p++) {
    const int64_t r = p / d->w + d->ph, c = p % d->w + d->pw;
    off[p] = r < g.PH && c < g.PW ? (int32_t)((r * g.PW + c) * 8) : -1;
  }
  float buf[g.PH * g.PW * 8], obuf[P * 8];
  memset(buf, 0, sizeof buf);
  int64_t plane = b;
  while (plane < e) {
    const int64_t c = plane % d->c;
    if (c % 8 == 0 && c + 8 <= d->c && plane + 8 <= e) {
      dwc8_group(d, &g, off, x + plane * HW, w, y + plane * P, ep, c, buf, obuf);
      plane += 8;
    } else {
      int64_t end = plane + 1; /* to the next group start, the image's end or e */
      while (end < e && (end % d->c) % 8 != 0) end++;
      rest(d, x, w, y, ep, plane, end);
      plane = end;
    }
  }
  return true;
}

#endif
