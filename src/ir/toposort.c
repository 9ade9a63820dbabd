/* Producer links, definedness checks and topological order (Kahn's algorithm). */
#include <string.h>

#include "nnperf/alloc.h"
#include "nnperf/ir.h"

nnp_status nnp_graph_toposort(nnp_graph *g) {
  for (int v = 0; v < g->n_values; v++) g->values[v].producer = -1;
  for (int i = 0; i < g->n_nodes; i++) {
    const nnp_node *n = &g->nodes[i];
    for (int o = 0; o < n->n_outputs; o++) {
      int v = n->outputs[o];
      if (v < 0) continue;
      nnp_value *val = &g->values[v];
      if (val->producer >= 0)
        return nnp_error(NNP_ERR_FORMAT, "value '%s' is produced by two nodes ('%s' and '%s')",
                         val->name, g->nodes[val->producer].name, n->name);
      if (val->kind != NNP_VALUE_INTERMEDIATE)
        return nnp_error(NNP_ERR_FORMAT, "node '%s' (%s) writes '%s', which is a graph %s",
                         n->name, n->op_type, val->name,
                         val->kind == NNP_VALUE_INPUT ? "input" : "initializer");
      val->producer = i;
    }
  }
  for (int i = 0; i < g->n_nodes; i++) {
    const nnp_node *n = &g->nodes[i];
    for (int k = 0; k < n->n_inputs; k++) {
      int v = n->inputs[k];
      if (v < 0) continue;
      const nnp_value *val = &g->values[v];
      if (val->producer < 0 && val->kind == NNP_VALUE_INTERMEDIATE)
        return nnp_error(NNP_ERR_FORMAT,
                         "node '%s' (%s) reads '%s', which no node, input or initializer defines",
                         n->name, n->op_type, val->name);
    }
  }
  for (int k = 0; k < g->n_outputs; k++) {
    const nnp_value *val = &g->values[g->outputs[k]];
    if (val->producer < 0 && val->kind == NNP_VALUE_INTERMEDIATE)
      return nnp_error(NNP_ERR_FORMAT, "graph output '%s' is not defined by any node", val->name);
  }
  if (g->n_nodes == 0) return NNP_OK;

  /* indeg[i]: inputs of node i whose producer has not been placed yet. */
  int n = g->n_nodes;
  int *indeg = nnp_calloc((size_t)n, sizeof(int));
  int *order = nnp_malloc(sizeof(int) * (size_t)n);
  int *users_start = nnp_calloc((size_t)n + 1, sizeof(int));
  int total_edges = 0;
  for (int i = 0; i < n; i++) total_edges += g->nodes[i].n_inputs;
  int *users = nnp_malloc(sizeof(int) * (size_t)(total_edges ? total_edges : 1));
  nnp_node *sorted = nnp_malloc(sizeof(nnp_node) * (size_t)n);
  nnp_status st = NNP_OK;
  if (!indeg || !order || !users_start || !users || !sorted) {
    st = nnp_error(NNP_ERR_NOMEM, "out of memory (topological sort)");
    goto done;
  }
  /* CSR list of consumer nodes per producer node. */
  for (int i = 0; i < n; i++)
    for (int k = 0; k < g->nodes[i].n_inputs; k++) {
      int v = g->nodes[i].inputs[k];
      int p = v >= 0 ? g->values[v].producer : -1;
      if (p >= 0) {
        users_start[p + 1]++;
        indeg[i]++;
      }
    }
  for (int i = 0; i < n; i++) users_start[i + 1] += users_start[i];
  {
    int *fill = order; /* reuse as cursor storage temporarily */
    for (int i = 0; i < n; i++) fill[i] = users_start[i];
    for (int i = 0; i < n; i++)
      for (int k = 0; k < g->nodes[i].n_inputs; k++) {
        int v = g->nodes[i].inputs[k];
        int p = v >= 0 ? g->values[v].producer : -1;
        if (p >= 0) users[fill[p]++] = i;
      }
  }
  /* Kahn with a FIFO that keeps the file order among ready nodes (stable). */
  int head = 0, tail = 0;
  for (int i = 0; i < n; i++)
    if (indeg[i] == 0) order[tail++] = i;
  while (head < tail) {
    int i = order[head++];
    for (int u = users_start[i]; u < users_start[i + 1]; u++)
      if (--indeg[users[u]] == 0) order[tail++] = users[u];
  }
  if (tail < n) {
    int culprit = 0;
    for (int i = 0; i < n; i++)
      if (indeg[i] > 0) {
        culprit = i;
        break;
      }
    st = nnp_error(NNP_ERR_FORMAT, "graph has a cycle through node '%s' (%s)",
                   g->nodes[culprit].name, g->nodes[culprit].op_type);
    goto done;
  }
  for (int k = 0; k < n; k++) sorted[k] = g->nodes[order[k]];
  memcpy(g->nodes, sorted, sizeof(nnp_node) * (size_t)n);
  for (int k = 0; k < n; k++)
    for (int o = 0; o < g->nodes[k].n_outputs; o++)
      if (g->nodes[k].outputs[o] >= 0) g->values[g->nodes[k].outputs[o]].producer = k;
done:
  nnp_free(indeg);
  nnp_free(order);
  nnp_free(users_start);
  nnp_free(users);
  nnp_free(sorted);
  return st;
}
