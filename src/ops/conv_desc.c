#include "ops/conv_desc.h"

#include "ops/spatial.h"

/* Beginning pad of one axis under auto_pad SAME_* (ONNX: SAME_UPPER puts the odd one at
 * the end). */
static int64_t same_pad_begin(nnp_auto_pad mode, int64_t in, int64_t out, int64_t s, int64_t k, int64_t d) {
  int64_t total = (out - 1) * s + (k - 1) * d + 1 - in;
  if (total < 0) total = 0;
  return mode == NNP_AUTO_PAD_SAME_UPPER ? total / 2 : total - total / 2;
}

nnp_status nnp_conv2d_read_window(const nnp_node *node, nnp_conv2d_desc *d, bool *ok) {
  *ok = false;
  const int64_t *v = NULL;
  int nv = nnp_attr_ints(node, "strides", &v);
  if (nv > 0 && nv != 2) return NNP_OK;
  d->sh = nv == 2 ? v[0] : 1;
  d->sw = nv == 2 ? v[1] : 1;
  nv = nnp_attr_ints(node, "dilations", &v);
  if (nv > 0 && nv != 2) return NNP_OK;
  d->dh = nv == 2 ? v[0] : 1;
  d->dw = nv == 2 ? v[1] : 1;
  d->ph = d->pw = 0;
  nnp_auto_pad mode;
  NNP_TRY(nnp_read_auto_pad(node, &mode));
  if (mode == NNP_AUTO_PAD_SAME_UPPER || mode == NNP_AUTO_PAD_SAME_LOWER) {
    d->ph = same_pad_begin(mode, d->h, d->oh, d->sh, d->kh, d->dh);
    d->pw = same_pad_begin(mode, d->w, d->ow, d->sw, d->kw, d->dw);
  } else if (mode == NNP_AUTO_PAD_NOTSET) {
    nv = nnp_attr_ints(node, "pads", &v);
    if (nv == 4) {
      d->ph = v[0];
      d->pw = v[1];
    } else if (nv > 0) return NNP_OK;
  }
  *ok = d->ph >= 0 && d->pw >= 0 && d->sh >= 1 && d->sw >= 1 && d->dh >= 1 && d->dw >= 1;
  return NNP_OK;
}
