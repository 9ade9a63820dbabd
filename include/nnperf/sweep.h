/* The sweep library: one spec, one function that runs it into result rows.
 *
 * A sweep is the cross product of its axes (backends x precisions x batches x threads,
 * or a workload's own axes), one row per point, each row measured in fresh worker
 * processes (src/bench/orchestrator.h). `nnperf bench`, `advise`, `explain` and `load`
 * build a spec and call nnp_sweep_run; nothing goes through an argv or a temporary file.
 *
 * What a row measures is the workload's business (nnp_sweep_workload): the inference
 * workload (nnp_sweep_inference, the rows of `nnperf bench`) is built in; another kind
 * (LLM generation: backends x threads x prompt length x concurrency) plugs in its own
 * vtable and its own axes through spec->workload_args. The runner owns what every kind
 * shares: the row order, resume, interruption, the per-row callbacks, the noisy flag.
 *
 * Every row has a stable identity, its key (nnp_sweep_row_key): the configuration that
 * makes it, not its position, so a plan split over machines or resumed after a crash
 * finds its finished rows by key. */
#ifndef NNPERF_SWEEP_H
#define NNPERF_SWEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nnperf/bench.h"
#include "nnperf/engine.h"
#include "nnperf/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NNP_SWEEP_MAX_AXIS 16 /* values per axis (backends, precisions, batches, threads) */
#define NNP_SWEEP_KEY_MAX 256 /* bytes of a row key, terminator included */

struct nnp_sweep_spec;

/* Progress of the row being measured: row is 1-based of n_rows; phase is "start", "load",
 * "warmup", "measure", ...; done/total count iterations where known (total 0: unknown). */
typedef void (*nnp_sweep_progress_fn)(void *ud, int row, int n_rows, const char *label, const char *phase, int done,
                                      int total);
/* A row is final in res->rows[index] (run now, or kept from the resumed result when kept
 * is true). Called once per row in order: the place for an atomic write of the whole
 * document so far (nnp_result_write_file), so an interrupted sweep loses at most the row
 * under way. */
typedef void (*nnp_sweep_row_fn)(void *ud, const nnp_bench_result *res, int index, bool kept);

/* One kind of row. The runner calls open once, then for each row index in order:
 * plan_row (configuration only), then either takes the resumed row with the same key
 * (and calls resume_row) or run_row, then finish_row with the row in place; close at
 * the end. Every function returns NNP_OK unless the sweep cannot go on (a row that fails
 * is a row with a failed status, not an error). */
typedef struct nnp_sweep_workload {
  const char *kind; /* "bench" (the result document's kind), "llm", ... */
  /* Reads the spec (and spec->workload_args), loads what every row shares (the model, the
   * inputs, backend availability), fixes the row list and fills what the workload owns
   * of the result's header (the inference workload: accuracy_rtol; another kind: its
   * section). *state is the workload's. */
  nnp_status (*open)(const struct nnp_sweep_spec *spec, nnp_bench_result *res, void **state);
  int (*n_rows)(void *state);
  /* Fills row index's configuration (backend, precision, threads, batch, scenario, label),
   * every measurement unset: its key is then nnp_sweep_row_key(row). */
  nnp_status (*plan_row)(void *state, int index, nnp_bench_row *row);
  /* Measures row index into *row (planned by plan_row), reporting progress. */
  nnp_status (*run_row)(void *state, int index, nnp_bench_row *row, nnp_sweep_progress_fn progress, void *ud);
  /* A row kept from the resumed result: whatever later rows need of it that the document
   * does not hold (the inference workload: the reference row's outputs). May be NULL. */
  nnp_status (*resume_row)(void *state, int index, nnp_bench_row *row);
  /* The row is res->rows[index]: cross-row work (accuracy against the reference row,
   * notes, unique labels). May be NULL. */
  void (*finish_row)(void *state, nnp_bench_result *res, int index, bool kept);
  void (*close)(void *state);
} nnp_sweep_workload;

/* The built-in workload: one inference row per backend x precision x batch x threads
 * (x variant, where the spec has variants). */
extern const nnp_sweep_workload nnp_sweep_inference;

/* One configuration of a backend beyond the axes: `nnperf explain`'s ablation rungs (the
 * native engine with passes, memory plan, kernels, lanes switched one by one). */
typedef struct nnp_sweep_variant {
  const char *name;    /* added to the row's label, so to its key: "+fusion" */
  const char *options; /* appended to the row's backend options (later ones win); or NULL */
  int threads;         /* > 0: the row's threads, in place of the threads axis */
} nnp_sweep_variant;

#define NNP_SWEEP_MAX_VARIANTS 256

