/* Each step of a compiled native plan timed alone: for ROUNDS rounds every step runs in
 * plan order under its own clock, and the best and the median of each step are printed
 * with the step's input/weight/output channels and planes (blocked values: C counts
 * 16-channel blocks), its GFLOP/s and its kernel; then the
 * sums, and the whole run (ROUNDS more runs, min and median). Used to compare the
 * native engine layer by layer with ONNX Runtime's profile and to A/B two builds: the
 * best of each step is far steadier than a whole-model P50 on a shared machine. Not a
 * test. Usage: bench_plan_steps MODEL.onnx [THREADS] [ROUNDS] [BATCH: the symbolic batch
 * dimension's value, default 1]; BENCH_STEPS_HOT=1 times each step as the best of five
 * back-to-back runs (its data hot in cache). */
#include <stdio.h>
#include <stdlib.h>

#include "bench/timing_loop.h"
#include "nnperf/alloc.h"
#include "nnperf/bench.h"
#include "nnperf/cost.h"
#include "nnperf/engine.h"
#include "nnperf/onnx.h"

static long long dim(const nnp_tensor *t, int i) { return t && t->rank > i ? (long long)t->dims[i] : 0; }

static int cmp(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s MODEL.onnx [THREADS] [ROUNDS] [BATCH]\n", argv[0]);
    return 2;
  }
  const int rounds = argc > 3 ? atoi(argv[3]) : 15;
  nnp_plan_options o;
  nnp_plan_options_default(&o);
  o.threads = argc > 2 ? atoi(argv[2]) : 1;
  o.default_dim = argc > 4 ? atoll(argv[4]) : 1;
  nnp_graph *g = NULL;
  nnp_plan *p = NULL;
  if (rounds < 1 || o.default_dim < 1 || nnp_onnx_load(argv[1], NULL, &g) != NNP_OK || nnp_plan_compile(g, &o, &p) != NNP_OK) {
    fprintf(stderr, "bench_plan_steps: %s\n", rounds < 1 || o.default_dim < 1 ? "ROUNDS and BATCH must be >= 1" : nnp_last_error());
    return 1;
  }
  for (int i = 0; i < nnp_plan_num_inputs(p); i++) nnp_fill_seeded(nnp_plan_input(p, i), 1);
  for (int w = 0; w < 3; w++) nnp_plan_run(p);
  const int ns = nnp_plan_num_steps(p);
  double *t = nnp_malloc((size_t)ns * (size_t)rounds * sizeof(double));
  if (!t) return 1;
  /* BENCH_STEPS_HOT=1: each step timed as the best of 5 runs back to back, its data hot
   * in cache; beside the plain run it shows which steps lose time to memory in a whole run */
  const int reps = getenv("BENCH_STEPS_HOT") ? 5 : 1;
  for (int r = 0; r < rounds; r++)
    for (int s = 0; s < ns; s++) {
      t[s * rounds + r] = 1e30;
      for (int k = 0; k < reps; k++) {
        const double t0 = nnp_now();
        nnp_plan_run_step(p, s);
        const double dt = nnp_now() - t0;
        if (dt < t[s * rounds + r]) t[s * rounds + r] = dt;
      }
    }
  /* the rounds' own sums: the steps run back to back as in a whole run, only timed one
   * by one, so a whole run well above the best round says the time goes between steps */
  double round_min = 0;
  for (int r = 0; r < rounds; r++) {
    double sum = 0;
    for (int s = 0; s < ns; s++) sum += t[s * rounds + r];
    if (r == 0 || sum < round_min) round_min = sum;
  }
  printf("%s, %d threads, batch %lld, each step alone, %d rounds\n", argv[1], o.threads, (long long)o.default_dim,
         rounds);
  printf("%4s %-18s %-16s %-12s %-16s %10s %10s %8s  %s\n", "step", "op", "in C x H x W", "W[0] W[1]", "out C x H x W",
         "best ms", "median ms", "GFLOP/s", "kernel");
  double best_sum = 0, med_sum = 0;
  for (int s = 0; s < ns; s++) {
    double *ts = t + s * rounds;
    qsort(ts, (size_t)rounds, sizeof *ts, cmp);
    const nnp_node *n = nnp_plan_step_node(p, s);
    /* every input: nnp_node_cost reads n->n_inputs of them (densenet's Concats have up to
     * 49; a fixed 8 read past the array) */
    const nnp_tensor *in[n->n_inputs > 8 ? n->n_inputs : 8], *out[n->n_outputs > 1 ? n->n_outputs : 1];
    for (int i = 0; i < (n->n_inputs > 8 ? n->n_inputs : 8); i++)
      in[i] = i < n->n_inputs && n->inputs[i] >= 0 ? nnp_plan_value(p, n->inputs[i]) : NULL;
    for (int i = 0; i < (n->n_outputs > 1 ? n->n_outputs : 1); i++)
      out[i] = i < n->n_outputs && n->outputs[i] >= 0 ? nnp_plan_value(p, n->outputs[i]) : NULL;
    const nnp_cost c = nnp_node_cost(n, in, out);
    char xs[48], ws[32], ys[48];
    snprintf(xs, sizeof xs, "%lldx%lldx%lld", dim(in[0], 1), dim(in[0], 2), dim(in[0], 3));
    snprintf(ws, sizeof ws, "%lld %lld", dim(in[1], 0), dim(in[1], 1));
    snprintf(ys, sizeof ys, "%lldx%lldx%lld", dim(out[0], 1), dim(out[0], 2), dim(out[0], 3));
    printf("%4d %-18s %-16s %-12s %-16s %10.4f %10.4f %8.1f  %s\n", s, n->op_type, xs, n->n_inputs > 1 ? ws : "-", ys,
           ts[0] * 1e3, ts[rounds / 2] * 1e3, c.flops / ts[0] * 1e-9, nnp_plan_step_kernel(p, s));
    best_sum += ts[0];
    med_sum += ts[rounds / 2];
  }
  printf("sum of the steps' best %.3f ms, of their medians %.3f ms; best round's sum %.3f ms\n", best_sum * 1e3,
         med_sum * 1e3, round_min * 1e3);
  for (int r = 0; r < rounds; r++) {
    const double t0 = nnp_now();
    nnp_plan_run(p);
    t[r] = nnp_now() - t0;
  }
  qsort(t, (size_t)rounds, sizeof *t, cmp);
  printf("whole run: min %.3f ms, median %.3f ms\n", t[0] * 1e3, t[rounds / 2] * 1e3);
  nnp_free(t);
  nnp_plan_destroy(p);
  nnp_graph_destroy(g);
  return 0;
}
