/* Constant folding: a node whose inputs are all initializers is evaluated once, here, with
 * the reference kernel, and its outputs become initializers. Shape inference already
 * evaluates small results (shape arithmetic); this pass also folds large ones (a transposed
 * or dequantised weight), which would otherwise be recomputed on every run. */
#include "ops/op_eval.h"
#include "ir/passes/pass_util.h"
#include "nnperf/alloc.h"

/* Results above this many elements stay computed at run time (e.g. a ConstantOfShape
 * making a huge buffer would only move the cost into the model's memory). */
#define FOLD_MAX_ELEMS (16 << 20)

static bool foldable(const nnp_graph *g, const nnp_node *n) {
  if (!nnp_op_get(n->op) || n->n_outputs < 1 || n->n_outputs > 8) return false;
  for (int k = 0; k < n->n_inputs; k++) {
    int v = n->inputs[k];
    if (v >= 0 && (g->values[v].kind != NNP_VALUE_INITIALIZER || !g->values[v].init)) return false;
  }
  for (int o = 0; o < n->n_outputs; o++)
    if (n->outputs[o] < 0 || g->values[n->outputs[o]].is_output) return false;
  return true;
}

nnp_status nnp_pass_fold_constants(nnp_graph *g, int *count) {
  *count = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    nnp_node *n = &g->nodes[i];
    if (!foldable(g, n)) continue;
    const nnp_tensor *in[n->n_inputs > 0 ? n->n_inputs : 1];
    for (int k = 0; k < n->n_inputs; k++) in[k] = n->inputs[k] >= 0 ? g->values[n->inputs[k]].init : NULL;
    nnp_tensor out[8];
    size_t scratch = 0;
    if (nnp_op_infer(n, g->opset, n->n_inputs, in, n->n_outputs, out, &scratch) != NNP_OK) {
      nnp_clear_error();
      continue; /* the plan compiler reports it with the node's name */
    }
    int64_t elems = 0;
    for (int o = 0; o < n->n_outputs; o++) elems += nnp_tensor_numel(&out[o]);
    if (elems > FOLD_MAX_ELEMS) continue;
    if (nnp_op_eval(n, g->opset, n->n_inputs, in, n->n_outputs, out) != NNP_OK) {
      nnp_clear_error();
      continue;
    }
    for (int o = 0; o < n->n_outputs; o++) {
      nnp_value *val = &g->values[n->outputs[o]];
      val->init = nnp_malloc(sizeof *val->init);
      if (!val->init) {
        for (int k = o; k < n->n_outputs; k++) nnp_tensor_free(&out[k]);
        return nnp_error(NNP_ERR_NOMEM, "out of memory folding constants");
      }
      *val->init = out[o];
      val->kind = NNP_VALUE_INITIALIZER;
      val->dtype = out[o].dtype;
      val->rank = out[o].rank;
      for (int d = 0; d < out[o].rank; d++) val->dims[d].value = out[o].dims[d];
    }
    pass_remove_node(g, i--);
    ++*count;
  }
  return NNP_OK;
}