typedef struct nnp_sweep_spec {
  const nnp_sweep_workload *workload; /* NULL: nnp_sweep_inference */
  const void *workload_args;          /* another workload's own axes and settings; NULL here */
  /* what to run */
  const char *model;                  /* an .onnx file or zoo:NAME, as the user gave it */
  const char *command_line;           /* recorded in the result; may be NULL */
  int n_backends;                     /* 0: every backend that is not hidden */
  const char *backends[NNP_SWEEP_MAX_AXIS];
  int n_precisions;                   /* 0: fp32 */
  nnp_precision precisions[NNP_SWEEP_MAX_AXIS];
  int n_batches;                      /* 0: batch 1 */
  int64_t batches[NNP_SWEEP_MAX_AXIS];
  int n_threads;                      /* 0: every CPU this process may run on */
  int threads[NNP_SWEEP_MAX_AXIS];
  const char *static_shape;           /* "1x3x224x224": the first input's shape (overrides batches); or NULL */
  const char *dynamic_shape;          /* "Nx3x[160..320]x[160..320]": drawn per iteration; or NULL */
  nnp_plan_options plan;              /* input bindings (--dim, --shape NAME:DIMS) and the native
                                       * engine's passes / memory plan (sent as its options) */
  const char *backend_options;        /* "B:K=V,...": options for backend B; or NULL */
  const char *cache_dir;              /* native plan cache (torch-compile: DIR/inductor): each native and
                                       * torch-compile row gets a warm-cache twin; or NULL */
  const char *torch_model;            /* MODULE:FACTORY for the torch rows; or NULL */
  const char *int8_model;             /* the int8 rows run this QDQ file; or NULL */
  /* every point of the axes above runs once per variant, variant by variant (the outermost
   * axis: all of variant 0's rows come first); 0: no variants */
  int n_variants;
  const nnp_sweep_variant *variants;
  const char *device;                 /* "cuda[:N]": where the torch rows run; NULL or "cpu": the CPU */
  bool realistic;                     /* each row gets a twin with a fresh input per iteration */
  /* how to measure */
  nnp_loop_spec loop;
  uint64_t seed;                      /* inputs and bootstrap */
  int processes;                      /* worker processes per row, 1..NNP_MAX_PROCESSES */
  double timeout_s;                   /* per worker */
  int64_t mem_limit_bytes;            /* per worker; 0: none */
  bool pin;                           /* pin workers to CPUs 0..threads-1 */
  /* how to rank (recorded in the result for the table) */
  const char *baseline;               /* label of the row speeds are relative to; NULL: the first ok row */
  bool allow_mixed;
  /* resume: the finished rows of an earlier run of the same spec (read with
   * nnp_result_read_file); resume_name labels its errors. NULL: start afresh. */
  const nnp_bench_result *resume;
  const char *resume_name;
  /* false: spec->resume's rows are this sweep's first rows, in order (bench --resume);
   * true: any of this sweep's rows, each found by its key (a sweep plan's results folder,
   * whose ok rows are kept wherever they sit in the row order) */
  bool resume_by_key;
  /* callbacks (each may be NULL), called on the calling thread */
  nnp_sweep_progress_fn progress;
  nnp_sweep_row_fn row_done;
  void *ud;
} nnp_sweep_spec;

/* Defaults: everything 0/NULL but the loop (nnp_loop_spec_default), the plan options
 * (nnp_plan_options_default), seed 1, 3 processes, timeout 600 s. */
void nnp_sweep_spec_default(nnp_sweep_spec *spec);

/* What happened beyond the rows. */
typedef struct nnp_sweep_outcome {
  int n_planned;      /* rows the spec makes */
  int n_kept;         /* rows taken from spec->resume */
  bool resume_refused;/* spec->resume does not match the spec (the error names the difference) */
  bool interrupted;   /* nnp_sweep_interrupt (SIGINT/SIGTERM): the rows after it did not run */
  bool any_failed;    /* a row failed, crashed, timed out or ran out of memory */
} nnp_sweep_outcome;

/* Runs spec into *res (initialised here; free with nnp_bench_result_free even on error):
 * the run's model, environment, loop, seed and one row per point, in the spec's order.
 * Returns an error (naming the file, field or input at fault) for a spec that cannot run
 * (the model does not load, an input shape does not resolve) or a resumed result that
 * does not match it (outcome->resume_refused); then *res holds no rows. NNP_OK otherwise,
 * whatever the rows' outcomes. A row is complete when it is ok from spec->processes
 * processes, or not ok for a reason of its own; an incomplete row of an interrupted sweep
 * is left out, so a resume runs it again. */
nnp_status nnp_sweep_run(const nnp_sweep_spec *spec, nnp_bench_result *res, nnp_sweep_outcome *outcome);

/* Asks a running sweep to stop: the worker under way is killed, no further row starts.
 * Safe from a signal handler. */
void nnp_sweep_interrupt(void);

/* The row's identity: "backend=native precision=fp32 threads=2 batch=1
 * scenario=static:1x3x224x224" plus " variant=LABEL-SUFFIX" for rows that differ
 * otherwise (the plan-cache twin). Stable across versions: plans and resumes match
 * rows by it. Truncation (never with NNP_SWEEP_KEY_MAX bytes) is an NNP_ERR_LIMIT. */
nnp_status nnp_sweep_row_key(const nnp_bench_row *row, char *key, size_t n);

/* The index of the row of res whose key is key; -1 if none. */
int nnp_sweep_find_row(const nnp_bench_result *res, const char *key);

#ifdef __cplusplus
}
#endif
#endif
