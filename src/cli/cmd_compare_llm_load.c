/* nnperf compare for two `nnperf llm load` results. Rows are matched by what was offered
 * and how the server was set up (scenario, streams or rate, burstiness, cap, slots,
 * batching, prompt cache, shared prefix, KV type, repack), within runs of the same
 * controlled variables (weight type, threads, prompt and generation lengths, API); per
 * matched row: output tokens/s as a figure, and TTFT and TPOT of the measured requests
 * (P50 and P99) judged by the CNN compare's statistics and inconclusive rules
 * (cli_compare_llm_metric). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_compare_llm.h"
#include "llm/llm_load_result.h"

static int same_rate(double a, double b) { return fabs(a - b) <= 1e-9 * (fabs(a) + fabs(b) + 1); }

/* The same offered load: scenario, streams or rate, burstiness, cap. */
static int same_load(const nnp_llm_load_row *a, const nnp_llm_load_row *b) {
  return !strcmp(a->scenario, b->scenario) && a->concurrency == b->concurrency && same_rate(a->rate, b->rate) &&
         same_rate(a->burstiness, b->burstiness) && a->max_concurrency == b->max_concurrency;
}

/* The same load on the same server configuration. */
static int same_row(const nnp_llm_load_row *a, const nnp_llm_load_row *b) {
  return same_load(a, b) && a->slots == b->slots && a->cont_batching == b->cont_batching && a->cache_prompt == b->cache_prompt &&
         a->shared_prefix == b->shared_prefix && !strcmp(a->kv_type, b->kv_type) && !strcmp(a->repack, b->repack);
}

/* The run-level controlled variables; prints each that differs. 1 when all agree. */
static int same_run(const nnp_llm_load_result *a, const nnp_llm_load_result *b) {
  const char *what[] = {"weight type", "backend", "API", "prompt length", "generation length"};
  const char *va[] = {a->weight_type, a->backend, a->api, a->prompt_len, a->gen_len};
  const char *vb[] = {b->weight_type, b->backend, b->api, b->prompt_len, b->gen_len};
  int same = 1;
  for (int i = 0; i < 5; i++)
    if (strcmp(va[i], vb[i])) {
      printf("%s differs: '%s' vs '%s'\n", what[i], va[i], vb[i]);
      same = 0;
    }
  if (a->threads != b->threads) {
    printf("threads differ: %d vs %d\n", a->threads, b->threads);
    same = 0;
  }
  if (!same) printf("rows of runs that differ in a controlled variable are not compared\n\n");
  return same;
}

static int has_ok(const nnp_llm_load_row *w) { return w->m.n_ok > 0; }

static nnp_status compare_row(const nnp_llm_load_row *b, const nnp_llm_load_row *n, const nnp_compare_options *o,
                              cli_llm_tally *t) {
  printf("%s", b->label);
  if (!has_ok(b) || !has_ok(n)) {
    printf(": not compared (%s has no successful request)\n", !has_ok(b) ? "BASE" : "NEW");
    return NNP_OK;
  }
  double ob = b->m.out_tok_per_s, on = n->m.out_tok_per_s;
  printf("   output %.1f -> %.1f tok/s (%.3fx), failed %d -> %d\n", ob, on, ob > 0 ? on / ob : 0, b->m.n_failed,
         n->m.n_failed);
  cli_llm_side sb = {b->label, NNP_ROW_OK, b->reqs, b->n_reqs}, sn = {n->label, NNP_ROW_OK, n->reqs, n->n_reqs};
  NNP_TRY(cli_compare_llm_metric(&sb, &sn, 0, o, t));
  return cli_compare_llm_metric(&sb, &sn, 1, o, t);
}

static int index_of(const nnp_llm_load_result *r, const nnp_llm_load_row *w) {
  for (int j = 0; j < r->n_rows; j++)
    if (same_row(w, &r->rows[j])) return j;
  return -1;
}

/* A row without a twin: when the other run has the same load on another server
 * configuration, which controlled variable differs (rows that differ in one are not
 * ranked); else "only in SIDE". */
static void unmatched(const nnp_llm_load_row *w, const nnp_llm_load_result *other, const char *side) {
  for (int j = 0; j < other->n_rows; j++) {
    const nnp_llm_load_row *x = &other->rows[j];
    if (!same_load(w, x)) continue;
    const nnp_llm_load_row *b = !strcmp(side, "BASE") ? w : x, *n = b == w ? x : w;
    printf("%s: not compared: ", w->label);
    if (strcmp(b->repack, n->repack)) printf("repack %s vs %s ", b->repack, n->repack);
    if (strcmp(b->kv_type, n->kv_type)) printf("KV %s vs %s ", b->kv_type, n->kv_type);
    if (b->slots != n->slots) printf("slots %d vs %d ", b->slots, n->slots);
    if (b->cont_batching != n->cont_batching) printf("cont_batching %d vs %d ", b->cont_batching, n->cont_batching);
    if (b->cache_prompt != n->cache_prompt || b->shared_prefix != n->shared_prefix) printf("prompt cache/prefix ");
    printf("(a controlled variable differs, BASE vs NEW)\n");
    return;
  }
  printf("%s: only in %s\n", w->label, side);
}

int cli_compare_llm_load(const nnp_bench_result *base, const nnp_bench_result *next, const nnp_compare_options *o) {
  if (!base->llm_load || !next->llm_load) {
    fprintf(stderr, "nnperf: error: compare: %s is an llm load result and %s is not: compare like with like\n",
            base->llm_load ? "BASE" : "NEW", base->llm_load ? "NEW" : "BASE");
    return CLI_FAIL;
  }
  const nnp_llm_load_result *lb = base->llm_load, *ln = next->llm_load;
  int runs_match = same_run(lb, ln);
  cli_compare_llm_header();
  cli_llm_tally t = {0};
  for (int i = 0; i < lb->n_rows; i++) {
    int j = runs_match ? index_of(ln, &lb->rows[i]) : -1;
    if (j < 0 && runs_match) unmatched(&lb->rows[i], ln, "BASE");
    else if (j < 0) printf("%s: only in BASE\n", lb->rows[i].label);
    else if (compare_row(&lb->rows[i], &ln->rows[j], o, &t) != NNP_OK) return cli_fail(lb->rows[i].label);
  }
  for (int j = 0; j < ln->n_rows; j++) /* NEW's rows without a twin; those with a same-load row were said above */
    if (!runs_match) printf("%s: only in NEW\n", ln->rows[j].label);
    else if (index_of(lb, &ln->rows[j]) < 0) {
      int i = 0;
      while (i < lb->n_rows && !same_load(&lb->rows[i], &ln->rows[j])) i++;
      if (i == lb->n_rows) printf("%s: only in NEW\n", ln->rows[j].label);
    }
  return cli_compare_llm_summary(&t, base, next);
}
