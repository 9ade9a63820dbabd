/* A sweep plan: one JSON file (schema: docs/sweep.md) that says what to measure (models x
 * backends x precisions x batches x threads x shape scenarios, the loop settings) and on
 * which hardware classes (Slurm partitions and/or constraints). `nnperf sweep PLAN` runs
 * it here; `--slurm` submits one job per hardware class and model x shape group. Each
 * group maps onto one nnp_sweep_spec (nnperf/sweep.h): the plan adds no scheduler. */
#ifndef NNPERF_SWEEP_PLAN_H
#define NNPERF_SWEEP_PLAN_H

#include <stdint.h>

#include "nnperf/sweep.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NNP_PLAN_MAX_LIST 16
#define NNP_PLAN_MAX_CLASSES 16

typedef struct nnp_plan_hw_class {
  char name[48];       /* names the class in results and reports ("cpu-icelake") */
  char partition[64];  /* sbatch -p; "" for the cluster's default */
  char constraint[128];/* sbatch -C (node features); "" for none */
} nnp_plan_hw_class;

/* The plan's LLM rows (docs/sweep.md, "llm"): each GGUF model is one group of rows,
 * backends x threads x prompt lengths x concurrency, measured as `nnperf llm bench`
 * measures them (the sweep library's LLM workload). Lists left empty take that command's
 * defaults; threads the plan's threads. */
typedef struct nnp_plan_llm {
  int n_models;        /* 0: the plan has no LLM rows */
  char models[NNP_PLAN_MAX_LIST][1024]; /* GGUF paths, relative ones resolved against the plan's folder */
  int n_backends;      /* 0: every LLM backend (nnperf backends) */
  char backends[NNP_PLAN_MAX_LIST][32];
  int n_threads;       /* 0: the plan's "threads" (none: every CPU the job may use) */
  int threads[NNP_PLAN_MAX_LIST];
  int n_prompt_lengths;
  int prompt_lengths[NNP_PLAN_MAX_LIST];
  int gen_length;      /* 0: not given */
  int n_concurrency;
  int concurrency[NNP_PLAN_MAX_LIST];
  int requests, warmup;/* per row; -1: not given */
  char options[256];   /* "BACKEND:K=V,...;BACKEND:..." as llm bench's --backend-options */
} nnp_plan_llm;

typedef struct nnp_sweep_plan {
  char path[1024];     /* the plan file */
  char name[64];
  char results[1024];  /* shared results folder (absolute or relative to the plan's folder) */
  int n_models;
  char models[NNP_PLAN_MAX_LIST][512];
  int n_backends;
  char backends[NNP_PLAN_MAX_LIST][32];
  int n_precisions;
  nnp_precision precisions[NNP_PLAN_MAX_LIST];
  int n_batches;
  int64_t batches[NNP_PLAN_MAX_LIST];
  int n_threads;
  int threads[NNP_PLAN_MAX_LIST];
  int n_shapes;        /* 0: each model's own input shapes */
  char shapes[NNP_PLAN_MAX_LIST][160]; /* "static:DIMS" or "dynamic:DIMS" */
  nnp_loop_spec loop;
  int processes;
  double timeout_s;
  int64_t mem_limit_mib; /* per worker, 0: none */
  uint64_t seed;
  int n_classes;
  nnp_plan_hw_class classes[NNP_PLAN_MAX_CLASSES];
  int64_t job_mem_mib;   /* slurm.mem_mib: sbatch --mem; 0: derived (see nnp_plan_job_mem_mib) */
  double job_margin_s;   /* slurm.time_margin_s: added to each job's time limit (default 120) */
  char nnperf_exe[1024]; /* slurm.nnperf: the nnperf binary on the nodes; "": this one */
  nnp_plan_llm llm;
} nnp_sweep_plan;

/* Reads and checks a plan: malformed JSON, an unknown field, an unknown backend or
 * precision, a bad shape or an empty axis each give NNP_ERR_INVALID naming the file and
 * the field. Partitions are checked against Slurm by `nnperf sweep --slurm` itself. */
nnp_status nnp_plan_load(const char *path, nnp_sweep_plan *plan);

/* Groups: model x shape scenario, then one per LLM model (one spec, one Slurm job per
 * hardware class each). */
int nnp_plan_n_groups(const nnp_sweep_plan *plan);
/* Whether group g is an LLM group (after the CNN groups), and its model either way. */
int nnp_plan_group_is_llm(const nnp_sweep_plan *plan, int g);
const char *nnp_plan_group_model(const nnp_sweep_plan *plan, int g);
/* Fills spec (after nnp_sweep_spec_default) with CNN group g's axes and the plan's loop
 * settings; callbacks and resume are the caller's. Pointers refer into plan. LLM groups:
 * nnp_plan_llm_group_spec (src/cluster/plan_llm.h). */
void nnp_plan_group_spec(const nnp_sweep_plan *plan, int g, nnp_sweep_spec *spec);
/* Rows of group g: backends x precisions x batches x threads (a static shape fixes the
 * batch); an LLM group: backends x threads x prompt lengths x concurrency. */
int nnp_plan_group_rows(const nnp_sweep_plan *plan, int g);

/* Job limits derived from the plan: minutes for n_rows rows of group g (each process of
 * each row at most warm-up cap + steady-state cap + start-up, never more than the worker
 * timeout; an LLM row, which no loop cap bounds, the worker timeout; plus the margin),
 * memory in MiB (slurm.mem_mib, else the worker limit + 1 GiB, else 4 GiB). */
int nnp_plan_job_minutes(const nnp_sweep_plan *plan, int g, int n_rows);
int64_t nnp_plan_job_mem_mib(const nnp_sweep_plan *plan);

/* The results folder resolved against the plan's folder, into out. */
void nnp_plan_results_dir(const nnp_sweep_plan *plan, char *out, size_t n);

#ifdef __cplusplus
}
#endif
#endif
