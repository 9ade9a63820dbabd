/* The JSON pieces every kind of result document writes: the bench document
 * (result_write.c) and the llm one (src/llm/llm_json.c) write a latency distribution the
 * same way, so one reader and one schema entry (docs/result-schema.md, `stats`) serve
 * both. */
#ifndef NNP_RESULT_JSON_H
#define NNP_RESULT_JSON_H

#include <stdio.h>

#include "nnperf/stats.h"

/* {"n", "min", "max", "mean", "stdev", "cv", "p50", "p90", "p95", "p99", "p999",
 * "p50_ci": [lo, hi], "p99_ci": [lo, hi], "p99_underpowered", "p999_underpowered"};
 * null when s has no samples. */
void nnp_result_write_stats(FILE *f, const nnp_stats *s);

#endif
