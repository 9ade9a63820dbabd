/* Where a compiled plan's time goes: each step timed alone, summed per op type and per
 * (op type, kernel), with the layout conversions (ToBlocked / FromBlocked) and the steps
 * that run the reference kernel counted apart. Shared by `explain --profile` (the last
 * rung) and `inspect --profile` (the plan as configured). */
#ifndef NNP_CLI_STEP_PROFILE_H
#define NNP_CLI_STEP_PROFILE_H

#include "nnperf/engine.h"
#include "nnperf/status.h"

#define STEP_PROFILE_ROWS 96

typedef struct step_profile_row {
  char op[48];     /* copies: the plan is gone when the tables print */
  char kernel[48]; /* empty in the per-op-type table */
  int count;       /* steps per run */
  double seconds;  /* summed over the profiled runs */
} step_profile_row;

typedef struct step_profile {
  int runs;
  int n_ops, n_kernels;
  step_profile_row ops[STEP_PROFILE_ROWS], kernels[STEP_PROFILE_ROWS];
  int to_blocked, from_blocked; /* conversion steps per run */
  double reorder_seconds;
  int reference_steps; /* steps per run without a fast kernel */
  double reference_seconds;
  double total_seconds;
} step_profile;

/* Runs plan p step by step `runs` times (after one untimed run that warms caches and
 * the thread pool), timing every step. Inputs must already hold data. */
nnp_status step_profile_measure(nnp_plan *p, int runs, step_profile *out);
/* Both tables, most time first, and the conversion / reference summary. */
void step_profile_print(const step_profile *pr);
/* The profile's fields as JSON members (no braces): "profile_runs": ..., "op_types": [...],
 * "kernels": [...], "layout_conversions": {...}, "reference_steps": {...}. */
void step_profile_json(const step_profile *pr);

#endif
