/* Benchmark spec and results: what `nnperf bench` measures and records.
 *
 * One row is one backend x configuration (precision, threads, batch, shape scenario),
 * measured in its own worker process. Raw samples travel with the row; statistics are
 * computed from them by nnp_stats_compute. */
#ifndef NNPERF_BENCH_H
#define NNPERF_BENCH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "nnperf/env.h"
#include "nnperf/result_sections.h"
#include "nnperf/precision.h"
#include "nnperf/stats.h"
#include "nnperf/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NNP_RESULT_SCHEMA_VERSION 1
/* Additions within version 1 (docs/result-schema.md): 1 the load and coldstart
 * documents, 2 "kind", those sections in the common document, latency reservoirs,
 * 3 accuracy.criterion (int8/mixed rows' within_tol judged by cosine and top-1),
 * 4 footprint, energy, device, device_memory, extra_phases, realistic per row,
 * 5 footprint and energy (per output token) on llm and llm-load rows. */
#define NNP_RESULT_SCHEMA_MINOR 5
#define NNP_MAX_PROCESSES 8 /* worker processes per row (--processes) */


/* Timing-loop rules (the same for every backend). */
typedef struct nnp_loop_spec {
  int warmup_min;        /* at least this many warm-up iterations (default 20 ... see below) */
  int warmup_max;        /* at most this many (default 200) */
  int warmup_window;     /* sliding window for the stability test (default 10) */
  double warmup_tol;     /* stable when consecutive window medians differ by < tol (0.02) */
  double warmup_max_time_s; /* ... and at most this long once 2 iterations ran (default 10 s) */
  int iterations;        /* steady-state iterations: at least this many (default 200) */
  double min_time_s;     /* ... and at least this long (default 2 s), whichever is more */
  double max_time_s;     /* hard cap on the steady state (default 60 s); a capped row says so */
} nnp_loop_spec;

void nnp_loop_spec_default(nnp_loop_spec *s);

typedef enum nnp_row_status {
  NNP_ROW_OK = 0,
  NNP_ROW_UNAVAILABLE, /* backend not installed: reason holds the install hint */
  NNP_ROW_UNSUPPORTED, /* backend cannot run this model/precision/shape */
  NNP_ROW_FAILED,      /* worker reported an error */
  NNP_ROW_CRASHED,     /* worker died from a signal */
  NNP_ROW_TIMEOUT,     /* worker exceeded its time limit and was killed */
  NNP_ROW_OOM          /* worker ran out of memory (allocation failure or memory limit) */
} nnp_row_status;
const char *nnp_row_status_name(nnp_row_status s);

typedef struct nnp_accuracy {
  bool compared;         /* false: this row is the reference, or no reference outputs */
  char reference[64];    /* label of the reference row */
  double max_abs, max_rel, cosine;
  double top1, top5;     /* agreement fractions over batch rows; < 0 when not a classifier */
  bool within_tol;       /* the criterion below holds */
  char criterion[64];    /* what within_tol judged, in words (src/bench/accuracy.h): e.g.
                          * "max_rel <= 1e-04" (fp32) or "cosine >= 0.99, ..." (int8);
                          * empty in results of nnperf before it (max_rel per precision) */
} nnp_accuracy;

/* What a worker reports beyond timing (docs/worker-protocol.md: the footprint, energy,
 * device and phase records); -1 or "" where the worker did not say. */
#define NNP_MAX_EXTRA_PHASES 8
typedef struct nnp_row_extras {
  int64_t runtime_bytes;   /* distinct files the worker loaded (mapped; Python: + imported modules) */
  int runtime_files;
  int64_t model_bytes;     /* the model file(s) as this backend loads them */
  double energy_j;         /* joules per inference over the steady state; -1: no counter */
  char energy_source[128]; /* the counter read ("rapl: package-0"), or why none */
  char device[32];         /* where the row ran: "cpu", "cuda:0" */
  char device_info[192];   /* GPU model, driver, clocks of a device row */
  int64_t dev_alloc_peak, dev_reserved_peak; /* the framework allocator's peaks, bytes */
  int64_t dev_process_bytes; /* the process's device memory from NVML */
  int n_phases;            /* phases beyond load/first, e.g. cuda_context (seconds) */
  char phase_name[NNP_MAX_EXTRA_PHASES][24];
  double phase_s[NNP_MAX_EXTRA_PHASES];
  bool realistic;          /* --realistic: fresh input per iteration, host->device copy timed */
} nnp_row_extras;

