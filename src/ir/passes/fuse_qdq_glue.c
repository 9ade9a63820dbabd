/* The glue between INT8 layers of a QDQ graph, fused so that tensors stay uint8 from one
 * QLinearConv to the next (part of the fuse-qdq pass, run before its Conv fusion):
 *
 *  1. MaxPool -> QuantizeLinear  becomes  QuantizeLinear -> MaxPool on uint8.
 *     Quantization (x / s, round half even, + zp, clamp) is monotone non-decreasing, so
 *     max(Q(x_i)) == Q(max(x_i)) for every window: the same bits, a quarter of the bytes,
 *     and the Conv [-> Relu] before the MaxPool now ends in a QuantizeLinear, so it fuses
 *     into a QLinearConv too. Padding never wins in either type. Matched when the MaxPool
 *     has no Indices output and its only reader is a QuantizeLinear with scalar float32
 *     scale and uint8 zero point initializers.
 *
 *  2. DequantizeLinear(a), DequantizeLinear(b) -> Add [-> Relu | Clip] -> QuantizeLinear
 *     becomes QLinearAdd(a, ..., b, ..., y_scale, y_zp) [activation Relu] on uint8
 *     (ops/qlinear_add.c): the residual add of ResNet-style blocks. The kernel does the
 *     float32 operations of the unfused nodes, so no output changes. Matched when both
 *     DQs are uint8 with scalar initializer parameters, a and b have one (compiled) shape,
 *     the Add's only reader is the Relu/Clip (constant bounds) or the Q, and that one's
 *     only reader is the Q.
 *
 * DequantizeLinear nodes left without readers go with the dead-nodes pass. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ir/passes/pass_util.h"
#include "ir/passes/qdq_match.h"
#include "nnperf/alloc.h"
#include "ops/internal_ops.h"
#include "ops/op.h"

static bool default_domain(const nnp_node *n) { return !n->domain || !n->domain[0]; }

/* A per-tensor uint8 Q or DQ node: inputs (x, scale f32 scalar, zp u8 scalar). */
static bool per_tensor_u8(const nnp_graph *g, const nnp_node *n, int op) {
  return n->op == op && default_domain(n) && n->n_inputs == 3 && n->n_outputs == 1 && n->outputs[0] >= 0 &&
         qdq_scalar_init(g, n->inputs[1], NNP_F32) && qdq_scalar_init(g, n->inputs[2], NNP_U8);
}

/* 1. MaxPool -> Q  =>  Q -> MaxPool(uint8). */
static nnp_status swap_maxpool(nnp_graph *g, int m, bool *done) {
  *done = false;
  nnp_node *mp = &g->nodes[m];
  if (mp->op != NNP_OP_MAX_POOL || !default_domain(mp) || mp->n_inputs != 1 || mp->outputs[0] < 0) return NNP_OK;
  if (mp->n_outputs > 1 && mp->outputs[1] >= 0) return NNP_OK; /* Indices */
  int q = pass_single_consumer(g, mp->outputs[0]);
  if (q < m || !per_tensor_u8(g, &g->nodes[q], NNP_OP_QUANTIZE_LINEAR) || g->nodes[q].inputs[0] != mp->outputs[0])
    return NNP_OK; /* q < m: not in topological order (or -1, no single reader) */
  const char *xname = g->values[mp->inputs[0]].name;
  char name[256];
  for (int k = 0;; k++) { /* a fresh value: the uint8 input of the MaxPool */
    snprintf(name, sizeof name, "%.200s/nnperf_u8_%d", xname ? xname : "x", k); /* never truncates k */
    if (nnp_graph_find_value(g, name) < 0) break;
  }
  int xq;
  NNP_TRY(nnp_graph_value(g, name, &xq));
  nnp_node *qn = &g->nodes[q];
  mp = &g->nodes[m];
  int x = mp->inputs[0], yq = qn->outputs[0];
  qn->inputs[0] = x;
  qn->outputs[0] = xq;
  mp->inputs[0] = xq;
  mp->outputs[0] = yq;
  /* keep the node list in topological order (dead-nodes walks it backwards): the Q takes
   * the MaxPool's place and the MaxPool the Q's; nothing between them read either */
  nnp_node t = g->nodes[m];
  g->nodes[m] = g->nodes[q];
  g->nodes[q] = t;
  *done = true;
  return NNP_OK;
}

