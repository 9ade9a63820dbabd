/* nnperf compare of two llm results (cmd_compare_llm.c). */
#ifndef NNP_CLI_COMPARE_LLM_H
#define NNP_CLI_COMPARE_LLM_H

#include "nnperf/bench.h"
#include "nnperf/compare.h"

#include "nnperf/llm.h"

/* Prints the comparison; CLI_FAIL when a latency regressed (or one side is not llm). */
int cli_compare_llm(const nnp_bench_result *base, const nnp_bench_result *next, const nnp_compare_options *o);
/* The same for two llm load results (cmd_compare_llm_load.c). */
int cli_compare_llm_load(const nnp_bench_result *base, const nnp_bench_result *next, const nnp_compare_options *o);

/* What both LLM comparisons share: one row's side of a comparison (its measured
 * requests), the verdicts counted, and the printing. */
typedef struct cli_llm_side {
  const char *label;
  nnp_row_status status;
  const nnp_llm_request *reqs;
  int n_reqs;
} cli_llm_side;

typedef struct cli_llm_tally {
  int compared, regressions, improvements;
} cli_llm_tally;

/* TTFT (which 0) or TPOT (1) of the two sides' measured requests through
 * nnp_compare_rows: one printed line, counted in t. */
nnp_status cli_compare_llm_metric(const cli_llm_side *b, const cli_llm_side *n, int which,
                                  const nnp_compare_options *o, cli_llm_tally *t);
void cli_compare_llm_header(void);
/* The closing line; CLI_FAIL when a latency regressed. */
int cli_compare_llm_summary(const cli_llm_tally *t, const nnp_bench_result *base, const nnp_bench_result *next);

#endif
