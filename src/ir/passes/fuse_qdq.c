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
#include "nnperf/alloc.h"
#include "ops/op.h"

static const nnp_tensor *init_of(const nnp_graph *g, int v) {
  return v >= 0 && v < g->n_values && g->values[v].kind == NNP_VALUE_INITIALIZER ? g->values[v].init : NULL;
}

static bool scalar_init(const nnp_graph *g, int v, nnp_dtype dt) {
  const nnp_tensor *t = init_of(g, v);
  return t && t->data && t->dtype == dt && nnp_tensor_numel(t) == 1;
}

/* The DequantizeLinear node producing v (default domain), or NULL. */
static const nnp_node *dq_of(const nnp_graph *g, int v) {
  if (v < 0) return NULL;
  const nnp_node *n = NULL; /* scanned: value.producer is not kept up to date by passes */
  for (int i = 0; i < g->n_nodes && !n; i++)
    for (int k = 0; k < g->nodes[i].n_outputs; k++)
      if (g->nodes[i].outputs[k] == v) n = &g->nodes[i];
  if (!n) return NULL;
  if (n->op != NNP_OP_DEQUANTIZE_LINEAR || (n->domain && n->domain[0]) || n->n_inputs < 2) return NULL;
  return n;
}

/* QuantizeLinear of one bound to uint8, as the reference computes it (+-inf saturate). */
static int64_t quantize_bound(float v, float scale, uint8_t zp) {
  float r = rintf(rintf(v / scale) + (float)zp);
  if (!(r >= 0.0f)) r = 0.0f;
  if (r > 255.0f) r = 255.0f;
  return (int64_t)r;
}

static int in_at(const nnp_node *n, int k) { return k < n->n_inputs ? n->inputs[k] : -1; }

/* The 9 QLinearConv inputs for Conv node c, or false. q: the Q node; relu: -1 or node. */
static bool match(const nnp_graph *g, const nnp_node *c, int q, int inputs[9]) {
  const nnp_node *dx = dq_of(g, in_at(c, 0)), *dw = dq_of(g, in_at(c, 1));
  if (!dx || !dw) return false;
  if (!scalar_init(g, in_at(dx, 1), NNP_F32) || !scalar_init(g, in_at(dx, 2), NNP_U8)) return false;
  const nnp_tensor *wq = init_of(g, in_at(dw, 0)), *ws = init_of(g, in_at(dw, 1)), *wz = init_of(g, in_at(dw, 2));
  if (!wq || !wq->data || wq->dtype != NNP_I8 || wq->rank != 4 || !ws || !ws->data || ws->dtype != NNP_F32) return false;
  int64_t M = wq->dims[0], nws = nnp_tensor_numel(ws);
  if (nws != 1 && (nnp_attr_int(dw, "axis", 1) != 0 || nws != M)) return false;
  if (!wz || !wz->data || wz->dtype != NNP_I8 || nnp_tensor_numel(wz) != nws) return false;
  int bq = -1;
  if (in_at(c, 2) >= 0) {
    const nnp_node *db = dq_of(g, in_at(c, 2));
    if (!db) return false;
    const nnp_tensor *b = init_of(g, in_at(db, 0)), *bs = init_of(g, in_at(db, 1)), *bz = init_of(g, in_at(db, 2));
    if (!b || !b->data || b->dtype != NNP_I32 || nnp_tensor_numel(b) != M) return false;
    if (!bs || !bs->data || bs->dtype != NNP_F32 || (nnp_tensor_numel(bs) != 1 && nnp_tensor_numel(bs) != M)) return false;
    if (bz && (!bz->data || bz->dtype != NNP_I32)) return false;
    float xs = *(const float *)init_of(g, in_at(dx, 1))->data;
    for (int64_t m = 0; m < M; m++) {
      float want = xs * ((const float *)ws->data)[nws == 1 ? 0 : m];
      float got = ((const float *)bs->data)[nnp_tensor_numel(bs) == 1 ? 0 : m];
      if (bz && ((const int32_t *)bz->data)[nnp_tensor_numel(bz) == 1 ? 0 : m] != 0) return false;
      if (!(fabsf(got - want) <= 1e-5f * fabsf(want))) return false;
    }
    bq = in_at(db, 0);
  }
  const nnp_node *qn = &g->nodes[q];
  if (!scalar_init(g, in_at(qn, 1), NNP_F32) || !scalar_init(g, in_at(qn, 2), NNP_U8)) return false;
  int v[9] = {in_at(dx, 0), in_at(dx, 1), in_at(dx, 2), in_at(dw, 0), in_at(dw, 1), in_at(dw, 2),
              in_at(qn, 1), in_at(qn, 2), bq};
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
    int r = -1, q = pass_single_consumer(g, c->outputs[0]);
    if (q < 0 || g->nodes[q].n_outputs != 1 || g->nodes[q].inputs[0] != c->outputs[0]) continue;
    float flo = 0, fhi = INFINITY; /* the activation's bounds (Relu: [0, inf)) */
    bool clip = g->nodes[q].op == NNP_OP_CLIP && (!g->nodes[q].domain || !g->nodes[q].domain[0]) &&
                g->nodes[q].n_outputs == 1 && pass_clip_bounds(g, &g->nodes[q], &flo, &fhi);
    if (g->nodes[q].op == NNP_OP_RELU || clip) {
      r = q;
      q = pass_single_consumer(g, g->nodes[r].outputs[0]);
      if (q < 0 || g->nodes[q].inputs[0] != g->nodes[r].outputs[0]) continue;
    }
    const nnp_node *qn = &g->nodes[q];
    if (qn->op != NNP_OP_QUANTIZE_LINEAR || (qn->domain && qn->domain[0]) || qn->n_outputs != 1) continue;
    int inputs[9];
    if (!match(g, c, q, inputs)) continue;
    /* Relu / Clip then Q == Q then clamp to [Q(lo), Q(hi)] (Q is monotone); a Relu with
     * zero point 0 is the uint8 clamp itself */
    uint8_t yzp = *(const uint8_t *)init_of(g, inputs[7])->data;
    bool need_clamp = r >= 0 && (clip || yzp != 0);
    float ys = *(const float *)init_of(g, inputs[6])->data;
    int64_t qlo = quantize_bound(flo, ys, yzp), qhi = quantize_bound(fhi, ys, yzp);
    NNP_TRY(rewrite(c, inputs, qn->outputs[0]));
    if (need_clamp) {
      nnp_attr *a;
      NNP_TRY(nnp_node_add_attr(c, "nnperf_clamp", &a));
      a->type = NNP_ATTR_INTS;
      a->ints = nnp_malloc(2 * sizeof(int64_t));
      if (!a->ints) return nnp_error(NNP_ERR_NOMEM, "out of memory fusing QDQ into QLinearConv");
      a->count = 2;
      a->ints[0] = qlo;
      a->ints[1] = qhi;
    }
    /* remove the Q and the Relu, highest index first so the other stays valid */
    int hi = q > r ? q : r, lo = q > r ? r : q;
    pass_remove_node(g, hi);
    if (lo >= 0) pass_remove_node(g, lo);
    i -= (hi < i) + (lo >= 0 && lo < i);
    ++*count;
  }
  return NNP_OK;
}
