/* Output of nnperf load and nnperf coldstart: a table on stdout and the JSON document
 * of docs/result-schema.md ("load" and "coldstart" sections, schema 1.1). */
#ifndef NNP_LOAD_REPORT_H
#define NNP_LOAD_REPORT_H

#include <stdio.h>

#include "load/scenarios.h"

typedef struct nnp_load_meta {
  const char *command_line, *model, *backend, *backend_version, *options, *note;
  int instances, threads;
} nnp_load_meta;

void nnp_load_print_table(FILE *f, const nnp_load_meta *m, const nnp_load_result *r);
nnp_status nnp_load_write_json(const char *path, const nnp_load_meta *m, const nnp_load_result *r,
                               const nnp_load_pool *startup);

/* One cold start: fresh process to first result, by phase (seconds, -1 if unknown). */
typedef struct nnp_coldstart_sample {
  double spawn_to_ready_s, load_s, first_s, cold_start_s;
} nnp_coldstart_sample;

void nnp_coldstart_print_table(FILE *f, const nnp_load_meta *m, const nnp_coldstart_sample *s, int n);
nnp_status nnp_coldstart_write_json(const char *path, const nnp_load_meta *m, const nnp_coldstart_sample *s, int n);

#endif
