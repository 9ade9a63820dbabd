/* nnperf compare for two `nnperf llm bench` results: rows matched by configuration
 * (backend, weight type, threads, prompt and generation lengths, concurrency), and per
 * row the TTFT and TPOT of the measured requests compared with the same statistics as
 * CNN rows (nnp_compare_rows: P50 ratio with a bootstrap interval, Mann-Whitney,
 * Cliff's delta, the threshold, the inconclusive rules), plus the decode tokens/s ratio
 * as a figure. Two `nnperf llm load` results the same way (cmd_compare_llm_load.c), with
 * output tokens/s as the figure. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_compare_llm.h"
#include "nnperf/alloc.h"
#include "nnperf/llm_bench.h"

static int same_config(const nnp_llm_row *a, const nnp_llm_row *b) {
  return !strcmp(a->backend, b->backend) && !strcmp(a->weight_type, b->weight_type) && a->threads == b->threads &&
         a->prompt_len == b->prompt_len && a->gen_len == b->gen_len && a->concurrency == b->concurrency;
}

/* A bench row whose samples are one latency of w's measured requests (0 TTFT, 1 TPOT),
 * so nnp_compare_rows judges it. Samples owned by the row. */
static nnp_status latency_row(const cli_llm_side *w, int which, nnp_bench_row *row) {
  memset(row, 0, sizeof *row);
  row->status = w->status;
  snprintf(row->label, sizeof row->label, "%s", w->label);
  if (w->status != NNP_ROW_OK || !w->n_reqs) return NNP_OK;
  row->samples = nnp_malloc(sizeof *row->samples * (size_t)w->n_reqs);
  if (!row->samples) return nnp_error(NNP_ERR_NOMEM, "compare: out of memory");
  for (int i = 0; i < w->n_reqs; i++) {
    double lat[3];
    if (nnp_llm_request_latency(&w->reqs[i], &lat[0], &lat[1], &lat[2]) && (which == 0 || w->reqs[i].n_tokens > 1))
      row->samples[row->n_samples++] = lat[which];
  }
  row->n_processes = 1;
  row->process_samples[0] = row->n_samples;
  return nnp_stats_compute(row->samples, row->n_samples, 1, &row->stats);
}

nnp_status cli_compare_llm_metric(const cli_llm_side *b, const cli_llm_side *n, int which,
                                  const nnp_compare_options *o, cli_llm_tally *t) {
  nnp_bench_row rb, rn;
  nnp_compare_row c;
  memset(&c, 0, sizeof c);
  nnp_status s = latency_row(b, which, &rb);
  if (s == NNP_OK) s = latency_row(n, which, &rn);
  else memset(&rn, 0, sizeof rn);
  if (s == NNP_OK && (rb.n_samples < 2 || rn.n_samples < 2)) c.verdict = NNP_CMP_NOT_COMPARED;
  else if (s == NNP_OK) s = nnp_compare_rows(&rb, &rn, o, &c);
  if (s == NNP_OK && c.verdict == NNP_CMP_INCONCLUSIVE && (c.base_processes < 2 || c.new_processes < 2))
    /* the CNN rule, said for LLM rows: one worker (llm bench) or one server run (llm load)
     * per row, and nnperf has no --processes for them */
    snprintf(c.why, sizeof c.why,
             "%s has 1 worker process per row (one worker or one server run): run-to-run noise is not measured",
             c.base_processes < 2 ? "BASE" : "NEW");
  if (s == NNP_OK) {
    const char *metric = which ? "TPOT" : "TTFT";
    if (c.verdict == NNP_CMP_NOT_COMPARED) {
      printf("  %-4s %10s %10s %7s %17s %8s %10s %10s  not compared (too few measured requests)\n", metric, "-", "-",
             "-", "-", "-", "-", "-");
    } else {
      char ci[40];
      snprintf(ci, sizeof ci, "[%.3f, %.3f]", c.ratio_lo, c.ratio_hi);
      printf("  %-4s %10.3f %10.3f %7.3f %17s %8.2g %10.3f %10.3f  %s%s%s\n", metric, rb.stats.p50 * 1e3,
             rn.stats.p50 * 1e3, c.ratio, ci, c.mw_p, rb.stats.p99 * 1e3, rn.stats.p99 * 1e3,
             nnp_compare_verdict_name(c.verdict), c.why[0] ? ": " : "", c.why);
      t->compared++;
      t->regressions += c.verdict == NNP_CMP_REGRESSION;
      t->improvements += c.verdict == NNP_CMP_IMPROVEMENT;
    }
  }
  nnp_bench_row_free(&rb);
  nnp_bench_row_free(&rn);
  return s;
}

