/* nnperf compare BASE NEW: per matched row, is NEW slower or faster beyond the noise? */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_compare_llm.h"
#include "cli/cli_result.h"
#include "nnperf/compare.h"
#include "util/atomic_file.h"
#include "util/json_write.h"

static const char compare_help[] =
    "usage: nnperf compare BASE NEW [options]\n\n"
    "Compares two bench results row by row. Rows match when backend, precision, threads,\n"
    "batch and input shapes are equal. For each pair, from the raw samples:\n"
    "  ratio      P50(NEW) / P50(BASE), with a 95% two-level bootstrap interval (worker\n"
    "             processes resampled, then samples within them: between-process noise counts)\n"
    "  proc       the same ratio on the medians of the per-process medians\n"
    "  p          Mann-Whitney U test, two-sided\n"
    "  delta      Cliff's delta, P(NEW slower) - P(NEW faster), the effect size\n"
    "A row is a REGRESSION (or an improvement) only when the ratio and the process-level ratio\n"
    "both pass the threshold, the interval excludes 1, p < alpha, and the change is larger than\n"
    "the spread of either run's own worker processes. A row is 'inconclusive' (with the reason)\n"
    "when the evidence cannot carry a verdict: a row whose threads competed with other work (its\n"
    "'oversubscribed' mark in bench), fewer than 2 worker processes in either run (bench\n"
    "--processes 1), a run whose processes differ by more than the threshold, or an interval\n"
    "reaching beyond it. Only a REGRESSION makes the exit status 1.\n\n"
    "  BASE, NEW          result JSON files or history run ids (nnperf history)\n"
    "  --threshold X      smallest change that counts: 5% (default) or 0.05\n"
    "  --alpha A          significance level (default 0.05)\n"
    "  --seed N           bootstrap seed (default 1)\n"
    "  --history DB       history database for run ids\n"
    "  --json FILE        the comparison as JSON too (per row: label, verdict, ratio, CI, ...)\n\n"
    "exit status: 0 no regression (inconclusive rows included), 1 a regression or an unreadable result,\n"
    "2 bad command line\n";

static int parse_fraction(const char *s, double *out) {
  char *end;
  double v = strtod(s, &end);
  if (end == s || !(v >= 0) || !isfinite(v)) return 0;
  if (*end == '%' && !end[1]) v /= 100;
  else if (*end || v >= 1) return 0; /* "5" is ambiguous: 5% or 500%? ask for "5%" */
  *out = v;
  return 1;
}

static void ms(char *out, size_t n, double s) { snprintf(out, n, s >= 0 && isfinite(s) ? "%.3f" : "-", s * 1e3); }

/* A row's name in the listing: its label, and its hardware class for a collected sweep's rows. */
static const char *shown(const nnp_bench_row *r, char *buf, size_t n) {
  snprintf(buf, n, r->hw_class[0] ? "%s @%s" : "%s", r->label, r->hw_class);
  return buf;
}

/* LLM results (cmd_compare_llm.c); frees both. */
static int compare_llm(nnp_bench_result *base, nnp_bench_result *next, const nnp_compare_options *o) {
  int rc = base->llm_load || next->llm_load ? cli_compare_llm_load(base, next, o) : cli_compare_llm(base, next, o);
  nnp_bench_result_free(base);
  nnp_bench_result_free(next);
  return rc;
}

