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

/* A sweep row's machine (docs/sweep.md), which bench rows and llm rows carry in the same
 * four fields: where they point, with the capacities of the strings. */
typedef struct nnp_row_host_ref {
  char *hw_class, *node, *job_id;
  size_t hw_class_cap, node_cap, job_id_cap;
  nnp_env *env;
} nnp_row_host_ref;
#define NNP_ROW_HOST_REF(w)                                                                                   \
  ((nnp_row_host_ref){.hw_class = (w)->hw_class, .node = (w)->node, .job_id = (w)->job_id,                  \
                      .hw_class_cap = sizeof (w)->hw_class, .node_cap = sizeof (w)->node,                   \
                      .job_id_cap = sizeof (w)->job_id, .env = &(w)->host_env})
/* ",\n<indent>\"host\": {\"class\", \"node\", \"job_id\", \"env\"}": written only for rows
 * nnperf sweep ran (hw_class not empty: the caller checks); each string at most its
 * field's capacity (NNP_RESULT_WRITE_HOST passes them). */
void nnp_result_write_host(FILE *f, const char *indent, const char *hw_class, size_t hw_class_cap, const char *node,
                           size_t node_cap, const char *job_id, size_t job_id_cap, const nnp_env *env);
#define NNP_RESULT_WRITE_HOST(f, indent, w)                                                                    \
  nnp_result_write_host((f), (indent), (w)->hw_class, sizeof (w)->hw_class, (w)->node, sizeof (w)->node,      \
                        (w)->job_id, sizeof (w)->job_id, &(w)->host_env)
/* Reads "host" back into h (absent: left as it is); idx names the row in errors. */
nnp_status nnp_result_read_host(nnp_reader *rd, json_t *o, int idx, nnp_row_host_ref h);

#endif
