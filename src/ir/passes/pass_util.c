#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ir/passes/pass_util.h"
#include "nnperf/alloc.h"
#include "ops/internal_ops.h"

int pass_uses(const nnp_graph *g, int v) {
  int n = g->values[v].is_output ? 1 : 0;
  for (int i = 0; i < g->n_nodes; i++)
    for (int k = 0; k < g->nodes[i].n_inputs; k++) n += g->nodes[i].inputs[k] == v;
  return n;
}

int pass_single_consumer(const nnp_graph *g, int v) {
  if (g->values[v].is_output) return -1;
  int found = -1;
  for (int i = 0; i < g->n_nodes; i++)
    for (int k = 0; k < g->nodes[i].n_inputs; k++)
      if (g->nodes[i].inputs[k] == v) {
        if (found >= 0) return -1;
        found = i;
      }
  return found;
}

static void free_node(nnp_node *n) {
  nnp_free(n->name);
  nnp_free(n->op_type);
  nnp_free(n->domain);
  nnp_free(n->inputs);
  nnp_free(n->outputs);
  for (int a = 0; a < n->n_attrs; a++) nnp_attr_clear(&n->attrs[a]);
  nnp_free(n->attrs);
}

void pass_remove_node(nnp_graph *g, int i) {
  nnp_node *n = &g->nodes[i];
  free_node(n);
  memmove(&g->nodes[i], &g->nodes[i + 1], sizeof *n * (size_t)(g->n_nodes - i - 1));
  g->n_nodes--;
  memset(&g->nodes[g->n_nodes], 0, sizeof *n);
}

int *pass_use_counts(const nnp_graph *g) {
  int *uses = nnp_calloc(g->n_values > 0 ? (size_t)g->n_values : 1, sizeof(int));
  if (!uses) return NULL;
  for (int v = 0; v < g->n_values; v++) uses[v] = g->values[v].is_output ? 1 : 0;
  for (int i = 0; i < g->n_nodes; i++)
    for (int k = 0; k < g->nodes[i].n_inputs; k++)
      if (g->nodes[i].inputs[k] >= 0) uses[g->nodes[i].inputs[k]]++;
  return uses;
}

int pass_next_reader(const nnp_graph *g, int from, int v, const bool *dead) {
  for (int step = 0; step < g->n_nodes; step++) {
    int i = (from + step) % g->n_nodes;
    if (dead && dead[i]) continue;
    for (int k = 0; k < g->nodes[i].n_inputs; k++)
      if (g->nodes[i].inputs[k] == v) return i;
  }
  return -1;
}

void pass_remove_dead(nnp_graph *g, const bool *dead) {
  int kept = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    if (dead[i]) {
      free_node(&g->nodes[i]);
      continue;
    }
    if (kept != i) g->nodes[kept] = g->nodes[i];
    kept++;
  }
  if (kept < g->n_nodes) memset(&g->nodes[kept], 0, sizeof *g->nodes * (size_t)(g->n_nodes - kept));
  g->n_nodes = kept;
}

void pass_replace_uses(nnp_graph *g, int from, int to) {
  for (int i = 0; i < g->n_nodes; i++)
    for (int k = 0; k < g->nodes[i].n_inputs; k++)
      if (g->nodes[i].inputs[k] == from) g->nodes[i].inputs[k] = to;
}

const nnp_tensor *pass_const_f32(const nnp_graph *g, int v) {
  if (v < 0) return NULL;
  const nnp_value *val = &g->values[v];
  if (val->kind == NNP_VALUE_INITIALIZER) return val->init && val->init->dtype == NNP_F32 ? val->init : NULL;
  /* the output of a Constant node holding a tensor: PyTorch's exporter writes Clip's
   * bounds that way, and passes that run before constant folding (fuse-qdq) must see them */
  for (int i = 0; i < g->n_nodes; i++) {
    const nnp_node *n = &g->nodes[i];
    if (n->n_outputs < 1 || n->outputs[0] != v) continue;
    if (n->op != NNP_OP_CONSTANT || (n->domain && n->domain[0])) return NULL;
    const nnp_attr *a = nnp_node_attr(n, "value");
    return a && a->type == NNP_ATTR_TENSOR && a->tensor && a->tensor->dtype == NNP_F32 && a->tensor->data ? a->tensor
                                                                                                         : NULL;
  }
  return NULL;
}

