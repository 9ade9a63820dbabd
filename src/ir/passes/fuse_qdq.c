/* QDQ fusion: the DequantizeLinear -> Conv [-> Relu] -> QuantizeLinear pattern of a QDQ
 * model (nnperf's own export, ORT's quantizer) becomes one QLinearConv, so the layer runs
 * on the INT8 kernels (ops/fast_qconv.c) and the float tensor between the DQ and the Q
 * never exists. Matched when:
 *   X  = DequantizeLinear(xq, xs, xzp)        xs, xzp scalar initializers, xzp uint8
 *   W  = DequantizeLinear(wq, ws, wzp)        wq int8 initializer, per-tensor or axis 0
 *   B  = DequantizeLinear(bq, bs[, 0])        optional; int32, bs == xs * ws (rel 1e-5)
 *   Y  = Conv(X, W[, B])                      its only reader is the Q (or the Relu)
 *   [Y = Relu(Y) | Clip(Y, lo, hi)]           constant bounds; Q(act(y)) equals Q(y)
 *                                             clamped to [Q(lo), Q(hi)] since Q is
 *                                             monotone: the QLinearConv gets nnperf's
 *                                             attribute nnperf_clamp [Q(lo), Q(hi)]
 *                                             (not needed for Relu with zero point 0)
 *   yq = QuantizeLinear(Y, ys, yzp)           ys, yzp scalar initializers, yzp uint8
 * The Conv node is rewritten in place (its attributes are QLinearConv's), the Relu and the
 * Q are removed, and DQ nodes left without readers go with the dead-nodes pass. Runs
 * before constant folding, which would otherwise turn the weight DQs into float weights. */
#include <math.h>
#include <string.h>

#include "ir/passes/pass_util.h"
#include "ir/passes/qdq_match.h"
#include "nnperf/alloc.h"
#include "ops/op.h"

/* The 9 QLinearConv inputs for Conv node c, or false. q: the Q node. */
static bool match(const nnp_graph *g, const nnp_node *c, int q, int inputs[9]) {
  const nnp_node *dx = qdq_dq_of(g, qdq_in(c, 0)), *dw = qdq_dq_of(g, qdq_in(c, 1));
  if (!dx || !dw) return false;
  if (!qdq_scalar_init(g, qdq_in(dx, 1), NNP_F32) || !qdq_scalar_init(g, qdq_in(dx, 2), NNP_U8)) return false;
  const nnp_tensor *wq = qdq_init(g, qdq_in(dw, 0)), *ws = qdq_init(g, qdq_in(dw, 1)), *wz = qdq_init(g, qdq_in(dw, 2));
  if (!wq || !wq->data || wq->dtype != NNP_I8 || wq->rank != 4 || !ws || !ws->data || ws->dtype != NNP_F32) return false;
  int64_t M = wq->dims[0], nws = nnp_tensor_numel(ws);
  if (nws != 1 && (nnp_attr_int(dw, "axis", 1) != 0 || nws != M)) return false;
  if (!wz || !wz->data || wz->dtype != NNP_I8 || nnp_tensor_numel(wz) != nws) return false;
  int bq = -1;
  if (qdq_in(c, 2) >= 0) {
    const nnp_node *db = qdq_dq_of(g, qdq_in(c, 2));
    float xs = *(const float *)qdq_init(g, qdq_in(dx, 1))->data;
    if (!db || !qdq_bias_matches(g, db, xs, ws, M)) return false;
    bq = qdq_in(db, 0);
  }
  const nnp_node *qn = &g->nodes[q];
  int v[9] = {qdq_in(dx, 0), qdq_in(dx, 1), qdq_in(dx, 2), qdq_in(dw, 0), qdq_in(dw, 1), qdq_in(dw, 2),
              qdq_in(qn, 1), qdq_in(qn, 2), bq};
  memcpy(inputs, v, sizeof v);
  return true;
}

static nnp_status rewrite(nnp_node *c, const int inputs[9], int out) {
  int n_in = inputs[8] >= 0 ? 9 : 8;
  int *in = nnp_malloc(sizeof(int) * 9);
  char *t = nnp_strdup("QLinearConv"), *d = nnp_strdup("");
  if (!in || !t || !d) {
    nnp_free(in);
    nnp_free(t);
    nnp_free(d);
    return nnp_error(NNP_ERR_NOMEM, "out of memory fusing QDQ into QLinearConv");
  }
  memcpy(in, inputs, sizeof(int) * 9);
  nnp_free(c->inputs);
  nnp_free(c->op_type);
  nnp_free(c->domain);
  c->inputs = in;
  c->n_inputs = n_in;
  c->op_type = t;
  c->domain = d;
  c->op = NNP_OP_QLINEAR_CONV;
  c->outputs[0] = out;
  return NNP_OK;
}

nnp_status nnp_pass_fuse_qdq(nnp_graph *g, int *count) {
  *count = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    nnp_node *c = &g->nodes[i];
    if (c->op != NNP_OP_CONV || (c->domain && c->domain[0]) || c->n_outputs != 1 || c->outputs[0] < 0) continue;
    int r, q;
    float flo, fhi; /* the activation's bounds (Relu: [0, inf)) */
    bool clip;
    if (!qdq_act_then_q(g, c->outputs[0], &r, &q, &flo, &fhi, &clip)) continue;
    int inputs[9];
    if (!match(g, c, q, inputs)) continue;
    const nnp_node *qn = &g->nodes[q];
    /* Relu / Clip then Q == Q then clamp to [Q(lo), Q(hi)] (Q is monotone); a Relu with
     * zero point 0 is the uint8 clamp itself */
    uint8_t yzp = *(const uint8_t *)qdq_init(g, inputs[7])->data;
    bool need_clamp = r >= 0 && (clip || yzp != 0);
    float ys = *(const float *)qdq_init(g, inputs[6])->data;
    int64_t qlo = qdq_quantize_bound(flo, ys, yzp), qhi = qdq_quantize_bound(fhi, ys, yzp);
    NNP_TRY(rewrite(c, inputs, qn->outputs[0]));
    if (need_clamp) NNP_TRY(qdq_set_clamp(c, qlo, qhi));
    qdq_remove_tail(g, r, q, &i);
    ++*count;
  }
  return NNP_OK;
}
