/* Graph construction, destruction, attribute access. */
#include <string.h>

#include "nnperf/alloc.h"
#include "nnperf/ir.h"
#include "util/strmap.h"

static nnp_status oom(const char *what) {
  return nnp_error(NNP_ERR_NOMEM, "out of memory (%s)", what);
}

/* Grows *arr (of elem bytes each) so that it holds at least need elements. */
static nnp_status reserve(void **arr, int *cap, int need, size_t elem) {
  if (need <= *cap) return NNP_OK;
  int ncap = *cap ? *cap * 2 : 16;
  while (ncap < need) ncap *= 2;
  void *p = nnp_realloc(*arr, (size_t)ncap * elem);
  if (!p) return oom("graph");
  memset((char *)p + (size_t)*cap * elem, 0, (size_t)(ncap - *cap) * elem);
  *arr = p;
  *cap = ncap;
  return NNP_OK;
}

nnp_status nnp_graph_create(nnp_graph **out) {
  nnp_graph *g = nnp_calloc(1, sizeof *g);
  if (!g) return oom("graph");
  if (nnp_strmap_create(&g->names) != NNP_OK) {
    nnp_free(g);
    return oom("graph");
  }
  g->opset = 13;
  g->ir_version = 8;
  *out = g;
  return NNP_OK;
}

void nnp_attr_clear(nnp_attr *a) {
  nnp_free(a->name);
  nnp_free(a->s);
  nnp_free(a->floats);
  nnp_free(a->ints);
  if (a->strings) {
    for (size_t i = 0; i < a->count; i++) nnp_free(a->strings[i]);
    nnp_free(a->strings);
  }
  if (a->tensor) {
    size_t n = a->type == NNP_ATTR_TENSORS ? a->count : 1;
    for (size_t i = 0; i < n; i++) nnp_tensor_free(&a->tensor[i]);
    nnp_free(a->tensor);
  }
  memset(a, 0, sizeof *a);
}

void nnp_graph_destroy(nnp_graph *g) {
  if (!g) return;
  for (int i = 0; i < g->n_values; i++) {
    nnp_value *v = &g->values[i];
    nnp_free(v->name);
    for (int d = 0; d < NNP_MAX_RANK; d++) nnp_free(v->dims[d].symbol);
    if (v->init) {
      nnp_tensor_free(v->init);
      nnp_free(v->init);
    }
  }
  for (int i = 0; i < g->n_nodes; i++) {
    nnp_node *n = &g->nodes[i];
    nnp_free(n->name);
    nnp_free(n->op_type);
    nnp_free(n->domain);
    nnp_free(n->inputs);
    nnp_free(n->outputs);
    for (int a = 0; a < n->n_attrs; a++) nnp_attr_clear(&n->attrs[a]);
    nnp_free(n->attrs);
  }
  nnp_free(g->values);
  nnp_free(g->nodes);
  nnp_free(g->inputs);
  nnp_free(g->outputs);
  nnp_free(g->name);
  nnp_free(g->producer);
  nnp_strmap_destroy(g->names);
  nnp_free(g);
}

int nnp_graph_find_value(const nnp_graph *g, const char *name) {
  return nnp_strmap_get(g->names, name);
}

nnp_status nnp_graph_value(nnp_graph *g, const char *name, int *index) {
  int idx = nnp_strmap_get(g->names, name);
  if (idx >= 0) {
    *index = idx;
    return NNP_OK;
  }
  /* Value names live in the values array, which may move on growth: the map keeps
   * pointers to the name strings, which do not move. */
  NNP_TRY(reserve((void **)&g->values, &g->cap_values, g->n_values + 1, sizeof *g->values));
  nnp_value *v = &g->values[g->n_values];
  memset(v, 0, sizeof *v);
  v->name = nnp_strdup(name);
  if (!v->name) return oom("value name");
  v->rank = -1;
  v->producer = -1;
  for (int d = 0; d < NNP_MAX_RANK; d++) v->dims[d].value = -1;
  if (nnp_strmap_put(g->names, v->name, g->n_values) != NNP_OK) {
    nnp_free(v->name);
    v->name = NULL;
    return oom("value name");
  }
  *index = g->n_values++;
  return NNP_OK;
}

nnp_status nnp_graph_add_input(nnp_graph *g, int value) {
  NNP_TRY(reserve((void **)&g->inputs, &g->cap_inputs, g->n_inputs + 1, sizeof *g->inputs));
  g->inputs[g->n_inputs++] = value;
  g->values[value].kind = NNP_VALUE_INPUT;
  return NNP_OK;
}

