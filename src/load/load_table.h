/* nnperf load and nnperf coldstart results: the common result document (one
 * configuration row plus the "load" or "coldstart" section, docs/result-schema.md) made
 * from a finished run, and their tables on stdout. Writing, storing and rendering the
 * document is the same code as for nnperf bench (report_json, history, report_html). */
#ifndef NNP_LOAD_LOAD_TABLE_H
#define NNP_LOAD_LOAD_TABLE_H

#include <stdio.h>

#include "load/scenarios.h"
#include "load/target.h"
#include "nnperf/bench.h"

typedef struct nnp_load_meta {
  const char *command_line, *model, *backend, *backend_version, *options, *note;
  int instances, threads;
} nnp_load_meta;

/* The one row describing the configuration (backend, version, threads, input shapes from
 * t, note, start-up phases of the first worker or none; status ok, or failed with error). */
void nnp_load_row_fill(nnp_bench_row *w, const nnp_load_meta *m, const nnp_load_target *t,
                       const nnp_load_startup *first_worker, const char *error);

/* The document's common part: model, command line, environment, seed, and the one row
 * describing the configuration (nnp_load_row_fill). nnperf coldstart's; nnperf load's
 * document comes from the sweep library (load/sweep_load.h). */
nnp_status nnp_load_doc_init(nnp_bench_result *r, const nnp_load_meta *m, const nnp_load_target *t, uint64_t seed,
                             const nnp_load_startup *first_worker, const char *error);

/* The load section from a finished run: takes the points' samples out of res. */
nnp_status nnp_load_doc_set_load(nnp_bench_result *r, nnp_load_result *res, const nnp_load_pool *pool,
                                 const char *options, int instances);

/* The tables nnperf load and nnperf coldstart print (also nnperf history show). */
void nnp_load_print_table(FILE *f, const nnp_bench_result *r);
void nnp_coldstart_print_table(FILE *f, const nnp_bench_result *r);

#endif
