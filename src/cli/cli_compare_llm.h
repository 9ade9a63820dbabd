/* nnperf compare of two llm results (cmd_compare_llm.c). */
#ifndef NNP_CLI_COMPARE_LLM_H
#define NNP_CLI_COMPARE_LLM_H

#include "nnperf/bench.h"
#include "nnperf/compare.h"

/* Prints the comparison; CLI_FAIL when a latency regressed (or one side is not llm). */
int cli_compare_llm(const nnp_bench_result *base, const nnp_bench_result *next, const nnp_compare_options *o);

#endif
