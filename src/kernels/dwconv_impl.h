/* Body of the depthwise kernel, included by dwconv.c and dwconv_avx2.c with
 * DWCONV_FN set to the function name. */
void DWCONV_FN(const nnp_conv2d_desc *d, const float *x, const float *w, float *y, const nnp_epilogue *ep,
               int64_t b, int64_t e) {
  const int64_t H = d->h, W = d->w, OH = d->oh, OW = d->ow, KH = d->kh, KW = d->kw;
  const int64_t sh = d->sh, sw = d->sw, ph = d->ph, pw = d->pw, dh = d->dh, dw = d->dw;
  const int64_t P = OH * OW;
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
    for (int64_t oh = 0; oh < OH; oh++) {
      float *yr = yp + oh * OW;
      float row[OW]; /* one output row in L1 while the taps accumulate into it */
      for (int64_t ow = 0; ow < OW; ow++) row[ow] = 0.0f;
      for (int64_t kh = 0; kh < KH; kh++) {
        const int64_t ih = oh * sh - ph + kh * dh;
        if (ih < 0 || ih >= H) continue;
        const float *xr = xp + ih * W;
        for (int64_t kw = 0; kw < KW; kw++) {
          const float wv = wc[kh * KW + kw];
          const int64_t off = kw * dw - pw;
          /* ow with 0 <= ow*sw + off < W */
          int64_t lo = off >= 0 ? 0 : (-off + sw - 1) / sw;
          int64_t hi = W - off <= 0 ? 0 : (W - off + sw - 1) / sw;
          if (hi > OW) hi = OW;
          if (sw == 1)
            for (int64_t ow = lo; ow < hi; ow++) row[ow] += wv * xr[ow + off];
          else if (sw == 2)
            for (int64_t ow = lo; ow < hi; ow++) row[ow] += wv * xr[2 * ow + off];
          else
            for (int64_t ow = lo; ow < hi; ow++) row[ow] += wv * xr[ow * sw + off];
        }
      }
      if (!ep)
        for (int64_t ow = 0; ow < OW; ow++) yr[ow] = row[ow];
      else if (!loc.residual && loc.act != NNP_ACT_SIGMOID && loc.act != NNP_ACT_SILU) {
        const float bias = loc.bias_kind == NNP_BIAS_ROW ? loc.bias[0] : 0.0f;
        for (int64_t ow = 0; ow < OW; ow++) {
          float v = row[ow] + bias;
          if (loc.act == NNP_ACT_RELU) v = v > 0.0f ? v : 0.0f;
          else if (loc.act == NNP_ACT_CLIP) v = v < loc.act_min ? loc.act_min : (v > loc.act_max ? loc.act_max : v);
          else if (loc.act == NNP_ACT_HARDSWISH) {
            float t = v + 3.0f;
            t = t < 0.0f ? 0.0f : (t > 6.0f ? 6.0f : t);
            v = v * t * (1.0f / 6.0f);
          }
          yr[ow] = v;
        }
      } else
        for (int64_t ow = 0; ow < OW; ow++) yr[ow] = nnp_epilogue_apply(&loc, 0, oh * OW + ow, row[ow]);
    }
  }
}
