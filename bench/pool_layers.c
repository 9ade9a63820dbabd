/* bench_pool_layers: best-of-N time of the fast 2-D pools (kernels/pool.h) on the pool
 * shapes of inception_v3, densenet121, squeezenet1_0 and resnet-style stems, the portable
 * rows beside the dispatched ones (AVX2 here) in one run. Short runs, best of many: on a
 * shared machine the minimum is the least disturbed run, so two builds run back to back
 * compare. Asserts nothing.
 * Usage: bench_pool_layers [threads] [filter: only layers whose name has it] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/timing_loop.h"
#include "kernels/pool.h"
#include "nnperf/alloc.h"
#include "util/threadpool.h"

typedef struct layer {
  const char *what;
  int avg; /* 1: AveragePool with count_include_pad, 0: MaxPool */
  int64_t c, h, k, s, p;
} layer;

static const layer layers[] = {
    {"incv3 avg3x3 2048ch 8", 1, 2048, 8, 3, 1, 1},  {"incv3 avg3x3 768ch 17", 1, 768, 17, 3, 1, 1},
    {"incv3 avg3x3 288ch 35", 1, 288, 35, 3, 1, 1},  {"dn121 avg2x2 s2 256ch 28", 1, 256, 28, 2, 2, 0},
    {"incv3 max3x3 s2 288ch 35", 0, 288, 35, 3, 2, 0}, {"incv3 max3x3 s2 768ch 17", 0, 768, 17, 3, 2, 0},
    {"incv3 max3x3 s2 64ch 147", 0, 64, 147, 3, 2, 0}, {"incv3 max3x3 s2 192ch 71", 0, 192, 71, 3, 2, 0},
    {"rn18 max3x3 s2 p1 64ch 112", 0, 64, 112, 3, 2, 1}, {"sqz10 max3x3 s2 96ch 109", 0, 96, 109, 3, 2, 0},
};

/* best of `runs` of one pool, the portable rows (generic) or the dispatched ones */
static double best_ms(const layer *l, const nnp_avgpool2d_desc *a, const float *x, float *y, bool generic,
                      nnp_threadpool *tp, int runs) {
  double best = 1e30;
  for (int r = 0; r < runs; r++) {
    const double t0 = nnp_now();
    if (l->avg) nnp_avgpool2d(a, x, y, generic, tp);
    else nnp_maxpool2d(&a->p, x, y, generic, tp);
    const double t = nnp_now() - t0;
    best = t < best ? t : best;
  }
  return best * 1e3;
}

int main(int argc, char **argv) {
  const int threads = argc > 1 ? atoi(argv[1]) : 1;
  const char *filter = argc > 2 ? argv[2] : "";
  nnp_threadpool *tp = NULL;
  if (threads < 1 || nnp_threadpool_create(threads, &tp) != NNP_OK) {
    fprintf(stderr, "usage: bench_pool_layers [threads >= 1] [filter]\n");
    return 2;
  }
  printf("bench_pool_layers: %d threads, best of 200 runs, ms\n", threads);
  printf("  %-28s %10s %10s %8s\n", "layer", "portable", "fast", "speedup");
  for (size_t i = 0; i < sizeof layers / sizeof *layers; i++) {
    const layer *l = &layers[i];
    if (!strstr(l->what, filter)) continue;
    const int64_t oh = (l->h + 2 * l->p - l->k) / l->s + 1;
    nnp_avgpool2d_desc a = {.p = {.planes = l->c, .h = l->h, .w = l->h, .oh = oh, .ow = oh, .kh = l->k, .kw = l->k,
                                  .sh = l->s, .sw = l->s, .ph = l->p, .pw = l->p},
                            .ph_end = l->p, .pw_end = l->p, .include_pad = true};
    float *x = nnp_aligned_alloc((size_t)(l->c * l->h * l->h) * sizeof(float));
    float *y = nnp_aligned_alloc((size_t)(l->c * oh * oh) * sizeof(float));
    if (!x || !y) return 1;
    for (int64_t j = 0; j < l->c * l->h * l->h; j++) x[j] = (float)(j % 97) * 0.01f - 0.3f;
    const double slow = best_ms(l, &a, x, y, true, tp, 200), fast = best_ms(l, &a, x, y, false, tp, 200);
    printf("  %-28s %10.4f %10.4f %7.2fx\n", l->what, slow, fast, slow / fast);
    nnp_aligned_free(x);
    nnp_aligned_free(y);
  }
  nnp_threadpool_destroy(tp);
  return 0;
}