nnp_status pass_add_initializer(nnp_graph *g, const char *base, nnp_tensor *t, int *value) {
  char name[256];
  for (int k = 0;; k++) {
    snprintf(name, sizeof name, "%s/nnperf%d", base, k);
    if (nnp_graph_find_value(g, name) < 0) break;
  }
  nnp_tensor *init = nnp_malloc(sizeof *init);
  if (!init) return nnp_error(NNP_ERR_NOMEM, "out of memory adding an initializer");
  int v;
  nnp_status s = nnp_graph_value(g, name, &v);
  if (s != NNP_OK) {
    nnp_free(init);
    return s;
  }
  *init = *t;
  memset(t, 0, sizeof *t);
  nnp_value *val = &g->values[v];
  val->kind = NNP_VALUE_INITIALIZER;
  val->init = init;
  val->dtype = init->dtype;
  val->rank = init->rank;
  for (int d = 0; d < init->rank; d++) val->dims[d].value = init->dims[d];
  *value = v;
  return NNP_OK;
}

nnp_status pass_make_internal(nnp_node *n, int op, const char *op_type) {
  char *t = nnp_strdup(op_type), *d = nnp_strdup(NNP_INTERNAL_DOMAIN);
  if (!t || !d) {
    nnp_free(t);
    nnp_free(d);
    return nnp_error(NNP_ERR_NOMEM, "out of memory rewriting a node");
  }
  nnp_free(n->op_type);
  nnp_free(n->domain);
  n->op_type = t;
  n->domain = d;
  n->op = op;
  return NNP_OK;
}

const nnp_tensor *pass_shape(const nnp_graph_shapes *shapes, int v) {
  return nnp_graph_shape(shapes, v);
}

/* Clip's bounds: attributes before opset 11, constant scalar inputs from 11 on. */
bool pass_clip_bounds(const nnp_graph *g, const nnp_node *n, float *lo, float *hi) {
  if (g->opset < 11) {
    *lo = nnp_attr_float(n, "min", -3.402823466e38f);
    *hi = nnp_attr_float(n, "max", 3.402823466e38f);
    return true;
  }
  *lo = -INFINITY;
  *hi = INFINITY;
  for (int k = 1; k < n->n_inputs && k < 3; k++) {
    if (n->inputs[k] < 0) continue;
    const nnp_tensor *t = pass_const_f32(g, n->inputs[k]);
    if (!t || nnp_tensor_numel(t) != 1) return false;
    *(k == 1 ? lo : hi) = *(const float *)t->data;
  }
  return true;
}

nnp_status pass_set_activation(nnp_node *n, const char *act, float lo, float hi) {
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

bool pass_channel_bn(const nnp_graph *g, const nnp_graph_shapes *shapes, const nnp_node *n) {
  if (n->op != NNP_OP_BATCH_NORMALIZATION || n->n_outputs != 1 || n->outputs[0] < 0 || n->inputs[0] < 0 ||
      nnp_attr_int(n, "spatial", 1) != 1)
    return false;
  const nnp_tensor *x = pass_shape(shapes, n->inputs[0]);
  return x && x->dtype == NNP_F32 && x->rank >= 2 && pass_inference_bn(g, n, x->dims[1]);
}

bool pass_inference_bn(const nnp_graph *g, const nnp_node *bn, int64_t m) {
  if (bn->op != NNP_OP_BATCH_NORMALIZATION || bn->n_inputs != 5 || nnp_attr_int(bn, "training_mode", 0)) return false;
  for (int o = 1; o < bn->n_outputs; o++) /* training outputs: only when unused */
    if (bn->outputs[o] >= 0 && pass_uses(g, bn->outputs[o]) > 0) return false;
  for (int k = 1; k < 5; k++) {
    const nnp_tensor *t = pass_const_f32(g, bn->inputs[k]);
    if (!t || nnp_tensor_numel(t) != m) return false;
  }
  return true;
}