static cli_llm_side side(const nnp_llm_row *w) {
  return (cli_llm_side){w->label, w->status, w->reqs, w->n_reqs};
}

void cli_compare_llm_header(void) {
  printf("%-6s %10s %10s %7s %17s %8s %10s %10s  verdict   (per row: the measured requests' latencies, ms)\n", "",
         "base P50", "new P50", "ratio", "95% CI", "p", "base P99", "new P99");
}

int cli_compare_llm_summary(const cli_llm_tally *t, const nnp_bench_result *base, const nnp_bench_result *next) {
  printf("\n%d latencies compared: %d regression%s, %d improvement%s\n", t->compared, t->regressions,
         t->regressions == 1 ? "" : "s", t->improvements, t->improvements == 1 ? "" : "s");
  if (base->noisy || next->noisy)
    printf("warning: %s flagged noisy: small differences may be the machine, not the change\n",
           base->noisy && next->noisy ? "both runs were" : base->noisy ? "the BASE run was" : "the NEW run was");
  return t->regressions ? CLI_FAIL : CLI_OK;
}

static nnp_status compare_row(const nnp_llm_row *b, const nnp_llm_row *n, const nnp_compare_options *o,
                              cli_llm_tally *t) {
  printf("%s", b->label);
  if (b->status != NNP_ROW_OK || n->status != NNP_ROW_OK) {
    printf(": not compared (status %s / %s)\n", nnp_row_status_name(b->status), nnp_row_status_name(n->status));
    return NNP_OK;
  }
  printf("   decode %.1f -> %.1f tok/s (%.3fx)\n", b->decode_tok_per_s, n->decode_tok_per_s,
         b->decode_tok_per_s > 0 ? n->decode_tok_per_s / b->decode_tok_per_s : 0);
  cli_llm_side sb = side(b), sn = side(n);
  NNP_TRY(cli_compare_llm_metric(&sb, &sn, 0, o, t));
  return cli_compare_llm_metric(&sb, &sn, 1, o, t);
}

int cli_compare_llm(const nnp_bench_result *base, const nnp_bench_result *next, const nnp_compare_options *o) {
  if (!base->llm || !next->llm) {
    fprintf(stderr, "nnperf: error: compare: %s is an llm result and %s is not: compare like with like\n",
            base->llm ? "BASE" : "NEW", base->llm ? "NEW" : "BASE");
    return CLI_FAIL;
  }
  cli_compare_llm_header();
  cli_llm_tally t = {0};
  const nnp_llm_result *lb = base->llm, *ln = next->llm;
  for (int i = 0; i < lb->n_rows; i++) {
    int j = 0;
    while (j < ln->n_rows && !same_config(&lb->rows[i], &ln->rows[j])) j++;
    if (j == ln->n_rows) {
      printf("%s: only in BASE\n", lb->rows[i].label);
      continue;
    }
    if (compare_row(&lb->rows[i], &ln->rows[j], o, &t) != NNP_OK) return cli_fail(lb->rows[i].label);
  }
  for (int j = 0; j < ln->n_rows; j++) {
    int i = 0;
    while (i < lb->n_rows && !same_config(&lb->rows[i], &ln->rows[j])) i++;
    if (i == lb->n_rows) printf("%s: only in NEW\n", ln->rows[j].label);
  }
  return cli_compare_llm_summary(&t, base, next);
}
