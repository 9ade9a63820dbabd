/* bench_int8_vs_fp32 FP32.onnx QDQ.onnx [iterations]: the native engine on an FP32 model
 * and its QDQ (INT8) export, 1 thread, default passes (fuse-qdq turns the QDQ model into
 * QLinearConv on the INT8 kernels), compiled in one process and run alternately, so
 * that the load of a shared machine hits both alike. Prints both P50s, their ratio and
 * the top-1 agreement of the two outputs on the same seeded input. Asserts nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/timing_loop.h"
#include "nnperf/bench.h"
#include "nnperf/engine.h"
#include "nnperf/onnx.h"

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static int64_t argmax(const nnp_tensor *t) {
  const float *v = t->data;
  int64_t n = nnp_tensor_numel(t), best = 0;
  for (int64_t i = 1; i < n; i++)
    if (v[i] > v[best]) best = i;
  return best;
}

/* NNP_PROFILE=1: each step timed alone, summed per op type and kernel (after the timed
 * runs, so that the clock reads do not touch the P50s). */
static void profile(nnp_plan *p[2], int iters) {
  enum { MAXK = 64 };
  for (int k = 0; k < 2; k++) {
    char names[MAXK][96];
    double sec[MAXK] = {0}, total = 0;
    int cnt[MAXK] = {0}, n = 0;
    for (int it = 0; it < iters; it++)
      for (int s = 0; s < nnp_plan_num_steps(p[k]); s++) {
        double t0 = nnp_now();
        if (nnp_plan_run_step(p[k], s) != NNP_OK) return;
        double dt = nnp_now() - t0;
        char key[96];
        const char *kn = nnp_plan_step_kernel(p[k], s);
        snprintf(key, sizeof key, "%s [%s]", nnp_plan_step_node(p[k], s)->op_type, kn ? kn : "ref");
        int o = 0;
        while (o < n && strcmp(names[o], key)) o++;
        if (o == n) {
          if (n == MAXK) continue;
          snprintf(names[n++], sizeof names[0], "%s", key);
        }
        sec[o] += dt;
        total += dt;
        if (it == 0) cnt[o]++;
      }
    printf("%s per step type (%d runs):\n", k ? "int8" : "fp32", iters);
    for (int o = 0; o < n; o++)
      printf("  %-48s %3d  %8.2f ms  %5.1f%%\n", names[o], cnt[o], sec[o] / iters * 1e3, 100 * sec[o] / total);
  }
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: bench_int8_vs_fp32 FP32.onnx QDQ.onnx [iterations]\n");
    return 2;
  }
  int iters = argc > 3 ? atoi(argv[3]) : 21;
  if (iters < 1) iters = 1;
  nnp_graph *g[2] = {NULL, NULL};
  nnp_plan *p[2] = {NULL, NULL};
  double *t[2] = {calloc((size_t)iters, sizeof(double)), calloc((size_t)iters, sizeof(double))};
  for (int k = 0; k < 2; k++) {
    nnp_plan_options o;
    nnp_plan_options_default(&o);
    o.threads = 1;
    if (nnp_onnx_load(argv[1 + k], NULL, &g[k]) != NNP_OK || nnp_plan_compile(g[k], &o, &p[k]) != NNP_OK) {
      fprintf(stderr, "bench_int8_vs_fp32: %s: %s\n", argv[1 + k], nnp_last_error());
      return 1;
    }
    for (int i = 0; i < nnp_plan_num_inputs(p[k]); i++) nnp_fill_seeded(nnp_plan_input(p[k], i), 1 + (uint64_t)i);
    for (int w = 0; w < 3; w++)
      if (nnp_plan_run(p[k]) != NNP_OK) return 1; /* warm-up */
  }
  int qsteps = 0;
  for (int i = 0; i < nnp_plan_num_steps(p[1]); i++) {
    const char *kn = nnp_plan_step_kernel(p[1], i);
    qsteps += kn && !strncmp(kn, "qlinearconv.", 12);
  }
  int64_t top[2] = {argmax(nnp_plan_output(p[0], 0)), argmax(nnp_plan_output(p[1], 0))};
  for (int i = 0; i < iters; i++)
    for (int k = 0; k < 2; k++) {
      double t0 = nnp_now();
      if (nnp_plan_run(p[k]) != NNP_OK) return 1;
      t[k][i] = nnp_now() - t0;
    }
  if (getenv("NNP_PROFILE")) profile(p, 5);
  double best[2] = {t[0][0], t[1][0]};
  for (int k = 0; k < 2; k++) {
    for (int i = 0; i < iters; i++)
      if (t[k][i] < best[k]) best[k] = t[k][i];
    qsort(t[k], (size_t)iters, sizeof(double), cmp);
  }
  printf("fp32 P50 %.2f ms (min %.2f)  int8 P50 %.2f ms (min %.2f)  speed-up P50 %.2fx (min %.2fx)  "
         "%d QLinearConv steps on INT8 kernels  top-1 %s (%lld vs %lld)\n",
         t[0][iters / 2] * 1e3, best[0] * 1e3, t[1][iters / 2] * 1e3, best[1] * 1e3, t[0][iters / 2] / t[1][iters / 2],
         best[0] / best[1], qsteps, top[0] == top[1] ? "agrees" : "differs", (long long)top[0], (long long)top[1]);
  for (int k = 0; k < 2; k++) {
    nnp_plan_destroy(p[k]);
    nnp_graph_destroy(g[k]);
    free(t[k]);
  }
  return 0;
}
