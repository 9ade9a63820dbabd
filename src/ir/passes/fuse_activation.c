/* Activation fusion: Conv/Gemm (or a FusedConv without activation) whose only reader is
 * Relu, Clip (constant bounds), HardSwish or Sigmoid becomes FusedConv/FusedGemm with the
 * activation in its epilogue. So does a Conv/Gemm read by exactly a gate G(y) and
 * Mul(y, G(y)): HardSigmoid (alpha 1/6, beta 0.5) makes HardSwish as exporters write it
 * below opset 14 (torchvision's MobileNetV3 at opset 13), which otherwise ran as two
 * steps, the HardSigmoid on the reference kernel; Sigmoid makes SiLU (Swish), which torch
 * exports as x * sigmoid(x) (the EfficientNet family: half of efficientnet_b0's time ran
 * the pair as a separate elementwise pass, and on AVX-512 each pass took the value out of
 * the blocked layout and back). float32 only (read from the inferred shapes). */
#include <math.h>
#include <string.h>

#include "ir/passes/pass_util.h"
#include "nnperf/alloc.h"
#include "ops/internal_ops.h"

static const char *activation_of(const nnp_graph *g, const nnp_node *n, float *lo, float *hi) {
  switch (n->op) {
    case NNP_OP_RELU: return "Relu";
    case NNP_OP_HARD_SWISH: return "HardSwish";
    case NNP_OP_SIGMOID: return "Sigmoid";
    case NNP_OP_CLIP: return pass_clip_bounds(g, n, lo, hi) ? "Clip" : NULL;
    default: return NULL;
  }
}

/* y's two readers when they are a gate G(y) (HardSigmoid with HardSwish's constants, or
 * Sigmoid) and Mul(y, G(y)), the gate's output read by the Mul alone: the Mul's index,
 * the gate's in *hs and the fused activation's name in *act; else -1. */
static int gated_readers(const nnp_graph *g, int y, int *hs, const char **act) {
  if (g->values[y].is_output || pass_uses(g, y) != 2) return -1;
  int h = -1, m = -1;
  for (int i = 0; i < g->n_nodes; i++) {
    const nnp_node *c = &g->nodes[i];
    if (c->n_outputs != 1 || c->outputs[0] < 0) continue;
    if ((c->op == NNP_OP_HARD_SIGMOID || c->op == NNP_OP_SIGMOID) && c->n_inputs == 1 && c->inputs[0] == y) h = i;
    else if (c->op == NNP_OP_MUL && c->n_inputs == 2 && (c->inputs[0] == y || c->inputs[1] == y)) m = i;
  }
  if (h < 0 || m < 0) return -1;
  /* the reference HardSigmoid computes alpha * x + beta: with these exact constants it is
   * HardSwish's x * (1/6) + 0.5, so the fused reference gives the same bits (and Silu's
   * reference is x * the reference Sigmoid) */
  *act = g->nodes[h].op == NNP_OP_SIGMOID ? "Silu" : "HardSwish";
  if (g->nodes[h].op == NNP_OP_HARD_SIGMOID && (nnp_attr_float(&g->nodes[h], "alpha", 0.2f) != 1.0f / 6.0f ||
                                                nnp_attr_float(&g->nodes[h], "beta", 0.5f) != 0.5f))
    return -1;
  const int ho = g->nodes[h].outputs[0];
  const nnp_node *mn = &g->nodes[m];
  if (!((mn->inputs[0] == y && mn->inputs[1] == ho) || (mn->inputs[1] == y && mn->inputs[0] == ho))) return -1;
  if (pass_single_consumer(g, ho) != m) return -1;
  *hs = h;
  return m;
}

/* Node i (Conv/Gemm) takes HardSwish or Silu when its output is read as above; the gate
 * and the Mul are removed. *moved: how many removed nodes came before i (the caller's
 * index moves back by as much), -1 when the pattern is not there. */
