/* Activation fusion: Conv/Gemm (or a FusedConv without activation) whose only reader is
 * Relu, Clip (constant bounds), HardSwish or Sigmoid becomes FusedConv/FusedGemm with the
 * activation in its epilogue. float32 only (read from the inferred shapes). */
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

static nnp_status set_activation(nnp_node *n, const char *act, float lo, float hi) {
  nnp_attr *a;
  NNP_TRY(nnp_node_add_attr(n, "activation", &a));
  a->type = NNP_ATTR_STRING;
  a->s = nnp_strdup(act);
  if (!a->s) return nnp_error(NNP_ERR_NOMEM, "out of memory fusing an activation");
  a->s_len = strlen(act);
  if (strcmp(act, "Clip") != 0) return NNP_OK;
  NNP_TRY(nnp_node_add_attr(n, "activation_params", &a));
  a->type = NNP_ATTR_FLOATS;
  a->floats = nnp_malloc(2 * sizeof(float));
  if (!a->floats) return nnp_error(NNP_ERR_NOMEM, "out of memory fusing an activation");
  a->count = 2;
  a->floats[0] = lo;
  a->floats[1] = hi;
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
    if (ai < 0 || g->nodes[ai].n_outputs != 1 || g->nodes[ai].inputs[0] != n->outputs[0]) continue;
    float lo = 0, hi = 0;
    const char *act = activation_of(g, &g->nodes[ai], &lo, &hi);
    if (!act) continue;
    NNP_TRY(set_activation(n, act, lo, hi));
    n->outputs[0] = g->nodes[ai].outputs[0];
    if (n->op == NNP_OP_CONV) NNP_TRY(pass_make_internal(n, NNP_OP_FUSED_CONV, "FusedConv"));
    if (n->op == NNP_OP_GEMM) NNP_TRY(pass_make_internal(n, NNP_OP_FUSED_GEMM, "FusedGemm"));
    pass_remove_node(g, ai);
    if (ai < i) i--;
    ++*count;
  }
  return NNP_OK;
}