typedef struct nnp_bench_row {
  /* configuration */
  char backend[32];
  char backend_version[128];
  nnp_precision precision;
  int threads;
  int64_t batch;
  char scenario[160];    /* "static:1x3x224x224" or "dynamic:Nx3x[160..320]x[160..320]" */
  char label[96];        /* "native fp32 t2 b1" for tables */
  /* outcome */
  nnp_row_status status;
  char reason[512];      /* why a row failed; empty for ok rows */
  char note[256];        /* what a reader must know about an ok row (e.g. threads used) */
  int exit_status;       /* worker exit code, -1 if killed */
  int term_signal;       /* signal that ended the worker, 0 if none */
  /* phases, seconds (-1 when not measured) */
  double spawn_to_ready_s; /* process start -> worker ready to load */
  double parse_s, compile_s, load_s; /* load = parse + build/compile */
  double first_s;        /* first (cold) inference */
  double cold_start_s;   /* process start -> first result */
  int warmup_iterations;
  bool warmup_stable;    /* warm-up ended by the stability rule, not the cap */
  /* steady state: samples come from n_processes worker processes in turn, process p
   * contributing process_samples[p] (phases above are the first process's) */
  int n_processes;
  int process_samples[NNP_MAX_PROCESSES];
  double *samples;       /* owned, n_samples seconds */
  int n_samples;
  bool time_capped;      /* steady state stopped at max_time_s before iterations */
  nnp_stats stats;
  double items_per_s;          /* batch / P50 */
  double measured_items_per_s; /* batch * n_samples / sum(samples) */
  /* memory */
  int64_t peak_rss_bytes;  /* getrusage of the worker (ru_maxrss) */
  int64_t vmhwm_bytes;     /* worker's /proc/self/status VmHWM before exit */
  /* outputs of the first and last inference, for accuracy (owned, may be empty) */
  int n_outputs;
  nnp_tensor *first_outputs;
  nnp_tensor *last_outputs;
  nnp_accuracy acc;
  /* --int8-model rows of backends other than native: outputs vs the native int8 row of
   * the same batch and scenario (the same QDQ file), i.e. whether the backend runs the
   * quantization nnperf runs; acc above stays vs native fp32. compared false otherwise. */
  nnp_accuracy int8_agree;
  /* nnperf sweep (docs/sweep.md): where the row ran. hw_class "" for a one-machine run,
   * and then the rest is unset; host_env is that machine's environment, kept per row
   * because a collected sweep holds rows of many machines. */
  char hw_class[48];
  char node[64];
  char job_id[32];       /* Slurm job id, "" when run without Slurm */
  nnp_env host_env;
  /* CPU share (src/bench/cpu_share.c), over the worker processes' lifetimes: their CPU
   * time, wall time, and the average CPUs other processes kept busy meanwhile (-1 unknown) */
  double worker_cpu_s, worker_wall_s, other_cpus;
  nnp_row_extras ext;
} nnp_bench_row;

/* Whether the row's threads competed for cpus CPUs: more threads than CPUs, or threads plus
 * the other work beside the row more than cpus + 0.5. */
int nnp_row_oversubscribed(const nnp_bench_row *row, int cpus);

void nnp_bench_row_free(nnp_bench_row *r);

/* Seeded input values, the same for every backend and easy to reproduce elsewhere
 * (counter-based, so numpy can compute it vectorised): element i of a float tensor is
 *   z = mix64(seed * 0x9E3779B97F4A7C15 + i),  u = (z >> 11) * 2^-53,  x = 2u - 1
 * with mix64 the splitmix64 finaliser; integer and bool tensors are zeros (valid as
 * indices and masks). */
void nnp_fill_seeded(nnp_tensor *t, uint64_t seed);
/* splitmix64's finaliser: the mixing step of the seeded inputs and of dynamic shapes. */
uint64_t nnp_mix64(uint64_t z);

typedef struct nnp_bench_result {
  char model[512];
  char nnperf_version[32];
  char command_line[1024];
  nnp_env env;
  nnp_loop_spec loop;
  uint64_t seed;
  double accuracy_rtol;  /* max_rel tolerance of within_tol when the run measures one precision
                          * judged by max_rel (fp32, fp16); -1 otherwise: several precisions,
                          * or int8/mixed, judged by cosine (each row's acc.criterion) */
  char baseline[96];     /* label of the row speeds are relative to */
  bool allow_mixed;      /* rank rows that differ in precision or threads */
  bool noisy;            /* CV or machine load high: results flagged */
  int n_rows, cap_rows;
  nnp_bench_row *rows;
  /* nnperf load / nnperf coldstart: their section (owned, NULL for a bench run). Such a
   * run has one row: the backend configuration, its worker's start-up, no samples. */
  nnp_load_section *load;
  nnp_coldstart_section *coldstart;
  /* nnperf llm bench: its section (owned, NULL otherwise; nnperf/llm_bench.h). Each of
   * rows[i] mirrors llm->rows[i]'s configuration and outcome (backend, threads, label,
   * status, phases, memory; batch = concurrency; no samples), so the sweep runner,
   * resume and history treat LLM rows as rows; the measurements live in the section. */
  struct nnp_llm_result *llm;
  /* nnperf llm load: its section (owned, NULL otherwise; src/llm/llm_load_result.h), rows
   * mirrored as for llm (no samples: each row's requests live in the section). */
  struct nnp_llm_load_result *llm_load;
} nnp_bench_result;

/* "bench", "load", "coldstart", "llm" or "llm-load": which section the result carries. */
const char *nnp_result_kind(const nnp_bench_result *r);

void nnp_bench_result_free(nnp_bench_result *r);

#ifdef __cplusplus
}
#endif
#endif