static nnp_status fuse_gated(nnp_graph *g, int i, int *moved) {
  *moved = -1;
  nnp_node *n = &g->nodes[i];
  int h = -1;
  const char *act = NULL;
  const int m = gated_readers(g, n->outputs[0], &h, &act);
  if (m < 0) return NNP_OK;
  NNP_TRY(pass_set_activation(n, act, 0, 0));
  n->outputs[0] = g->nodes[m].outputs[0];
  if (n->op == NNP_OP_CONV) NNP_TRY(pass_make_internal(n, NNP_OP_FUSED_CONV, "FusedConv"));
  if (n->op == NNP_OP_GEMM) NNP_TRY(pass_make_internal(n, NNP_OP_FUSED_GEMM, "FusedGemm"));
  const int hi = m > h ? m : h, lo = m > h ? h : m;
  pass_remove_node(g, hi);
  pass_remove_node(g, lo);
  *moved = (hi < i) + (lo < i);
  return NNP_OK;
}

/* DenseNet's pre-activation BatchNormalization -> ReLU (61 pairs in densenet121), which no
 * conv precedes to fold the BatchNormalization into: two passes over each value, the Relu's
 * 1.24 ms beside the BatchNormalization's 2.43 of 74 at one thread on an AVX2 EPYC. After
 * the blocked layout, so that a BatchNormalization it takes still finds its Relu (it fuses
 * it into BlockedBatchNorm itself). */
nnp_status nnp_pass_fuse_bn_relu(nnp_graph *g, const nnp_graph_shapes *shapes, int *count) {
  *count = 0;
  if (!shapes) return NNP_OK;
  for (int i = 0; i < g->n_nodes; i++) {
    nnp_node *n = &g->nodes[i];
    if (!pass_channel_bn(g, shapes, n)) continue;
    const int r = pass_single_consumer(g, n->outputs[0]);
    if (r < 0 || g->nodes[r].op != NNP_OP_RELU || g->nodes[r].n_outputs != 1 || g->nodes[r].outputs[0] < 0) continue;
    NNP_TRY(pass_set_activation(n, "Relu", 0, 0));
    n->outputs[0] = g->nodes[r].outputs[0];
    NNP_TRY(pass_make_internal(n, NNP_OP_FUSED_BATCH_NORM, "FusedBatchNorm"));
    pass_remove_node(g, r);
    if (r < i) i--;
    ++*count;
  }
  return NNP_OK;
}

nnp_status nnp_pass_fuse_activation(nnp_graph *g, const nnp_graph_shapes *shapes, int *count) {
  *count = 0;
  if (!shapes) return NNP_OK;
  for (int i = 0; i < g->n_nodes; i++) {
    nnp_node *n = &g->nodes[i];
    bool conv = n->op == NNP_OP_CONV || n->op == NNP_OP_FUSED_CONV;
    bool gemm = n->op == NNP_OP_GEMM || n->op == NNP_OP_FUSED_GEMM;
    if ((!conv && !gemm) || n->n_outputs != 1 || n->outputs[0] < 0 || nnp_node_attr(n, "activation")) continue;
    const nnp_tensor *t = pass_shape(shapes, n->outputs[0]);
    if (!t || t->dtype != NNP_F32) continue;
    const int ai = pass_single_consumer(g, n->outputs[0]);
    if (ai < 0) {
      int moved;
      NNP_TRY(fuse_gated(g, i, &moved));
      if (moved >= 0) i -= moved, ++*count;
      continue;
    }
    if (g->nodes[ai].n_outputs != 1 || g->nodes[ai].inputs[0] != n->outputs[0]) continue;
    float lo = 0, hi = 0;
    const char *act = activation_of(g, &g->nodes[ai], &lo, &hi);
    if (!act) continue;
    NNP_TRY(pass_set_activation(n, act, lo, hi));
    n->outputs[0] = g->nodes[ai].outputs[0];
    if (n->op == NNP_OP_CONV) NNP_TRY(pass_make_internal(n, NNP_OP_FUSED_CONV, "FusedConv"));
    if (n->op == NNP_OP_GEMM) NNP_TRY(pass_make_internal(n, NNP_OP_FUSED_GEMM, "FusedGemm"));
    pass_remove_node(g, ai);
    if (ai < i) i--;
    ++*count;
  }
  return NNP_OK;
}
