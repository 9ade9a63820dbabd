/* Harness overhead, measured side by side in one run (not a test: timings are noisy).
 *
 *  1. The timing loop around an empty inference: cost per iteration (the goal: < 1 us).
 *  2. nnperf's timing loop vs a hand-written minimal loop calling the same engine plan on
 *     the same model, interleaved in rounds so that machine noise hits both alike: the
 *     P50s should agree within 5%.
 *
 * usage: bench_harness_overhead [MODEL.onnx | zoo:NAME] [ITERATIONS]
 *        (default zoo:squeezenet1_1 at 224x224, 100 iterations per round, 3 rounds) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/timing_loop.h"
#include "nnperf/alloc.h"
#include "nnperf/engine.h"
#include "nnperf/onnx.h"
#include "nnperf/stats.h"
#include "nnperf/zoo.h"

static nnp_status empty_infer(void *ctx) {
  (void)ctx;
  __asm__ __volatile__("" ::: "memory");
  return NNP_OK;
}

typedef struct collect {
  double *x;
  int n, cap;
} collect;

static void sink(void *ud, double v) {
  collect *c = ud;
  if (c->n < c->cap) c->x[c->n++] = v;
}

static nnp_status plan_infer(void *ctx) { return nnp_plan_run(ctx); }

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  const char *model = argc > 1 ? argv[1] : "zoo:squeezenet1_1";
  int iters = argc > 2 ? atoi(argv[2]) : 100;
  /* 1: empty backend */
  nnp_loop_spec spec;
  nnp_loop_spec_default(&spec);
  spec.warmup_min = 100;
  spec.iterations = 1000000;
  spec.min_time_s = 0;
  collect c = {malloc(sizeof(double) * 1000000), 0, 1000000};
  nnp_loop_outcome lo;
  double t0 = nnp_now();
  nnp_timing_loop(&spec, NULL, empty_infer, NULL, sink, &c, &lo);
  double per_iter = (nnp_now() - t0) / (lo.n_samples + lo.warmup_iterations);
  qsort(c.x, (size_t)c.n, sizeof(double), cmp);
  printf("empty backend: %d iterations, %.1f ns per iteration of the whole loop, median sample %.1f ns "
         "(goal < 1000 ns)\n",
         lo.n_samples, per_iter * 1e9, c.x[c.n / 2] * 1e9);

  /* 2: same plan, nnperf loop vs minimal loop */
  nnp_graph *g = NULL;
  nnp_status s;
  if (!strncmp(model, "zoo:", 4)) {
    nnp_zoo_options zo;
    nnp_zoo_options_default(&zo);
    s = nnp_zoo_build(model + 4, &zo, &g);
  } else {
    s = nnp_onnx_load(model, NULL, &g);
  }
  nnp_plan *plan = NULL;
  if (s == NNP_OK) s = nnp_plan_compile(g, NULL, &plan);
  if (s != NNP_OK) {
    fprintf(stderr, "%s\n", nnp_last_error());
    return 1;
  }
  spec.warmup_min = 5;
  spec.warmup_max = 5;
  spec.iterations = iters;
  spec.max_time_s = 1e9;
  double *minimal = malloc(sizeof(double) * (size_t)iters * 3);
  collect h = {malloc(sizeof(double) * (size_t)iters * 3), 0, iters * 3};
  int nm = 0;
  for (int round = 0; round < 3; round++) {
    nnp_timing_loop(&spec, NULL, plan_infer, plan, sink, &h, &lo);
    for (int i = 0; i < 5; i++) nnp_plan_run(plan);
    for (int i = 0; i < iters; i++) { /* the minimal loop a user would write */
      double a = nnp_now();
      nnp_plan_run(plan);
      minimal[nm++] = nnp_now() - a;
    }
  }
  nnp_stats sh, sm;
  nnp_stats_compute(h.x, h.n, 1, &sh);
  nnp_stats_compute(minimal, nm, 1, &sm);
  printf("%s: nnperf loop P50 %.3f ms [%.3f, %.3f], minimal loop P50 %.3f ms [%.3f, %.3f], ratio %.4f "
         "(goal within 5%%)\n",
         model, sh.p50 * 1e3, sh.p50_lo * 1e3, sh.p50_hi * 1e3, sm.p50 * 1e3, sm.p50_lo * 1e3, sm.p50_hi * 1e3,
         sh.p50 / sm.p50);
  free(minimal);
  free(h.x);
  free(c.x);
  nnp_plan_destroy(plan);
  nnp_graph_destroy(g);
  return 0;
}
