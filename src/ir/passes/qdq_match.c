/* Pattern pieces of the fuse-qdq rewrites (qdq_match.h). */
#include "ir/passes/qdq_match.h"

#include <math.h>

#include "ir/passes/pass_util.h"
#include "nnperf/alloc.h"
#include "ops/op.h"

const nnp_tensor *qdq_init(const nnp_graph *g, int v) {
  return v >= 0 && v < g->n_values && g->values[v].kind == NNP_VALUE_INITIALIZER ? g->values[v].init : NULL;
}

bool qdq_scalar_init(const nnp_graph *g, int v, nnp_dtype dt) {
  const nnp_tensor *t = qdq_init(g, v);
  return t && t->data && t->dtype == dt && nnp_tensor_numel(t) == 1;
}

int qdq_producer(const nnp_graph *g, int v) {
  if (v < 0) return -1;
  for (int i = 0; i < g->n_nodes; i++)
    for (int k = 0; k < g->nodes[i].n_outputs; k++)
      if (g->nodes[i].outputs[k] == v) return i;
  return -1;
}

const nnp_node *qdq_dq_of(const nnp_graph *g, int v) {
  int i = qdq_producer(g, v);
  if (i < 0) return NULL;
  const nnp_node *n = &g->nodes[i];
  if (n->op != NNP_OP_DEQUANTIZE_LINEAR || (n->domain && n->domain[0]) || n->n_inputs < 2) return NULL;
  return n;
}

int64_t qdq_quantize_bound(float v, float scale, uint8_t zp) {
  float r = rintf(rintf(v / scale) + (float)zp);
  if (!(r >= 0.0f)) r = 0.0f;
  if (r > 255.0f) r = 255.0f;
  return (int64_t)r;
}

bool qdq_bias_matches(const nnp_graph *g, const nnp_node *db, float x_scale, const nnp_tensor *ws, int64_t M) {
  const nnp_tensor *b = qdq_init(g, qdq_in(db, 0)), *bs = qdq_init(g, qdq_in(db, 1)), *bz = qdq_init(g, qdq_in(db, 2));
  if (!b || !b->data || b->dtype != NNP_I32 || nnp_tensor_numel(b) != M) return false;
  if (!bs || !bs->data || bs->dtype != NNP_F32 || (nnp_tensor_numel(bs) != 1 && nnp_tensor_numel(bs) != M)) return false;
  if (bz && (!bz->data || bz->dtype != NNP_I32)) return false;
  int64_t nws = nnp_tensor_numel(ws);
  for (int64_t m = 0; m < M; m++) {
    float want = x_scale * ((const float *)ws->data)[nws == 1 ? 0 : m];
    float got = ((const float *)bs->data)[nnp_tensor_numel(bs) == 1 ? 0 : m];
    if (bz && ((const int32_t *)bz->data)[nnp_tensor_numel(bz) == 1 ? 0 : m] != 0) return false;
    if (!(fabsf(got - want) <= 1e-5f * fabsf(want))) return false;
  }
  return true;
}

static bool default_domain(const nnp_node *n) { return !n->domain || !n->domain[0]; }

bool qdq_act_then_q(const nnp_graph *g, int v, int *act, int *q, float *lo, float *hi, bool *clip) {
  *act = -1;
  *lo = 0;
  *hi = INFINITY;
  *clip = false;
  int c = pass_single_consumer(g, v);
  if (c < 0 || g->nodes[c].n_outputs != 1 || g->nodes[c].n_inputs < 1 || g->nodes[c].inputs[0] != v) return false;
  const nnp_node *n = &g->nodes[c];
  *clip = n->op == NNP_OP_CLIP && default_domain(n) && pass_clip_bounds(g, n, lo, hi);
  if ((n->op == NNP_OP_RELU && default_domain(n)) || *clip) {
    *act = c;
    c = pass_single_consumer(g, n->outputs[0]);
    if (c < 0 || g->nodes[c].n_inputs < 1 || g->nodes[c].inputs[0] != n->outputs[0]) return false;
  }
  const nnp_node *qn = &g->nodes[c];
  if (qn->op != NNP_OP_QUANTIZE_LINEAR || !default_domain(qn) || qn->n_outputs != 1) return false;
  if (!qdq_scalar_init(g, qdq_in(qn, 1), NNP_F32) || !qdq_scalar_init(g, qdq_in(qn, 2), NNP_U8)) return false;
  *q = c;
  return true;
}

void qdq_remove_tail(nnp_graph *g, int act, int q, int *i) {
  int hi = q > act ? q : act, lo = q > act ? act : q; /* highest first: the other stays valid */
  pass_remove_node(g, hi);
  if (lo >= 0) pass_remove_node(g, lo);
  *i -= (hi < *i) + (lo >= 0 && lo < *i);
}

nnp_status qdq_set_clamp(nnp_node *n, int64_t lo, int64_t hi) {
  nnp_attr *a;
  NNP_TRY(nnp_node_add_attr(n, "nnperf_clamp", &a));
  a->type = NNP_ATTR_INTS;
  a->ints = nnp_malloc(2 * sizeof(int64_t));
  if (!a->ints) return nnp_error(NNP_ERR_NOMEM, "out of memory fusing a quantized layer");
  a->count = 2;
  a->ints[0] = lo;
  a->ints[1] = hi;
  return NNP_OK;
}