int nnp_cmd_compare(int argc, char **argv) {
  const char *paths[2] = {NULL, NULL}, *history = NULL, *json_path = NULL;
  nnp_compare_options o;
  nnp_compare_options_default(&o);
  int n_paths = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      fputs(compare_help, stdout);
      return CLI_OK;
    }
    if (!strcmp(a, "--threshold") || !strcmp(a, "--alpha") || !strcmp(a, "--seed") || !strcmp(a, "--history") ||
        !strcmp(a, "--json")) {
      if (!v) return cli_usage_error("compare", "%s needs a value", a);
      i++;
      if (!strcmp(a, "--threshold")) {
        if (!parse_fraction(v, &o.threshold)) return cli_usage_error("compare", "--threshold wants e.g. 5%% or 0.05, not '%s'", v);
      } else if (!strcmp(a, "--alpha")) {
        char *end;
        o.alpha = strtod(v, &end);
        if (*end || !(o.alpha > 0 && o.alpha < 1)) return cli_usage_error("compare", "--alpha wants 0 < A < 1");
      } else if (!strcmp(a, "--seed")) {
        char *end;
        o.seed = strtoull(v, &end, 10);
        if (*end || !*v) return cli_usage_error("compare", "--seed wants an integer");
      } else if (!strcmp(a, "--json")) {
        json_path = v;
      } else {
        history = v;
      }
    } else if (a[0] == '-' && a[1]) {
      return cli_usage_error("compare", "unknown option '%s'", a);
    } else if (n_paths < 2) {
      paths[n_paths++] = a;
    } else {
      return cli_usage_error("compare", "give exactly two results, BASE and NEW");
    }
  }
  if (n_paths != 2) return cli_usage_error("compare", "give two results, BASE and NEW");
  nnp_bench_result base, next;
  if (cli_load_result(paths[0], history, &base) != NNP_OK) return cli_fail(NULL);
  if (cli_load_result(paths[1], history, &next) != NNP_OK) {
    nnp_bench_result_free(&base);
    return cli_fail(NULL);
  }
  o.base_cpus = base.env.cpus_allowed > 0 ? base.env.cpus_allowed : base.env.cpus_online;
  o.new_cpus = next.env.cpus_allowed > 0 ? next.env.cpus_allowed : next.env.cpus_online;
  printf("base: %s (%s)\nnew:  %s (%s)\nthreshold %.3g%%, alpha %.3g\n\n", paths[0], base.env.timestamp, paths[1],
         next.env.timestamp, o.threshold * 100, o.alpha);
  if (base.llm || next.llm || base.llm_load || next.llm_load)
    return compare_llm(&base, &next, &o); /* per-request latencies */
  printf("%-28s %10s %10s %7s %17s %7s %8s %7s  %s\n", "row", "base P50", "new P50", "ratio", "95% CI", "proc",
         "p", "delta", "verdict");
  nnp_atomic_file jf = {0};
  FILE *js = NULL;
  if (json_path) {
    if (nnp_atomic_open(&jf, json_path) != NNP_OK) {
      nnp_bench_result_free(&base);
      nnp_bench_result_free(&next);
      return cli_fail("--json");
    }
    js = jf.f;
    fputs("{\n  \"base\": ", js);
    nnp_json_string(js, paths[0]);
    fputs(",\n  \"new\": ", js);
    nnp_json_string(js, paths[1]);
    fputs(",\n  \"threshold\": ", js);
    nnp_json_number(js, o.threshold);
    fputs(",\n  \"alpha\": ", js);
    nnp_json_number(js, o.alpha);
    fprintf(js, ",\n  \"noisy\": %s,\n  \"rows\": [", base.noisy || next.noisy ? "true" : "false");
  }
  int n_json = 0;
  char name[160];
  char *used = calloc((size_t)next.n_rows + 1, 1);
  int regressions = 0, improvements = 0, inconclusive = 0, compared = 0, rc = CLI_OK;
  for (int i = 0; i < base.n_rows && used; i++) {
    const nnp_bench_row *b = &base.rows[i];
    int j = 0;
    while (j < next.n_rows && (used[j] || !nnp_rows_match(b, &next.rows[j]))) j++;
    if (j == next.n_rows) {
      printf("%-28s only in BASE\n", shown(b, name, sizeof name));
      continue;
    }
    used[j] = 1;
    const nnp_bench_row *n = &next.rows[j];
    nnp_compare_row c;
    if (nnp_compare_rows(b, n, &o, &c) != NNP_OK) {
      rc = cli_fail(b->label);
      break;
    }
    char pb[24], pn[24];
    ms(pb, sizeof pb, b->stats.n ? b->stats.p50 : -1);
    ms(pn, sizeof pn, n->stats.n ? n->stats.p50 : -1);
    if (c.verdict == NNP_CMP_NOT_COMPARED) {
      printf("%-28s %10s %10s %7s %17s %7s %8s %7s  not compared (status %s / %s)\n", shown(b, name, sizeof name), pb, pn, "-", "-", "-", "-",
             "-", nnp_row_status_name(b->status), nnp_row_status_name(n->status));
      continue;
    }
    if (js) { /* one object per compared row; NaN becomes null */
      fputs(n_json++ ? ",\n    {\"label\": " : "\n    {\"label\": ", js);
      nnp_json_string(js, b->label);
      fprintf(js, ", \"verdict\": \"%s\", \"why\": ", nnp_compare_verdict_name(c.verdict));
      nnp_json_string(js, c.why);
      const struct {
        const char *k;
        double v;
      } f[] = {{"base_p50_s", b->stats.p50}, {"new_p50_s", n->stats.p50}, {"ratio", c.ratio},
               {"ratio_lo", c.ratio_lo},     {"ratio_hi", c.ratio_hi},   {"proc_ratio", c.proc_ratio},
               {"mann_whitney_p", c.mw_p},   {"cliffs_delta", c.cliffs_delta}, {"base_spread", c.base_spread},
               {"new_spread", c.new_spread}};
      for (size_t k = 0; k < sizeof f / sizeof *f; k++) {
        fprintf(js, ", \"%s\": ", f[k].k);
        nnp_json_number(js, f[k].v);
      }
      fputc('}', js);
    }
    compared++;
    regressions += c.verdict == NNP_CMP_REGRESSION;
    improvements += c.verdict == NNP_CMP_IMPROVEMENT;
    inconclusive += c.verdict == NNP_CMP_INCONCLUSIVE;
    char ci[40];
    snprintf(ci, sizeof ci, "[%.3f, %.3f]", c.ratio_lo, c.ratio_hi);
    printf("%-28s %10s %10s %7.3f %17s %7.3f %8.2g %+7.2f  %s\n", shown(b, name, sizeof name), pb, pn, c.ratio, ci, c.proc_ratio, c.mw_p,
           c.cliffs_delta, nnp_compare_verdict_name(c.verdict));
    if (c.verdict == NNP_CMP_INCONCLUSIVE) printf("%-28s   why: %s\n", "", c.why);
  }
  for (int j = 0; j < next.n_rows && used; j++)
    if (!used[j]) printf("%-28s only in NEW\n", shown(&next.rows[j], name, sizeof name));
  free(used);
  printf("\n%d row%s compared: %d regression%s, %d improvement%s, %d inconclusive (P50 in ms)\n", compared,
         compared == 1 ? "" : "s", regressions, regressions == 1 ? "" : "s", improvements, improvements == 1 ? "" : "s",
         inconclusive);
  if (base.noisy || next.noisy)
    printf("warning: %s flagged noisy: small differences may be the machine, not the change\n",
           base.noisy && next.noisy ? "both runs were" : base.noisy ? "the BASE run was" : "the NEW run was");
  nnp_bench_result_free(&base);
  nnp_bench_result_free(&next);
  if (js) {
    fprintf(js, "%s],\n  \"compared\": %d,\n  \"regressions\": %d,\n  \"improvements\": %d,\n  \"inconclusive\": %d\n}\n",
            n_json ? "\n  " : "", compared, regressions, improvements, inconclusive);
    if (rc != CLI_OK) nnp_atomic_abort(&jf);
    else if (nnp_atomic_commit(&jf) != NNP_OK) rc = cli_fail("--json");
  }
  if (rc != CLI_OK) return rc;
  return regressions ? CLI_FAIL : CLI_OK;
}
