/* Seeded inputs and shape scenarios per batch (see sweep_inputs.h). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/sweep_inputs.h"
#include "nnperf/bench.h"

void nnp_plan_bind_batch(nnp_plan_options *plan, int64_t batch, const nnp_graph *g) {
  /* --shape without a name applies to the only input */
  for (int k = 0; k < plan->n_shapes; k++)
    if (!plan->shapes[k].input[0] && g->n_inputs == 1) plan->shapes[k].input = g->values[g->inputs[0]].name;
  if (!batch) return;
  for (int i = 0; i < g->n_inputs; i++) {
    const nnp_value *v = &g->values[g->inputs[i]];
    if (v->rank < 1 || v->dims[0].value >= 0) continue;
    if (v->dims[0].symbol) {
      bool bound = false;
      for (int k = 0; k < plan->n_dims; k++)
        if (!strcmp(plan->dims[k].symbol, v->dims[0].symbol)) bound = true;
      if (!bound && plan->n_dims < NNP_PLAN_MAX_BINDINGS) {
        plan->dims[plan->n_dims].symbol = v->dims[0].symbol;
        plan->dims[plan->n_dims++].value = batch;
      }
    } else if (plan->n_shapes < NNP_PLAN_MAX_BINDINGS) {
      /* unnamed unknown batch dim: bind the full shape with the other dims as declared */
      nnp_shape_binding *b = &plan->shapes[plan->n_shapes++];
      b->input = v->name;
      b->rank = v->rank;
      for (int d = 0; d < v->rank; d++) b->dims[d] = v->dims[d].value >= 0 ? v->dims[d].value : plan->default_dim;
      b->dims[0] = batch;
    }
  }
}

int nnp_dynamic_spec_valid(const char *s) {
  int rank = 0, ranged = 0;
  while (*s) {
    long long lo, hi;
    char *end;
    if (*s == 'N') s++;
    else if (*s == '[') {
      if (sscanf(s, "[%lld..%lld]", &lo, &hi) != 2 || lo < 1 || hi < lo || hi > 1 << 20) return 0;
      s = strchr(s, ']') + 1;
      ranged = 1;
    } else {
      lo = strtoll(s, &end, 10);
      if (end == s || lo < 1) return 0;
      s = end;
    }
    rank++;
    if (*s == 'x' && s[1]) s++;
    else if (*s) return 0;
  }
  return rank > 0 && rank <= NNP_MAX_RANK && ranged;
}

/* The dynamic spec with N replaced by the batch. */
static void resolve_dynamic(const char *spec, long long batch, char *out, size_t n) {
  size_t used = 0;
  for (; *spec && used + 24 < n; spec++) {
    if (*spec == 'N') used += (size_t)snprintf(out + used, n - used, "%lld", batch);
    else out[used++] = *spec;
  }
  out[used] = 0;
}

void nnp_sweep_inputs_free(nnp_sweep_inputs *in) {
  for (int i = 0; i < in->n_inputs; i++) nnp_tensor_free(&in->inputs[i]);
  memset(in, 0, sizeof *in);
}

nnp_status nnp_sweep_inputs_make(const nnp_graph *g, const nnp_plan_options *plan, int64_t batch, int static_rank,
                                 const int64_t *static_dims, const char *dynamic, uint64_t seed, nnp_sweep_inputs *out) {
  memset(out, 0, sizeof *out);
  nnp_plan_options bo = *plan;
  if (static_rank >= 0 && g->n_inputs >= 1) {
    batch = 0; /* the static shape says it all */
    nnp_shape_binding *b = &bo.shapes[bo.n_shapes++];
    b->input = g->values[g->inputs[0]].name;
    b->rank = static_rank;
    memcpy(b->dims, static_dims, sizeof *static_dims * (size_t)static_rank);
  }
  nnp_plan_bind_batch(&bo, batch, g);
  snprintf(out->scenario, sizeof out->scenario, "static:");
  if (dynamic) {
    resolve_dynamic(dynamic, batch, out->dyn_dims, sizeof out->dyn_dims);
    snprintf(out->scenario, sizeof out->scenario, "dynamic:%s", out->dyn_dims);
  }
  for (int i = 0; i < g->n_inputs; i++) {
    out->names[i] = g->values[g->inputs[i]].name;
    nnp_tensor *t = &out->inputs[i];
    out->n_inputs++;
    if (dynamic && i == 0) continue; /* drawn per iteration by the worker */
    nnp_status st = nnp_resolve_input_shape(g, &bo, i, t);
    if (st == NNP_OK) st = nnp_tensor_alloc(t);
    if (st != NNP_OK) {
      nnp_sweep_inputs_free(out);
      return st;
    }
    nnp_fill_seeded(t, seed + (uint64_t)i);
    if (dynamic) continue;
    char dims[128];
    size_t len = strlen(out->scenario);
    snprintf(out->scenario + len, sizeof out->scenario - len, "%s%s", i ? "," : "",
             nnp_shape_str(t->rank, t->dims, dims, sizeof dims));
  }
  return NNP_OK;
}
