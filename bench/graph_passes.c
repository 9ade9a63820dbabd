/* Graph passes and memory plan, measured side by side in one run (not a test: timings are
 * noisy). For each model: the plan without passes and memory plan vs the plan with all of
 * them, run alternately (A, B, A, B, ...) so machine noise hits both alike. Prints the P50
 * ratio, the step counts and the activation memory; the goal is a ratio >= 1 (passes
 * never slow the reference engine) and planned memory <= 0.5x naive.
 *
 * usage: bench_graph_passes [ITERATIONS] [zoo names...]
 *        (default 9 iterations of mobilenet_v2, resnet18, efficientnet_lite0) */
#include <stdio.h>
#include <stdlib.h>

#include "bench/timing_loop.h"
#include "nnperf/bench.h"
#include "nnperf/engine.h"
#include "nnperf/zoo.h"

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static int one(const char *name, int iters) {
  nnp_zoo_options zo;
  nnp_zoo_options_default(&zo);
  nnp_graph *g = NULL;
  if (nnp_zoo_build(name, &zo, &g) != NNP_OK) {
    fprintf(stderr, "bench_graph_passes: %s: %s\n", name, nnp_last_error());
    return 1;
  }
  nnp_plan *p[2] = {NULL, NULL};
  double *t[2] = {calloc((size_t)iters, sizeof(double)), calloc((size_t)iters, sizeof(double))};
  int rc = 0;
  for (int k = 0; k < 2 && !rc; k++) {
    nnp_plan_options o;
    nnp_plan_options_default(&o);
    if (k == 0) {
      o.passes = 0;
      o.memory_plan = false;
    }
    if (nnp_plan_compile(g, &o, &p[k]) != NNP_OK) {
      fprintf(stderr, "bench_graph_passes: %s: %s\n", name, nnp_last_error());
      rc = 1;
      break;
    }
    for (int i = 0; i < nnp_plan_num_inputs(p[k]); i++) nnp_fill_seeded(nnp_plan_input(p[k], i), 1 + (uint64_t)i);
    if (nnp_plan_run(p[k]) != NNP_OK) rc = 1; /* warm-up */
  }
  for (int i = 0; i < iters && !rc; i++)
    for (int k = 0; k < 2; k++) {
      double t0 = nnp_now();
      if (nnp_plan_run(p[k]) != NNP_OK) rc = 1;
      t[k][i] = nnp_now() - t0;
    }
  if (!rc) {
    qsort(t[0], (size_t)iters, sizeof(double), cmp);
    qsort(t[1], (size_t)iters, sizeof(double), cmp);
    const nnp_plan_memory *m = nnp_plan_memory_stats(p[1]);
    printf("%-20s P50 %8.2f ms -> %8.2f ms  speed-up %.2fx  steps %d -> %d  activations %.2f -> %.2f MiB "
           "(%.2fx naive, %.2fx lower bound)\n",
           name, t[0][iters / 2] * 1e3, t[1][iters / 2] * 1e3, t[0][iters / 2] / t[1][iters / 2],
           nnp_plan_num_steps(p[0]), nnp_plan_num_steps(p[1]), (double)nnp_plan_memory_stats(p[0])->planned / 1048576.0,
           (double)m->planned / 1048576.0, (double)m->planned / (double)m->naive,
           (double)m->planned / (double)m->lower_bound);
  }
  nnp_plan_destroy(p[0]);
  nnp_plan_destroy(p[1]);
  free(t[0]);
  free(t[1]);
  nnp_graph_destroy(g);
  return rc;
}

int main(int argc, char **argv) {
  int iters = argc > 1 ? atoi(argv[1]) : 9;
  if (iters < 1) iters = 1;
  static const char *defaults[] = {"mobilenet_v2", "resnet18", "efficientnet_lite0"};
  int rc = 0;
  if (argc > 2)
    for (int i = 2; i < argc; i++) rc |= one(argv[i], iters);
  else
    for (int i = 0; i < 3; i++) rc |= one(defaults[i], iters);
  return rc;
}
