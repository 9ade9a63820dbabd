/* nnperf report: a result (file or history run) as one self-contained HTML page. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_result.h"
#include "llm/llm_load_result.h"
#include "llm/llm_report.h"
#include "nnperf/report_html.h"

static const char report_help[] =
    "usage: nnperf report RESULT -o report.html\n\n"
    "Writes one self-contained HTML file (no network access needed: CSS and SVG charts inline)\n"
    "for a bench result: summary table with P50/P99 and their confidence intervals, accuracy\n"
    "and memory; per row a latency CDF and a box plot; P50/P99 bars with CI whiskers; peak\n"
    "memory, load and cold-start bars; the environment; and the full result JSON (raw\n"
    "samples) as a download link. Readable on a phone and in print. A load result (nnperf\n"
    "load --json) gets its latency-vs-QPS curve and table of runs instead, a coldstart\n"
    "result its phases.\n\n"
    "  RESULT          a result JSON (nnperf bench/load/coldstart --json) or a history run id\n"
    "  -o, --output F  the HTML file to write (required)\n"
    "  --history DB    history database for run ids (default $NNPERF_HISTORY or\n"
    "                  ~/.local/share/nnperf/history.db)\n";

int nnp_cmd_report(int argc, char **argv) {
  const char *in = NULL, *out = NULL, *history = NULL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      fputs(report_help, stdout);
      return CLI_OK;
    }
    if (!strcmp(a, "-o") || !strcmp(a, "--output") || !strcmp(a, "--history")) {
      if (i + 1 >= argc) return cli_usage_error("report", "%s needs a value", a);
      if (!strcmp(a, "--history")) history = argv[++i];
      else out = argv[++i];
    } else if (a[0] == '-' && a[1]) {
      return cli_usage_error("report", "unknown option '%s'", a);
    } else if (!in) {
      in = a;
    } else {
      return cli_usage_error("report", "more than one result given");
    }
  }
  if (!in) return cli_usage_error("report", "no result given");
  if (!out) return cli_usage_error("report", "no output file given (-o report.html)");
  nnp_bench_result r;
  if (cli_load_result(in, history, &r) != NNP_OK) return cli_fail(NULL);
  /* an llm result has its own report (TTFT/TPOT distributions, tokens/s vs concurrency) */
  nnp_status s = r.llm        ? nnp_llm_write_html(r.llm, out)
                 : r.llm_load ? nnp_llm_load_write_html(r.llm_load, out)
                              : nnp_report_write_html(&r, out);
  nnp_bench_result_free(&r);
  if (s != NNP_OK) return cli_fail(NULL);
  return CLI_OK;
}
