/* Sliding-window attribute parsing and output-size rules (see spatial.h). */
#include "ops/spatial.h"

#include <string.h>

#include "ops/op_util.h"

nnp_status nnp_spatial_ints(const nnp_node *node, const char *name, int n, int64_t def,
                            int64_t lo, int64_t hi, int64_t *out) {
  const int64_t *v = NULL;
  int cnt = nnp_attr_ints(node, name, &v);
  if (cnt <= 0) {
    for (int i = 0; i < n; i++) out[i] = def;
    return NNP_OK;
  }
  if (cnt != n)
    return nnp_error(NNP_ERR_SHAPE, "attribute '%s' has %d values, expected %d", name, cnt, n);
  for (int i = 0; i < n; i++) {
    if (v[i] < lo || v[i] > hi)
      return nnp_error(NNP_ERR_SHAPE, "attribute '%s'[%d] = %lld is outside [%lld, %lld]", name, i,
                       (long long)v[i], (long long)lo, (long long)hi);
    out[i] = v[i];
  }
  return NNP_OK;
}

nnp_status nnp_read_auto_pad(const nnp_node *node, nnp_auto_pad *mode) {
  const char *s = nnp_attr_string(node, "auto_pad", "NOTSET");
  if (!strcmp(s, "NOTSET") || !s[0]) *mode = NNP_AUTO_PAD_NOTSET;
  else if (!strcmp(s, "SAME_UPPER")) *mode = NNP_AUTO_PAD_SAME_UPPER;
  else if (!strcmp(s, "SAME_LOWER")) *mode = NNP_AUTO_PAD_SAME_LOWER;
  else if (!strcmp(s, "VALID")) *mode = NNP_AUTO_PAD_VALID;
  else return nnp_error(NNP_ERR_UNSUPPORTED, "attribute 'auto_pad' = '%s' is not supported", s);
  return NNP_OK;
}

void nnp_window_init(nnp_window *w, int nsp, const int64_t *in_sizes, const int64_t *kernel) {
  const int off = NNP_WINDOW_AXES - nsp;
  w->nsp = nsp;
  for (int i = 0; i < NNP_WINDOW_AXES; i++) {
    const bool real = i >= off;
    w->in[i] = real ? in_sizes[i - off] : 1;
    w->k[i] = real ? kernel[i - off] : 1;
    w->out[i] = 1;
    w->s[i] = w->d[i] = 1;
    w->pb[i] = w->pe[i] = 0;
  }
}

nnp_status nnp_window_read_strides_dilations_pads(const nnp_node *node, nnp_window *w) {
  const int nsp = w->nsp, off = NNP_WINDOW_AXES - nsp;
  int64_t s[NNP_WINDOW_AXES], d[NNP_WINDOW_AXES], p[2 * NNP_WINDOW_AXES];
  NNP_TRY(nnp_spatial_ints(node, "strides", nsp, 1, 1, NNP_WINDOW_ATTR_MAX, s));
  NNP_TRY(nnp_spatial_ints(node, "dilations", nsp, 1, 1, NNP_WINDOW_ATTR_MAX, d));
  NNP_TRY(nnp_spatial_ints(node, "pads", 2 * nsp, 0, 0, NNP_WINDOW_ATTR_MAX, p));
  for (int i = 0; i < nsp; i++) {
    w->s[off + i] = s[i];
    w->d[off + i] = d[i];
    w->pb[off + i] = p[i];
    w->pe[off + i] = p[i + nsp];
  }
  return NNP_OK;
}

nnp_status nnp_window_out_size(nnp_window *w, int axis, int64_t extent, nnp_auto_pad mode,
                               bool ceil_mode) {
  const int64_t in = w->in[axis], s = w->s[axis];
  const int sp = axis - (NNP_WINDOW_AXES - w->nsp); /* the op's own axis number, for messages */
  if (mode == NNP_AUTO_PAD_SAME_UPPER || mode == NNP_AUTO_PAD_SAME_LOWER) {
    int64_t out = in == 0 ? 0 : (in - 1) / s + 1; /* ceil(in / s) */
    int64_t total = 0, t;
    if (out > 0) {
      if (nnp_mul_overflows(out - 1, s, &t) || nnp_add_overflows(t, extent, &t))
        return nnp_error(NNP_ERR_LIMIT, "padding along spatial axis %d overflows", sp);
      total = t - in > 0 ? t - in : 0;
    }
    w->pb[axis] = mode == NNP_AUTO_PAD_SAME_UPPER ? total / 2 : total - total / 2;
    w->pe[axis] = total - w->pb[axis];
    w->out[axis] = out;
    return NNP_OK;
  }
  if (mode == NNP_AUTO_PAD_VALID) w->pb[axis] = w->pe[axis] = 0;
  int64_t span;
  if (nnp_add_overflows(in, w->pb[axis], &span) || nnp_add_overflows(span, w->pe[axis], &span))
    return nnp_error(NNP_ERR_LIMIT, "padded size along spatial axis %d overflows", sp);
  if (span < extent)
    return nnp_error(NNP_ERR_SHAPE,
                     "spatial axis %d: padded input size %lld is smaller than the kernel extent %lld",
                     sp, (long long)span, (long long)extent);
  const int64_t q = span - extent;
  int64_t out = q / s + 1;
  if (ceil_mode && mode != NNP_AUTO_PAD_VALID && q % s != 0) {
    out++;
    /* The last window must start inside the input or the beginning padding:
     * (out-1)*s < in + pb, written without the product. */
    if (out - 1 > (in + w->pb[axis] - 1) / s) out--;
  }
  w->out[axis] = out;
  return NNP_OK;
}

/* floor(a / b) for b > 0 and any a (C division truncates toward zero). */
static int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

void nnp_in_bounds_range(int64_t start, int64_t step, int64_t count, int64_t limit,
                         int64_t *lo, int64_t *hi) {
  int64_t l = start >= 0 ? 0 : (-start + step - 1) / step; /* first j with start + j*step >= 0 */
  int64_t h = floor_div(limit - 1 - start, step) + 1;     /* one past the last below limit */
  if (h > count) h = count;
  if (h < 0) h = 0;
  if (l > h) l = h;
  *lo = l;
  *hi = h;
}