nnp_status nnp_graph_add_output(nnp_graph *g, int value) {
  NNP_TRY(reserve((void **)&g->outputs, &g->cap_outputs, g->n_outputs + 1, sizeof *g->outputs));
  g->outputs[g->n_outputs++] = value;
  g->values[value].is_output = true;
  return NNP_OK;
}

nnp_status nnp_graph_add_node(nnp_graph *g, const char *name, const char *op_type,
                              const char *domain, int n_inputs, const int *inputs,
                              int n_outputs, const int *outputs, int *index) {
  NNP_TRY(reserve((void **)&g->nodes, &g->cap_nodes, g->n_nodes + 1, sizeof *g->nodes));
  nnp_node *n = &g->nodes[g->n_nodes];
  memset(n, 0, sizeof *n);
  n->name = nnp_strdup(name ? name : "");
  n->op_type = nnp_strdup(op_type);
  n->domain = nnp_strdup(domain ? domain : "");
  n->inputs = nnp_malloc(sizeof(int) * (size_t)(n_inputs > 0 ? n_inputs : 1));
  n->outputs = nnp_malloc(sizeof(int) * (size_t)(n_outputs > 0 ? n_outputs : 1));
  /* Count the node even when an allocation failed, so destroy frees what was made. */
  g->n_nodes++;
  if (!n->name || !n->op_type || !n->domain || !n->inputs || !n->outputs) return oom("node");
  if (n_inputs) memcpy(n->inputs, inputs, sizeof(int) * (size_t)n_inputs);
  if (n_outputs) memcpy(n->outputs, outputs, sizeof(int) * (size_t)n_outputs);
  n->n_inputs = n_inputs;
  n->n_outputs = n_outputs;
  if (index) *index = g->n_nodes - 1;
  return NNP_OK;
}

nnp_status nnp_node_add_attr(nnp_node *n, const char *name, nnp_attr **out) {
  nnp_attr *a = nnp_realloc(n->attrs, sizeof *a * (size_t)(n->n_attrs + 1));
  if (!a) return oom("attribute");
  n->attrs = a;
  nnp_attr *na = &a[n->n_attrs];
  memset(na, 0, sizeof *na);
  na->name = nnp_strdup(name);
  if (!na->name) return oom("attribute");
  n->n_attrs++;
  *out = na;
  return NNP_OK;
}

const nnp_attr *nnp_node_attr(const nnp_node *n, const char *name) {
  for (int i = 0; i < n->n_attrs; i++)
    if (strcmp(n->attrs[i].name, name) == 0) return &n->attrs[i];
  return NULL;
}

int64_t nnp_attr_int(const nnp_node *n, const char *name, int64_t def) {
  const nnp_attr *a = nnp_node_attr(n, name);
  if (!a) return def;
  if (a->type == NNP_ATTR_INT) return a->i;
  /* a float where an int is expected: convert only when the value fits (else UB) */
  if (a->type == NNP_ATTR_FLOAT && a->f > -9.2e18f && a->f < 9.2e18f) return (int64_t)a->f;
  return def;
}

float nnp_attr_float(const nnp_node *n, const char *name, float def) {
  const nnp_attr *a = nnp_node_attr(n, name);
  if (!a) return def;
  if (a->type == NNP_ATTR_FLOAT) return a->f;
  if (a->type == NNP_ATTR_INT) return (float)a->i;
  return def;
}

const char *nnp_attr_string(const nnp_node *n, const char *name, const char *def) {
  const nnp_attr *a = nnp_node_attr(n, name);
  return a && a->type == NNP_ATTR_STRING && a->s ? a->s : def;
}

int nnp_attr_ints(const nnp_node *n, const char *name, const int64_t **out) {
  const nnp_attr *a = nnp_node_attr(n, name);
  if (!a || (a->type != NNP_ATTR_INTS && a->type != NNP_ATTR_INT)) return -1;
  if (a->type == NNP_ATTR_INT) {
    *out = &a->i;
    return 1;
  }
  *out = a->ints;
  return (int)a->count;
}

int nnp_attr_floats(const nnp_node *n, const char *name, const float **out) {
  const nnp_attr *a = nnp_node_attr(n, name);
  if (!a || (a->type != NNP_ATTR_FLOATS && a->type != NNP_ATTR_FLOAT)) return -1;
  if (a->type == NNP_ATTR_FLOAT) {
    *out = &a->f;
    return 1;
  }
  *out = a->floats;
  return (int)a->count;
}
