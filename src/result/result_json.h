/* The JSON pieces every kind of result document writes: the bench document
 * (result_write.c) and the llm one (src/llm/llm_json.c) write a latency distribution the
 * same way, so one reader and one schema entry (docs/result-schema.md, `stats`) serve
 * both. */
#ifndef NNP_RESULT_JSON_H
#define NNP_RESULT_JSON_H

#include <stdio.h>

#include "nnperf/bench.h"
#include "nnperf/stats.h"
#include "result/read_fields.h"

/* {"n", "min", "max", "mean", "stdev", "cv", "p50", "p90", "p95", "p99", "p999",
 * "p50_ci": [lo, hi], "p99_ci": [lo, hi], "p99_underpowered", "p999_underpowered"};
 * null when s has no samples. */
void nnp_result_write_stats(FILE *f, const nnp_stats *s);

/* "footprint": {"runtime_bytes", "runtime_files", "model_bytes"}, "energy": {ENERGY_KEY,
 * "source"} (no comma before or after): every row kind writes them the same way, the
 * energy per its own unit ("j_per_inference" for CNN rows, "j_per_output_token" for LLM
 * rows). */
void nnp_result_write_footprint_energy(FILE *f, const nnp_row_extras *x, const char *energy_key);
/* Reads them back into x (absent: left as they are); idx names the row in errors. */
nnp_status nnp_result_read_footprint_energy(nnp_reader *rd, json_t *o, int idx, const char *energy_key,
                                            nnp_row_extras *x);

#endif
