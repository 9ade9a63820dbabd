#include "nnperf/cost.h"

#include <string.h>

static int64_t prod(const int64_t *d, int n) {
  int64_t p = 1;
  for (int i = 0; i < n; i++) p *= d[i];
  return p;
}

nnp_cost nnp_node_cost(const nnp_node *n, const nnp_tensor *const *in, const nnp_tensor *const *out) {
  nnp_cost c = {0, 0, 0};
  for (int i = 0; i < n->n_inputs; i++)
    if (in[i]) c.bytes += (int64_t)nnp_tensor_nbytes(in[i]);
  for (int i = 0; i < n->n_outputs; i++)
    if (out[i]) c.bytes += (int64_t)nnp_tensor_nbytes(out[i]);
  const nnp_tensor *x = n->n_inputs > 0 ? in[0] : NULL;
  const nnp_tensor *w = n->n_inputs > 1 ? in[1] : NULL;
  const nnp_tensor *y = n->n_outputs > 0 ? out[0] : NULL;
  if (!y) return c;
  int64_t out_elems = nnp_tensor_numel(y);
  const char *op = n->op_type;
  if ((!strcmp(op, "Conv") || !strcmp(op, "FusedConv")) && w && w->rank >= 2) {
    c.macs = out_elems * prod(w->dims + 1, w->rank - 1); /* (C_in/group) x kernel */
  } else if (!strcmp(op, "BlockedConv") && w && w->rank >= 2 && y->rank == 5) {
    /* Y is N x M/16 x H x W x 16: count the real output channels (W's M), not the padding */
    c.macs = y->dims[0] * w->dims[0] * y->dims[2] * y->dims[3] * prod(w->dims + 1, w->rank - 1);
  } else if (!strcmp(op, "QLinearConv") && n->n_inputs > 3 && in[3] && in[3]->rank >= 2) {
    c.macs = out_elems * prod(in[3]->dims + 1, in[3]->rank - 1); /* integer MACs; the weight is input 3 */
  } else if (!strcmp(op, "QGemm") && x && x->rank == 2) {
    c.macs = out_elems * x->dims[1];
  } else if (!strcmp(op, "ConvTranspose") && x && w && w->rank >= 2) {
    c.macs = nnp_tensor_numel(x) * prod(w->dims + 1, w->rank - 1);
  } else if ((!strcmp(op, "Gemm") || !strcmp(op, "FusedGemm")) && x && x->rank == 2) {
    int64_t k = nnp_attr_int(n, "transA", 0) ? x->dims[0] : x->dims[1];
    c.macs = out_elems * k;
  } else if ((!strcmp(op, "MatMul") || !strcmp(op, "FusedMatMul")) && x && x->rank >= 1) {
    c.macs = out_elems * x->dims[x->rank - 1];
  } else if ((!strcmp(op, "MaxPool") || !strcmp(op, "AveragePool") || !strcmp(op, "BlockedMaxPool") ||
              !strcmp(op, "BlockedAveragePool"))) {
    const int64_t *k;
    int nk = nnp_attr_ints(n, "kernel_shape", &k);
    if (!strncmp(op, "Blocked", 7) && y->rank == 5) /* real channels, as BlockedConv */
      out_elems = y->dims[0] * nnp_attr_int(n, "channels", y->dims[1] * y->dims[4]) * y->dims[2] * y->dims[3];
    c.flops = out_elems * (nk > 0 ? prod(k, nk) : 1);
    return c;
  } else if (!strcmp(op, "BlockedGlobalAveragePool")) { /* real channels: Y's */
    c.flops = x && x->rank == 5 ? out_elems * x->dims[2] * x->dims[3] : out_elems;
    return c;
  } else if (!strcmp(op, "GlobalAveragePool") || !strcmp(op, "GlobalMaxPool") || !strncmp(op, "Reduce", 6)) {
    c.flops = x ? nnp_tensor_numel(x) : out_elems;
    return c;
  } else if (!strcmp(op, "Reshape") || !strcmp(op, "Flatten") || !strcmp(op, "Squeeze") ||
             !strcmp(op, "Unsqueeze") || !strcmp(op, "Identity") || !strcmp(op, "Dropout") ||
             !strcmp(op, "Shape") || !strcmp(op, "Constant") || !strcmp(op, "ToBlocked") ||
             !strcmp(op, "FromBlocked")) {
    return c; /* data movement only */
  } else {
    c.flops = out_elems;
    return c;
  }
  c.flops = 2 * c.macs;
  return c;
}
