/* Per-step time profile of a compiled plan (see step_profile.h). Each step is timed on
 * its own, outside any timing loop: the clock reads around every step would inflate an
 * end-to-end latency, so the profile is a breakdown, never a headline number. */
#include "cli/step_profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/timing_loop.h"
#include "kernels/dispatch.h"
#include "util/json_write.h"

/* The row of (op, kernel) in rows[0..*n), added when new; NULL when the table is full
 * (the step still counts in the totals). */
static step_profile_row *row_for(step_profile_row *rows, int *n, const char *op, const char *kernel) {
  for (int i = 0; i < *n; i++)
    if (!strcmp(rows[i].op, op) && !strcmp(rows[i].kernel, kernel)) return &rows[i];
  if (*n == STEP_PROFILE_ROWS) return NULL;
  step_profile_row *r = &rows[(*n)++];
  memset(r, 0, sizeof *r);
  snprintf(r->op, sizeof r->op, "%s", op);
  snprintf(r->kernel, sizeof r->kernel, "%s", kernel);
  return r;
}

static void add_step(step_profile *pr, const char *op, const char *kernel, double dt, bool first_run) {
  step_profile_row *rows[2] = {row_for(pr->ops, &pr->n_ops, op, ""),
                               row_for(pr->kernels, &pr->n_kernels, op, kernel)};
  for (int k = 0; k < 2; k++)
    if (rows[k]) {
      rows[k]->seconds += dt;
      if (first_run) rows[k]->count++;
    }
  const bool to = !strcmp(op, "ToBlocked"), from = !strcmp(op, "FromBlocked");
  if (to || from) pr->reorder_seconds += dt;
  if (first_run) {
    pr->to_blocked += to;
    pr->from_blocked += from;
  }
  if (!strcmp(kernel, "reference")) {
    pr->reference_seconds += dt;
    if (first_run) pr->reference_steps++;
  }
  pr->total_seconds += dt;
}

nnp_status step_profile_measure(nnp_plan *p, int runs, step_profile *pr) {
  memset(pr, 0, sizeof *pr);
  const int steps = nnp_plan_num_steps(p);
  NNP_TRY(nnp_plan_run(p)); /* untimed: first touch of the arena and scratch */
  for (int it = 0; it < runs; it++)
    for (int s = 0; s < steps; s++) {
      double t0 = nnp_now();
      NNP_TRY(nnp_plan_run_step(p, s));
      double dt = nnp_now() - t0;
      add_step(pr, nnp_plan_step_node(p, s)->op_type, nnp_plan_step_kernel(p, s), dt, it == 0);
    }
  pr->runs = runs;
  return NNP_OK;
}

static int by_time_desc(const void *a, const void *b) {
  double x = ((const step_profile_row *)a)->seconds, y = ((const step_profile_row *)b)->seconds;
  return x < y ? 1 : x > y ? -1 : 0;
}

static double ms_per_run(const step_profile *pr, double s) { return pr->runs ? s / pr->runs * 1e3 : 0.0; }
static double share(const step_profile *pr, double s) {
  return pr->total_seconds > 0 ? 100.0 * s / pr->total_seconds : 0.0;
}

void step_profile_print(const step_profile *pr) {
  step_profile_row ops[STEP_PROFILE_ROWS], kernels[STEP_PROFILE_ROWS];
  memcpy(ops, pr->ops, sizeof ops);
  memcpy(kernels, pr->kernels, sizeof kernels);
  qsort(ops, (size_t)pr->n_ops, sizeof *ops, by_time_desc);
  qsort(kernels, (size_t)pr->n_kernels, sizeof *kernels, by_time_desc);
  printf("\nper op type (each step timed alone, %d runs, %.3f ms/run in all)\n%-26s %6s %10s %7s\n", pr->runs,
         ms_per_run(pr, pr->total_seconds), "op type", "count", "ms/run", "share");
  for (int o = 0; o < pr->n_ops; o++)
    printf("%-26s %6d %10.3f %6.1f%%\n", ops[o].op, ops[o].count, ms_per_run(pr, ops[o].seconds),
           share(pr, ops[o].seconds));
  printf("\nper kernel\n%-26s %-34s %6s %10s %7s\n", "op type", "kernel", "count", "ms/run", "share");
  for (int o = 0; o < pr->n_kernels; o++)
    printf("%-26s %-34s %6d %10.3f %6.1f%%\n", kernels[o].op, kernels[o].kernel, kernels[o].count,
           ms_per_run(pr, kernels[o].seconds), share(pr, kernels[o].seconds));
  printf("\nlayout conversions  %d ToBlocked + %d FromBlocked, %.3f ms/run (%.1f%%)\n", pr->to_blocked,
         pr->from_blocked, ms_per_run(pr, pr->reorder_seconds), share(pr, pr->reorder_seconds));
  printf("reference kernels   %d steps, %.3f ms/run (%.1f%%)\n", pr->reference_steps,
         ms_per_run(pr, pr->reference_seconds), share(pr, pr->reference_seconds));
  char table[512];
  nnp_cpu_dispatch_describe(nnp_cpu_dispatch_get(), table, sizeof table);
  printf("kernel dispatch     %s\n", table); /* what the kernel names above were picked from */
}

static void rows_json(const char *key, const step_profile *pr, const step_profile_row *rows, int n, bool kernel) {
  printf(", \"%s\": [", key);
  for (int o = 0; o < n; o++) {
    printf("%s{\"op\": ", o ? ", " : "");
    nnp_json_string(stdout, rows[o].op);
    if (kernel) {
      printf(", \"kernel\": ");
      nnp_json_string(stdout, rows[o].kernel);
    }
    printf(", \"count\": %d, \"seconds_per_run\": ", rows[o].count);
    nnp_json_number(stdout, pr->runs ? rows[o].seconds / pr->runs : 0.0);
    printf("}");
  }
  printf("]");
}

void step_profile_json(const step_profile *pr) {
  printf("\"profile_runs\": %d", pr->runs);
  rows_json("op_types", pr, pr->ops, pr->n_ops, false);
  rows_json("kernels", pr, pr->kernels, pr->n_kernels, true);
  printf(", \"layout_conversions\": {\"to_blocked\": %d, \"from_blocked\": %d, \"seconds_per_run\": ",
         pr->to_blocked, pr->from_blocked);
  nnp_json_number(stdout, pr->runs ? pr->reorder_seconds / pr->runs : 0.0);
  printf("}, \"reference_steps\": {\"count\": %d, \"seconds_per_run\": ", pr->reference_steps);
  nnp_json_number(stdout, pr->runs ? pr->reference_seconds / pr->runs : 0.0);
  printf("}");
}
