/* Per-layer INT8 sensitivity and the mixed-precision search. See sensitivity.h. */
#define _POSIX_C_SOURCE 200809L
#include "quant/sensitivity.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nnperf/alloc.h"
#include "quant/qdq.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

void nnp_sensitivity_free(nnp_sensitivity *s) {
  for (int i = 0; s->layers && i < s->n; i++) nnp_free(s->layers[i].name);
  nnp_free(s->layers);
  memset(s, 0, sizeof *s);
}

double nnp_agreement_loss_pct(const nnp_eval_result *r) {
  return r->n ? 100.0 * (r->n - r->agree) / r->n : 0;
}

/* Most sensitive first; node order breaks exact ties so the ranking is deterministic. */
static int cmp_sens(const void *pa, const void *pb) {
  const nnp_layer_sens *a = pa, *b = pb;
  if (a->alone.cos_mean != b->alone.cos_mean) return a->alone.cos_mean < b->alone.cos_mean ? -1 : 1;
  if (a->alone.agree != b->alone.agree) return a->alone.agree < b->alone.agree ? -1 : 1;
  if (a->except.cos_mean != b->except.cos_mean) return a->except.cos_mean > b->except.cos_mean ? -1 : 1;
  return (a->node > b->node) - (a->node < b->node);
}

nnp_status nnp_sensitivity_run(nnp_graph *fp32, const nnp_calib_table *t, const nnp_plan_options *po,
                               const nnp_eval_set *e, nnp_sens_progress progress, void *ctx, nnp_sensitivity *out) {
  memset(out, 0, sizeof *out);
  double t0 = now_s();
  int *nodes = NULL, n = 0;
  NNP_TRY(nnp_qdq_layers(fp32, t, &nodes, &n));
  if (n == 0) {
    nnp_free(nodes);
    return nnp_error(NNP_ERR_UNSUPPORTED, "no Conv/Gemm/MatMul layer to quantize (no calibrated ranges?)");
  }
  const char **others = nnp_calloc((size_t)n, sizeof *others);
  out->layers = nnp_calloc((size_t)n, sizeof *out->layers);
  nnp_status s = others && out->layers ? NNP_OK : nnp_error(NNP_ERR_NOMEM, "out of memory for the sensitivity table");
  for (int i = 0; s == NNP_OK && i < n; i++) {
    const nnp_node *nd = &fp32->nodes[nodes[i]];
    nnp_layer_sens *L = &out->layers[i];
    L->node = nodes[i];
    L->name = nnp_strdup(nd->name);
    snprintf(L->op, sizeof L->op, "%s", nd->op_type);
    if (!L->name) s = nnp_error(NNP_ERR_NOMEM, "out of memory for the sensitivity table");
    out->n = i + 1;
  }
  int total = 2 * n + 1, done = 0;
  if (s == NNP_OK) s = nnp_eval_qdq(fp32, t, NULL, 0, po, e, &out->all_int8, NULL);
  if (s == NNP_OK && progress) progress(ctx, ++done, total);
  for (int i = 0; s == NNP_OK && i < n; i++) {
    /* alone: every other layer kept FP32 */
    int k = 0;
    for (int j = 0; j < n; j++)
      if (j != i) others[k++] = out->layers[j].name;
    s = nnp_eval_qdq(fp32, t, others, k, po, e, &out->layers[i].alone, NULL);
    if (s == NNP_OK && progress) progress(ctx, ++done, total);
    /* except: this one kept FP32 */
    const char *self = out->layers[i].name;
    if (s == NNP_OK) s = nnp_eval_qdq(fp32, t, &self, 1, po, e, &out->layers[i].except, NULL);
    if (s == NNP_OK && progress) progress(ctx, ++done, total);
  }
  nnp_free(others);
  nnp_free(nodes);
  if (s != NNP_OK) {
    nnp_sensitivity_free(out);
    return s;
  }
  qsort(out->layers, (size_t)out->n, sizeof *out->layers, cmp_sens);
  out->seconds = now_s() - t0;
  return NNP_OK;
}

void nnp_budget_result_free(nnp_budget_result *b) {
  nnp_free(b->steps);
  memset(b, 0, sizeof *b);
}

/* Times variant q against fp32 (both compiled with po) on the first validation input. */
static nnp_status time_step(const nnp_graph *fp32, const nnp_graph *q, const nnp_plan_options *po,
                            const nnp_eval_set *e, int reps, nnp_budget_step *st) {
  nnp_plan *pf = NULL, *pq = NULL;
  nnp_status s = nnp_plan_compile(fp32, po, &pf);
  if (s == NNP_OK) s = nnp_plan_compile(q, po, &pq);
  if (s == NNP_OK) s = nnp_time_interleaved(pq, pf, &e->inputs[0], reps, &st->p50_ms, &st->fp32_p50_ms);
  nnp_plan_destroy(pq);
  nnp_plan_destroy(pf);
  return s;
}

nnp_status nnp_budget_search(const nnp_graph *fp32, const nnp_calib_table *t, const nnp_plan_options *po,
                             const nnp_eval_set *e, const nnp_sensitivity *sens, double budget_pct, int reps,
                             void (*on_step)(void *ctx, const nnp_budget_step *st, const nnp_sensitivity *sens),
                             void *ctx, nnp_budget_result *out, nnp_graph **chosen) {
  memset(out, 0, sizeof *out);
  *chosen = NULL;
  if (!(budget_pct >= 0 && budget_pct <= 100)) return nnp_error(NNP_ERR_INVALID, "accuracy budget must be in [0, 100] %%");
  out->budget_pct = budget_pct;
  out->steps = nnp_calloc((size_t)sens->n + 1, sizeof *out->steps);
  const char **keep = nnp_calloc((size_t)sens->n + 1, sizeof *keep);
  nnp_status s = out->steps && keep ? NNP_OK : nnp_error(NNP_ERR_NOMEM, "out of memory for the budget search");
  /* Keeping every layer FP32 is the FP32 model (agreement 100%); with rejected layers the
   * search may end before it, not met. */
  int n_keep = 0, best_agree = -1;
  for (int k = 0; s == NNP_OK && k <= sens->n; k++) {
    nnp_budget_step *st = &out->steps[k];
    st->layer = k - 1;
    if (k > 0) keep[n_keep++] = sens->layers[k - 1].name;
    nnp_graph *q = NULL;
    s = nnp_eval_qdq(fp32, t, keep, n_keep, po, e, &st->r, &q);
    st->rejected = s == NNP_OK && k > 0 && st->r.agree < best_agree;
    if (st->rejected) n_keep--; /* back to INT8: the previous variant stays chosen */
    st->n_kept = n_keep;
    if (s == NNP_OK && reps > 0 && !st->rejected) s = time_step(fp32, q, po, e, reps, st);
    if (s != NNP_OK || st->rejected) {
      nnp_graph_destroy(q);
      if (s != NNP_OK) break;
      out->n_steps = k + 1;
      if (on_step) on_step(ctx, st, sens);
      continue;
    }
    best_agree = st->r.agree;
    out->n_steps = k + 1;
    if (on_step) on_step(ctx, st, sens);
    nnp_graph_destroy(*chosen);
    *chosen = q;
    out->chosen_step = k;
    if (nnp_agreement_loss_pct(&st->r) <= budget_pct) {
      out->met = true;
      break;
    }
  }
  nnp_free(keep);
  if (s != NNP_OK) {
    nnp_graph_destroy(*chosen);
    *chosen = NULL;
    nnp_budget_result_free(out);
  }
  return s;
}
