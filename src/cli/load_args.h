/* Option values shared by nnperf load and nnperf coldstart. */
#ifndef NNP_CLI_LOAD_ARGS_H
#define NNP_CLI_LOAD_ARGS_H

#include <stddef.h>

#include "load/target.h"

/* "10ms", "2s", "500us" or a bare number of seconds; 1 on success. */
int cli_parse_duration(const char *s, double *seconds);
/* The command line as one string, for the result's command_line. */
void cli_join_args(int argc, char **argv, char *out, size_t n);

/* Whole-number option value in [lo, hi]; 1 on success. */
int cli_want_int(const char *v, long long lo, long long hi, long long *out);

/* The options both commands pass to nnp_load_target_open: --backend, --backend-options,
 * --threads, --seed and --timeout, with the same ranges and messages in both. Returns 0
 * when a is none of them; otherwise 1, with *rc CLI_OK or the usage error printed for
 * cmd ("load", "coldstart"). */
int cli_load_target_option(const char *cmd, const char *a, const char *val, nnp_load_target_options *to, int *rc);

#endif
