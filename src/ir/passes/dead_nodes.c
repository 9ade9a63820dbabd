/* Dead-node elimination: a node none of whose outputs reaches a graph output (directly or
 * through other nodes) is dropped. Walks the topological order backwards once. */
#include "ir/passes/pass_util.h"
#include "nnperf/alloc.h"

nnp_status nnp_pass_dead_nodes(nnp_graph *g, int *count) {
  *count = 0;
  bool *live = nnp_calloc((size_t)(g->n_values ? g->n_values : 1), sizeof *live);
  bool *keep = nnp_calloc((size_t)(g->n_nodes ? g->n_nodes : 1), sizeof *keep);
  if (!live || !keep) {
    nnp_free(live);
    nnp_free(keep);
    return nnp_error(NNP_ERR_NOMEM, "out of memory in dead-node elimination");
  }
  for (int k = 0; k < g->n_outputs; k++) live[g->outputs[k]] = true;
  for (int i = g->n_nodes - 1; i >= 0; i--) {
    const nnp_node *n = &g->nodes[i];
    for (int o = 0; o < n->n_outputs; o++)
      if (n->outputs[o] >= 0 && live[n->outputs[o]]) keep[i] = true;
    if (!keep[i]) continue;
    for (int k = 0; k < n->n_inputs; k++)
      if (n->inputs[k] >= 0) live[n->inputs[k]] = true;
  }
  for (int i = g->n_nodes - 1; i >= 0; i--)
    if (!keep[i]) {
      pass_remove_node(g, i);
      ++*count;
    }
  nnp_free(live);
  nnp_free(keep);
  return NNP_OK;
}
