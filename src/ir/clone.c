/* Deep copy of a graph, value indices preserved (passes rewrite the copy). */
#include <string.h>

#include "nnperf/alloc.h"
#include "nnperf/passes.h"

static nnp_status oom(void) { return nnp_error(NNP_ERR_NOMEM, "out of memory while copying the graph"); }

static char *dup_or_null(const char *s, bool *fail) {
  if (!s) return NULL;
  char *d = nnp_strdup(s);
  if (!d) *fail = true;
  return d;
}

static nnp_status clone_attr(const nnp_attr *a, nnp_attr *d) {
  bool fail = false;
  d->type = a->type;
  d->f = a->f;
  d->i = a->i;
  d->count = a->count;
  d->s_len = a->s_len;
  if (a->s) {
    d->s = nnp_malloc(a->s_len + 1);
    if (!d->s) return oom();
    memcpy(d->s, a->s, a->s_len + 1);
  }
  if (a->floats) {
    d->floats = nnp_malloc(sizeof(float) * (a->count ? a->count : 1));
    if (!d->floats) return oom();
    memcpy(d->floats, a->floats, sizeof(float) * a->count);
  }
  if (a->ints) {
    d->ints = nnp_malloc(sizeof(int64_t) * (a->count ? a->count : 1));
    if (!d->ints) return oom();
    memcpy(d->ints, a->ints, sizeof(int64_t) * a->count);
  }
  if (a->strings) {
    d->strings = nnp_calloc(a->count ? a->count : 1, sizeof(char *));
    if (!d->strings) return oom();
    for (size_t k = 0; k < a->count; k++) d->strings[k] = dup_or_null(a->strings[k], &fail);
    if (fail) return oom();
  }
  if (a->tensor) {
    size_t n = a->type == NNP_ATTR_TENSORS ? a->count : 1;
    d->tensor = nnp_calloc(n ? n : 1, sizeof(nnp_tensor));
    if (!d->tensor) return oom();
    for (size_t k = 0; k < n; k++) NNP_TRY(nnp_tensor_clone(&a->tensor[k], &d->tensor[k]));
  }
  return NNP_OK;
}

static nnp_status clone_into(const nnp_graph *g, bool share, nnp_graph *c) {
  bool fail = false;
  c->name = dup_or_null(g->name, &fail);
  c->producer = dup_or_null(g->producer, &fail);
  if (fail) return oom();
  c->ir_version = g->ir_version;
  c->opset = g->opset;
  for (int v = 0; v < g->n_values; v++) {
    int idx;
    NNP_TRY(nnp_graph_value(c, g->values[v].name, &idx));
    if (idx != v) return nnp_error(NNP_ERR_INTERNAL, "graph copy: value '%s' renumbered", g->values[v].name);
    const nnp_value *s = &g->values[v];
    nnp_value *d = &c->values[v];
    d->kind = s->kind;
    d->dtype = s->dtype;
    d->rank = s->rank;
    d->producer = s->producer;
    d->is_output = s->is_output;
    for (int k = 0; k < NNP_MAX_RANK; k++) {
      d->dims[k].value = s->dims[k].value;
      d->dims[k].symbol = dup_or_null(s->dims[k].symbol, &fail);
    }
    if (fail) return oom();
    if (s->init) {
      d->init = nnp_calloc(1, sizeof *d->init);
      if (!d->init) return oom();
      if (share) *d->init = *s->init; /* borrowed data: nnp_graph_unshare before destroy */
      else NNP_TRY(nnp_tensor_clone(s->init, d->init));
    }
  }
  for (int i = 0; i < g->n_nodes; i++) {
    const nnp_node *s = &g->nodes[i];
    int idx;
    NNP_TRY(nnp_graph_add_node(c, s->name, s->op_type, s->domain, s->n_inputs, s->inputs, s->n_outputs,
                               s->outputs, &idx));
    nnp_node *d = &c->nodes[idx];
    d->op = s->op;
    for (int a = 0; a < s->n_attrs; a++) {
      nnp_attr *da;
      NNP_TRY(nnp_node_add_attr(d, s->attrs[a].name, &da));
      NNP_TRY(clone_attr(&s->attrs[a], da));
    }
  }
  for (int k = 0; k < g->n_inputs; k++) {
    NNP_TRY(nnp_graph_add_input(c, g->inputs[k]));
    c->values[g->inputs[k]].kind = g->values[g->inputs[k]].kind;
  }
  for (int k = 0; k < g->n_outputs; k++) NNP_TRY(nnp_graph_add_output(c, g->outputs[k]));
  return NNP_OK;
}

void nnp_graph_unshare(nnp_graph *copy, const nnp_graph *g) {
  if (!copy) return;
  for (int v = 0; v < g->n_values && v < copy->n_values; v++) {
    nnp_tensor *t = copy->values[v].init;
    if (t && g->values[v].init && t->data == g->values[v].init->data) t->data = NULL;
  }
}

nnp_status nnp_graph_clone(const nnp_graph *g, bool share_initializers, nnp_graph **out) {
  *out = NULL;
  nnp_graph *c;
  NNP_TRY(nnp_graph_create(&c));
  nnp_status s = clone_into(g, share_initializers, c);
  if (s != NNP_OK) {
    if (share_initializers) nnp_graph_unshare(c, g);
    nnp_graph_destroy(c);
    return s;
  }
  *out = c;
  return NNP_OK;
}