/* 2. DQ, DQ -> Add [-> Relu] -> Q  =>  QLinearAdd. */
static nnp_status fuse_add(nnp_graph *g, const nnp_graph_shapes *shapes, int a, bool *done) {
  *done = false;
  nnp_node *add = &g->nodes[a];
  if (add->op != NNP_OP_ADD || !default_domain(add) || add->n_inputs != 2 || add->n_outputs != 1 ||
      add->outputs[0] < 0)
    return NNP_OK;
  int da = qdq_producer(g, add->inputs[0]), db = qdq_producer(g, add->inputs[1]);
  if (da < 0 || db < 0 || !per_tensor_u8(g, &g->nodes[da], NNP_OP_DEQUANTIZE_LINEAR) ||
      !per_tensor_u8(g, &g->nodes[db], NNP_OP_DEQUANTIZE_LINEAR))
    return NNP_OK;
  const nnp_tensor *sa = pass_shape(shapes, add->inputs[0]), *sb = pass_shape(shapes, add->inputs[1]);
  if (!sa || !sb || !nnp_tensor_same_shape(sa, sb)) return NNP_OK;
  int r = -1, q = pass_single_consumer(g, add->outputs[0]);
  if (q < 0 || g->nodes[q].inputs[0] != add->outputs[0]) return NNP_OK;
  float lo = 0, hi = INFINITY;
  bool clip = g->nodes[q].op == NNP_OP_CLIP && default_domain(&g->nodes[q]) && g->nodes[q].n_outputs == 1 &&
              pass_clip_bounds(g, &g->nodes[q], &lo, &hi);
  if ((g->nodes[q].op == NNP_OP_RELU && default_domain(&g->nodes[q]) && g->nodes[q].n_outputs == 1) || clip) {
    r = q;
    q = pass_single_consumer(g, g->nodes[r].outputs[0]);
    if (q < 0 || g->nodes[q].inputs[0] != g->nodes[r].outputs[0]) return NNP_OK;
  }
  if (!per_tensor_u8(g, &g->nodes[q], NNP_OP_QUANTIZE_LINEAR)) return NNP_OK;
  if (q < a || (r >= 0 && r < a)) return NNP_OK; /* the caller's index must stay valid */
  const nnp_node *na = &g->nodes[da], *nb = &g->nodes[db], *nq = &g->nodes[q];
  const int v[8] = {na->inputs[0], na->inputs[1], na->inputs[2], nb->inputs[0],
                    nb->inputs[1], nb->inputs[2], nq->inputs[1], nq->inputs[2]};
  int *in = nnp_malloc(sizeof v);
  if (!in) return nnp_error(NNP_ERR_NOMEM, "out of memory fusing a quantized Add");
  memcpy(in, v, sizeof v);
  NNP_TRY(pass_make_internal(add, NNP_OP_QLINEAR_ADD, "QLinearAdd"));
  if (r >= 0) {
    nnp_attr *at;
    NNP_TRY(nnp_node_add_attr(add, "activation", &at));
    at->type = NNP_ATTR_STRING;
    at->s = nnp_strdup(clip ? "Clip" : "Relu");
    if (!at->s) return nnp_error(NNP_ERR_NOMEM, "out of memory fusing a quantized Add");
    at->s_len = strlen(at->s);
    if (clip) {
      NNP_TRY(nnp_node_add_attr(add, "activation_params", &at));
      at->type = NNP_ATTR_FLOATS;
      at->floats = nnp_malloc(2 * sizeof(float));
      if (!at->floats) return nnp_error(NNP_ERR_NOMEM, "out of memory fusing a quantized Add");
      at->count = 2;
      at->floats[0] = lo;
      at->floats[1] = hi;
    }
  }
  nnp_free(add->inputs);
  add->inputs = in;
  add->n_inputs = 8;
  add->outputs[0] = nq->outputs[0];
  int last = q > r ? q : r, first = q > r ? r : q;
  pass_remove_node(g, last);
  if (first >= 0) pass_remove_node(g, first);
  *done = true;
  return NNP_OK;
}

nnp_status nnp_pass_fuse_qdq_glue(nnp_graph *g, const nnp_graph_shapes *shapes, int *count) {
  *count = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    bool done;
    NNP_TRY(swap_maxpool(g, i, &done));
    *count += done;
  }
  for (int i = 0; i < g->n_nodes; i++) {
    bool done;
    NNP_TRY(fuse_add(g, shapes, i, &done));
    *count += done; /* the removed Relu and Q came after node i (topological order): i stays */
  }
  return NNP_OK;
}
