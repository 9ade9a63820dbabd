/* The parent side: one benchmark row = one fresh worker process with a time limit.
 * Whatever happens to the worker (error, crash, hang, out of memory) becomes the row's
 * status and reason; the parent itself never fails because of it. */
#ifndef NNP_BENCH_ORCHESTRATOR_H
#define NNP_BENCH_ORCHESTRATOR_H

#include <stdio.h>

#include "bench/worker_proc.h"
#include "nnperf/bench.h"

typedef struct nnp_row_request {
  const char *worker_exe;   /* the nnperf binary, run as `nnperf __worker` ... */
  const char *const *external_argv; /* ... or this external worker command (NULL-terminated) */
  const char *pythonpath;   /* PYTHONPATH for an external Python worker, or NULL */
  const char *backend;
  const char *model_path;
  const char *options;      /* backend options, may be "" */
  nnp_precision precision;
  int threads;
  int64_t batch;
  const char *scenario;
  int n_inputs;
  const nnp_tensor *inputs; /* identical for every backend; the dynamic one is not sent */
  int dyn_input;            /* dynamic-shape scenario: input index, -1 when static */
  const char *dyn_dims;     /* e.g. "1x3x[160..320]x[160..320]" */
  const char *const *input_names;
  nnp_loop_spec loop;
  uint64_t seed;
  double timeout_s;         /* wall-clock limit for the whole worker */
  long long mem_limit;      /* RLIMIT_AS for the worker, 0 = none */
  int pin_cpus;             /* > 0: pin the worker to CPUs 0..pin_cpus-1 */
  int serve;                /* serve mode (docs/worker-protocol.md): requests on stdin after the spec */
  int streams;              /* serve mode: requests the worker may run at once (0 or 1: one) */
  const char *device;       /* "cuda:0" etc. for rows that run on a device; NULL or "cpu": the CPU */
  int realistic;            /* fresh input per iteration, written and copied inside the timed region */
} nnp_row_request;

/* Starts one worker for req in its own process group (pinned, with the environment an
 * external worker needs, nnp_worker_start) and writes the spec: the spawn path of bench,
 * load and coldstart. */
nnp_status nnp_worker_spawn(const nnp_row_request *req, nnp_worker_proc *p);

typedef void (*nnp_progress_fn)(void *ud, const char *phase, int done, int total);

/* Fills a row's configuration (backend, precision, threads, batch, scenario, label) from
 * req, with every measurement unset; used for rows that never reach a worker as well. */
void nnp_row_init(const nnp_row_request *req, nnp_bench_row *row);
/* The records beyond timing that every worker may send (docs/worker-protocol.md):
 * "footprint RUNTIME_BYTES FILES MODEL_BYTES", "energy JOULES COUNT SOURCE" (energy_j is
 * JOULES / COUNT: per inference for a CNN row, per output token for an LLM row), "device",
 * "device_memory", "phase". 1 when line was one of them. */
int nnp_row_extras_record(nnp_row_extras *x, const char *line);
/* Every extra unknown (-1, ""), device "cpu". */
void nnp_row_extras_init(nnp_row_extras *x);

/* Runs one row in one worker process. Fills *row completely (the caller frees it with
 * nnp_bench_row_free); returns NNP_OK unless the parent could not even start a worker. */
nnp_status nnp_run_row(const nnp_row_request *req, nnp_bench_row *row, nnp_progress_fn progress, void *ud);

/* nnp_run_row with no warm-up and a single inference, not a measurement: for the
 * reference outputs a resumed sweep needs, or to fill a plan cache before a row. */
nnp_status nnp_run_row_once(const nnp_row_request *req, nnp_bench_row *row);

/* Runs one row in `processes` worker processes one after another, each measuring its
 * share of the steady state (iterations and times divided), and pools the samples. The
 * statistics' confidence intervals then include the spread between processes, which on
 * a shared machine is far larger than the spread within one (placement, frequency,
 * neighbours). Phases are the first process's; memory is the largest. A failure of any
 * process makes the row fail with that process's reason. */
nnp_status nnp_run_row_processes(const nnp_row_request *req, int processes, nnp_bench_row *row,
                                 nnp_progress_fn progress, void *ud);

#endif
