/* No-op removal: Identity and inference-mode Dropout forward their input (their readers
 * read the input instead), and Reshape(Reshape(x, s1), s2) becomes Reshape(x, s2) when s2
 * is a constant without 0 entries (a 0 copies a dim of the input, which the chain changes).
 * A node whose output is a graph output stays: the output's name must survive. */
#include "ir/passes/pass_util.h"
#include "ops/op.h"

/* Initializer v's first element as a double; `otherwise` when v is not a known value. */
static double const_scalar(const nnp_graph *g, int v, double otherwise) {
  if (v < 0 || g->values[v].kind != NNP_VALUE_INITIALIZER || !g->values[v].init) return otherwise;
  const nnp_tensor *t = g->values[v].init;
  return nnp_tensor_numel(t) == 1 ? nnp_tensor_get_f64(t, 0) : otherwise;
}

static bool forwards_input(const nnp_graph *g, const nnp_node *n) {
  if (n->op == NNP_OP_IDENTITY) return n->n_inputs == 1 && n->n_outputs == 1;
  if (n->op != NNP_OP_DROPOUT) return false;
  /* training_mode (input 2) present: unless it is a constant false, or the ratio a
   * constant 0 (identity in training mode too), it may drop at run time; keep the node */
  if (n->n_inputs > 2 && n->inputs[2] >= 0 && const_scalar(g, n->inputs[2], 1) != 0 &&
      const_scalar(g, n->inputs[1], 1) != 0)
    return false;
  if (nnp_attr_int(n, "is_test", 1) == 0 && nnp_attr_int(n, "training_mode", 0)) return false;
  return true;
}

static bool reshape_target_ok(const nnp_graph *g, const nnp_node *n) {
  if (n->n_inputs < 2 || n->inputs[1] < 0) return false;
  const nnp_value *s = &g->values[n->inputs[1]];
  if (s->kind != NNP_VALUE_INITIALIZER || !s->init || s->init->dtype != NNP_I64) return false;
  if (nnp_attr_int(n, "allowzero", 0)) return true;
  const int64_t *d = s->init->data;
  for (int64_t k = 0; k < nnp_tensor_numel(s->init); k++)
    if (d[k] == 0) return false;
  return true;
}

nnp_status nnp_pass_noops(nnp_graph *g, int *count) {
  *count = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    nnp_node *n = &g->nodes[i];
    if (forwards_input(g, n)) {
      int in = n->inputs[0], out = n->outputs[0];
      bool mask_used = n->n_outputs > 1 && n->outputs[1] >= 0 && pass_uses(g, n->outputs[1]) > 0;
      if (in < 0 || out < 0 || g->values[out].is_output || mask_used) continue;
      pass_replace_uses(g, out, in);
      pass_remove_node(g, i--);
      ++*count;
      continue;
    }
    if (n->op == NNP_OP_RESHAPE && n->inputs[0] >= 0 && reshape_target_ok(g, n)) {
      int inner_v = n->inputs[0];
      int p = -1;
      for (int j = 0; j < i && p < 0; j++)
        if (g->nodes[j].n_outputs > 0 && g->nodes[j].outputs[0] == inner_v) p = j;
      if (p < 0 || g->nodes[p].op != NNP_OP_RESHAPE || pass_single_consumer(g, inner_v) != i) continue;
      n->inputs[0] = g->nodes[p].inputs[0];
      pass_remove_node(g, p);
      i--;
      ++*count;
    }
  }
  return NNP_OK;
}
