/* bench_qdw_layers: best-of-N time of the INT8 depthwise kernel (kernels/qdwconv.h) on
 * EfficientNet-Lite0's 16 depthwise layer shapes, beside the FP32 blocked depthwise
 * kernel (kernels/blocked_conv.h, NCHW16c in and out, no reorders) on the same shape:
 * the INT8 model keeps pace only if its depthwise layers do (docs/quantization.md).
 * Short runs, best of many: on a shared machine the minimum is the least disturbed run.
 * NNP_CPU_FEATURES=avx2 measures the AVX2 INT8 body. Asserts nothing.
 * Usage: bench_qdw_layers [threads] [filter: only layers whose name has it] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/timing_loop.h"
#include "kernels/blocked_conv.h"
#include "kernels/qdwconv.h"
#include "nnperf/alloc.h"
#include "util/threadpool.h"

typedef struct layer {
  const char *what;
  int64_t c, h, k, s;
} layer;

static const layer layers[] = {
    {"dw3x3 s1 32ch 112", 32, 112, 3, 1},   {"dw3x3 s2 96ch 112", 96, 112, 3, 2},
    {"dw3x3 s1 144ch 56", 144, 56, 3, 1},   {"dw5x5 s2 144ch 56", 144, 56, 5, 2},
    {"dw5x5 s1 240ch 28", 240, 28, 5, 1},   {"dw3x3 s2 240ch 28", 240, 28, 3, 2},
    {"dw3x3 s1 480ch 14 (x2)", 480, 14, 3, 1}, {"dw5x5 s1 480ch 14", 480, 14, 5, 1},
    {"dw5x5 s1 672ch 14 (x2)", 672, 14, 5, 1}, {"dw5x5 s2 672ch 14", 672, 14, 5, 2},
    {"dw5x5 s1 1152ch 7 (x3)", 1152, 7, 5, 1}, {"dw3x3 s1 1152ch 7", 1152, 7, 3, 1},
};

typedef void (*run_fn)(void *ctx);

static double best_of(run_fn fn, void *ctx) {
  double best = 1e30, t_start = nnp_now();
  for (int rep = 0; rep < 30 || nnp_now() - t_start < 0.1; rep++) {
    double t0 = nnp_now();
    fn(ctx);
    double dt = nnp_now() - t0;
    if (dt < best) best = dt;
  }
  return best;
}

typedef struct q_ctx {
  nnp_qdw_desc d;
  const uint8_t *x;
  const int16_t *w;
  uint8_t *y;
  nnp_qepilogue ep;
  nnp_threadpool *tp;
} q_ctx;
static void run_q(void *p) {
  q_ctx *c = p;
  nnp_qdwconv(&c->d, c->x, 7, c->w, c->y, &c->ep, c->tp, false);
}

typedef struct f_ctx {
  nnp_bconv_kernel *k;
  const float *x;
  float *y;
  nnp_threadpool *tp;
} f_ctx;
static void run_f(void *p) {
  f_ctx *c = p;
  nnp_bconv_run(c->k, c->x, c->y, NULL, NULL, c->tp); /* depthwise: no scratch */
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 1;
  const char *filter = argc > 2 ? argv[2] : "";
  if (threads < 1) {
    fprintf(stderr, "usage: bench_qdw_layers [threads >= 1] [filter]\n");
    return 2;
  }
  nnp_threadpool *tp = NULL;
  if (threads > 1 && nnp_threadpool_create(threads, &tp) != NNP_OK) return 1;
  printf("threads %d: best of 30 (at least 0.1 s) per layer; (xN): the layer occurs N times, the sums count it so\n",
         threads);
  printf("  %-26s %10s %10s %8s\n", "layer", "int8 ms", "fp32 ms", "int8/fp32");
  double tq = 0, tf = 0;
  for (size_t i = 0; i < sizeof layers / sizeof layers[0]; i++) {
    const layer *l = &layers[i];
    if (!strstr(l->what, filter)) continue;
    const char *times = strstr(l->what, "(x");
    const int count = times ? atoi(times + 2) : 1;
    const int64_t p = l->k / 2, o = (l->h + 2 * p - l->k) / l->s + 1, nx = l->c * l->h * l->h, ny = l->c * o * o;
    const int64_t nw = l->c * l->k * l->k, cb = nnp_blocks(l->c) * NNP_BLOCK;
    uint8_t *xq = nnp_malloc((size_t)nx), *yq = nnp_malloc((size_t)ny);
    int16_t *wq = nnp_malloc((size_t)nw * sizeof *wq);
    int32_t *bias = nnp_malloc((size_t)l->c * sizeof *bias);
    float *mult = nnp_malloc((size_t)l->c * sizeof *mult), *w = nnp_malloc((size_t)nw * sizeof *w);
    float *xf = nnp_aligned_alloc((size_t)(cb * l->h * l->h) * 4), *yf = nnp_aligned_alloc((size_t)(cb * o * o) * 4);
    if (!xq || !yq || !wq || !bias || !mult || !w || !xf || !yf) return 1;
    for (int64_t j = 0; j < nx; j++) xq[j] = (uint8_t)(j * 37 % 251);
    for (int64_t j = 0; j < nw; j++) wq[j] = (int16_t)(j * 13 % 255 - 127), w[j] = 0.01f * (float)wq[j];
    for (int64_t j = 0; j < l->c; j++) bias[j] = (int32_t)(j * 97 % 2001) - 1000, mult[j] = 1e-3f;
    for (int64_t j = 0; j < cb * l->h * l->h; j++) xf[j] = (float)(j % 17) * 0.01f - 0.08f;
    q_ctx qc = {.d = {.c = l->c, .h = l->h, .w = l->h, .oh = o, .ow = o, .kh = l->k, .kw = l->k, .sh = l->s,
                      .sw = l->s, .ph = p, .pw = p, .dh = 1, .dw = 1},
                .x = xq, .w = wq, .y = yq, .ep = {.bias = bias, .mult = mult, .zp = 3, .qmin = 0, .qmax = 255},
                .tp = tp};
    nnp_conv2d_desc d = {.n = 1, .c = l->c, .h = l->h, .w = l->h, .m = l->c, .oh = o, .ow = o, .kh = l->k,
                         .kw = l->k, .sh = l->s, .sw = l->s, .ph = p, .pw = p, .dh = 1, .dw = 1, .group = l->c};
    f_ctx fc = {.x = xf, .y = yf, .tp = tp};
    if (nnp_bconv_prepare(&d, w, NULL, 0, 0.0f, 0.0f, false, &fc.k) != NNP_OK) return 1;
    const double bq = best_of(run_q, &qc), bf = best_of(run_f, &fc);
    printf("  %-26s %10.4f %10.4f %8.2fx\n", l->what, bq * 1e3, bf * 1e3, bq / bf);
    tq += count * bq;
    tf += count * bf;
    nnp_bconv_destroy(fc.k);
    nnp_free(xq), nnp_free(yq), nnp_free(wq), nnp_free(bias), nnp_free(mult), nnp_free(w);
    nnp_aligned_free(xf), nnp_aligned_free(yf);
  }
  printf("  %-26s %10.4f %10.4f %8.2fx\n", "sum (all 16 layers)", tq * 1e3, tf * 1e3, tq / tf);
  nnp_threadpool_destroy(tp);
  return 0;
}
