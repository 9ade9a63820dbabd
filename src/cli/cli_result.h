/* Where report and compare get a result from: a result JSON file or a history run id. */
#ifndef NNP_CLI_CLI_RESULT_H
#define NNP_CLI_CLI_RESULT_H

#include <stddef.h>

#include "nnperf/bench.h"
#include "nnperf/status.h"

/* spec: a path to a result JSON, or a history run id ("12", "@12" or "history:12"; a
 * file of that name wins over the id). history_path NULL: the default history. */
nnp_status cli_load_result(const char *spec, const char *history_path, nnp_bench_result *out);

/* Parses a history id ("12", "@12", "history:12"); 0 when spec is not one. */
int cli_history_id(const char *spec, long long *id);

/* Stores r in the history (history_path, else the default database) and says so on
 * stderr unless quiet; a failure is a warning: the measurement's exit status stands. */
void cli_store_history(const nnp_bench_result *r, const char *history_path, int quiet);

/* The exit-status rule (README, "Exit status") for a finished bench: rows of backends named
 * with --backends that are unavailable are said plainly on stderr; when no row ran, 1
 * (nothing asked for could run); otherwise rc unchanged. */
int cli_asked_could_run(const nnp_bench_result *r, int explicit_backends, int rc);

#endif
