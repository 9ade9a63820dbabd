/* nnperf command-line interface: one file per subcommand, shared option handling here. */
#ifndef NNP_CLI_CLI_H
#define NNP_CLI_CLI_H

#include <stdbool.h>
#include <stdint.h>

#include "nnperf/engine.h"
#include "nnperf/ir.h"
#include "nnperf/status.h"

/* Exit codes: 0 success, 1 the model or data is at fault (clear error printed),
 * 2 the command line is wrong. */
enum { CLI_OK = 0, CLI_FAIL = 1, CLI_USAGE = 2 };

int nnp_cmd_run(int argc, char **argv);
int nnp_cmd_inspect(int argc, char **argv);
int nnp_cmd_zoo(int argc, char **argv);
int nnp_cmd_bench(int argc, char **argv);
int nnp_cmd_backends(int argc, char **argv);
int nnp_cmd_report(int argc, char **argv);
int nnp_cmd_history(int argc, char **argv);
int nnp_cmd_compare(int argc, char **argv);
int nnp_cmd_quantize(int argc, char **argv);
int nnp_cmd_explain(int argc, char **argv);
int nnp_cmd_load(int argc, char **argv);
int nnp_cmd_coldstart(int argc, char **argv);
int nnp_cmd_advise(int argc, char **argv);
int nnp_cmd_llm(int argc, char **argv);
int nnp_cmd_sweep(int argc, char **argv);
int nnp_cmd_llm_load(int argc, char **argv); /* argv[0] is "load" (nnperf llm load) */
int nnp_cmd_convert(int argc, char **argv);

/* Prints "nnperf: error: <last error>" (one line) and returns CLI_FAIL. */
int cli_fail(const char *what);
/* SIGINT and SIGTERM ask the sweep under way to stop (nnp_sweep_interrupt): the worker
 * being measured is killed, finished rows are kept and written. */
void cli_stop_on_signals(void);
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Options every model-taking command shares. */
typedef struct cli_model_opts {
  const char *model;      /* path to .onnx, or zoo:NAME for a built-in model */
  int64_t batch;          /* binds each input's symbolic first dimension; 0 = not given */
  nnp_plan_options plan;
} cli_model_opts;

void cli_model_opts_init(cli_model_opts *o);
/* Consumes one shared option at argv[*i] (advancing *i past its value). Returns 1 if
 * consumed, 0 if not a shared option, -1 on a malformed value (message printed). */
int cli_model_option(cli_model_opts *o, const char *cmd, int argc, char **argv, int *i);
/* Text for --help of the shared options. */
extern const char cli_model_options_help[];

/* Loads o->model (file or zoo:NAME) into a new graph. */
nnp_status cli_load_graph(const cli_model_opts *o, nnp_graph **out);
/* Applies --batch to the plan options for graph g (symbolic first dims). */
void cli_apply_batch(cli_model_opts *o, const nnp_graph *g);

/* Parses "1x3x224x224" (rank 0 as "scalar"). */
bool cli_parse_dims(const char *s, int *rank, int64_t *dims);
double cli_now(void); /* seconds, CLOCK_MONOTONIC */

#endif
