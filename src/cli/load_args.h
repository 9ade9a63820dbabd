/* Option values shared by nnperf load and nnperf coldstart. */
#ifndef NNP_CLI_LOAD_ARGS_H
#define NNP_CLI_LOAD_ARGS_H

#include <stddef.h>

/* "10ms", "2s", "500us" or a bare number of seconds; 1 on success. */
int cli_parse_duration(const char *s, double *seconds);
/* The command line as one string, for the result's command_line. */
void cli_join_args(int argc, char **argv, char *out, size_t n);

#endif
