/* Blocked MaxPool and AveragePool (kernels/blocked_pool.h): the thread split and the portable C rows;
 * on AVX-512 CPUs each row is blocked_pool_avx512.c's, on AVX2 ones blocked_pool_avx2.c's. The C rows, built for baseline
 * x86-64, took resnet18's stem pool (64 channels, 112 -> 56) 0.23 ms on 2 threads, 2.7x
 * ONNX Runtime's, 2% of the model. */
#include <math.h>

#include "kernels/blocked_conv.h"
#include "kernels/blocked_pool.h"
#include "kernels/dispatch.h"

typedef struct pool_ctx {
  const nnp_pool2d_desc *d;
  const nnp_avgpool2d_desc *a; /* AveragePool's, or NULL: MaxPool */
  const float *x;
  float *y;
  nnp_isa isa; /* whose rows: GENERIC (the C rows), AVX2 or AVX512 */
} pool_ctx;

/* The portable row: each window's max (a NULL) or sum, in (kh, kw) order, then the
 * average's divisor */
static void window_row(const nnp_pool2d_desc *d, const nnp_avgpool2d_desc *a, const float *x, float *y, int64_t oh) {
  const int64_t hs = oh * d->sh - d->ph; /* the window's first row, maybe padding */
  const int64_t ch = a ? nnp_avgpool_count(oh, d->sh, d->ph, a->ph_end, d->kh, d->h, a->include_pad) : 0;
  int64_t h0, h1;
  nnp_pool_taps(oh, d->sh, d->ph, d->kh, d->h, &h0, &h1);
  for (int64_t ow = 0; ow < d->ow; ow++) {
    const int64_t ws = ow * d->sw - d->pw;
    int64_t w0, w1;
    nnp_pool_taps(ow, d->sw, d->pw, d->kw, d->w, &w0, &w1);
    float m[NNP_BLOCK];
    for (int l = 0; l < NNP_BLOCK; l++) m[l] = a ? 0.0f : -INFINITY;
    for (int64_t kh = h0; kh < h1; kh++)
      for (int64_t kw = w0; kw < w1; kw++) {
        const float *v = x + ((hs + kh) * d->w + ws + kw) * NNP_BLOCK;
        for (int l = 0; l < NNP_BLOCK; l++) m[l] = a ? m[l] + v[l] : v[l] > m[l] ? v[l] : m[l];
      }
    const int64_t cnt = a ? ch * nnp_avgpool_count(ow, d->sw, d->pw, a->pw_end, d->kw, d->w, a->include_pad) : 1;
    for (int l = 0; l < NNP_BLOCK; l++) y[ow * NNP_BLOCK + l] = !a ? m[l] : cnt > 0 ? m[l] / (float)cnt : 0.0f;
  }
}

/* Task t = output row * planes + plane: row outer, so that the homed split gives each
 * thread a band of rows of every plane (the band a stem conv before it wrote on the
 * same thread, blocked_conv_nchw_in.c). */
static void pool_rows(void *p, int64_t begin, int64_t end) {
  const pool_ctx *c = p;
  const nnp_pool2d_desc *d = c->d;
  for (int64_t t = begin; t < end; t++) {
    const int64_t oh = t / d->planes, plane = t % d->planes;
    const float *x = c->x + plane * d->h * d->w * NNP_BLOCK;
    float *y = c->y + (plane * d->oh + oh) * d->ow * NNP_BLOCK;
    if (c->isa == NNP_ISA_AVX512) nnp_pool2d_blocked_row_avx512(d, c->a, x, y, oh);
    else if (c->isa == NNP_ISA_AVX2) nnp_pool2d_blocked_row_avx2(d, c->a, x, y, oh);
    else window_row(d, c->a, x, y, oh);
  }
}

void nnp_maxpool2d_blocked(const nnp_pool2d_desc *d, const float *x, float *y, bool generic, nnp_threadpool *tp) {
  pool_ctx c = {d, NULL, x, y, nnp_dispatch_pick(NNP_KF_BLOCKED_POOL, generic)};
  nnp_threadpool_run_homed(tp, pool_rows, &c, d->planes * d->oh); /* bound by memory */
}

void nnp_avgpool2d_blocked(const nnp_avgpool2d_desc *a, const float *x, float *y, bool generic, nnp_threadpool *tp) {
  pool_ctx c = {&a->p, a, x, y, nnp_dispatch_pick(NNP_KF_BLOCKED_POOL, generic)};
  nnp_threadpool_run_homed(tp, pool_rows, &c, a->p.planes * a->p.oh);
}

typedef struct gap_ctx {
  const float *x;
  float *y;
  int64_t c, cb, hw;
} gap_ctx;

/* Task t = image * cb + channel block. */
static void gap_blocks(void *p, int64_t begin, int64_t end) {
  const gap_ctx *g = p;
  for (int64_t t = begin; t < end; t++) {
    const int64_t i = t / g->cb, b = t % g->cb;
    const float *xb = g->x + t * g->hw * NNP_BLOCK;
    double acc[NNP_BLOCK] = {0};
    for (int64_t q = 0; q < g->hw; q++)
      for (int l = 0; l < NNP_BLOCK; l++) acc[l] += (double)xb[q * NNP_BLOCK + l];
    const int64_t valid = g->c - b * NNP_BLOCK < NNP_BLOCK ? g->c - b * NNP_BLOCK : NNP_BLOCK;
    for (int64_t l = 0; l < valid; l++) g->y[i * g->c + b * NNP_BLOCK + l] = (float)(acc[l] / (double)g->hw);
  }
}

void nnp_global_avgpool_blocked(int64_t n, int64_t c, int64_t hw, const float *x, float *y, nnp_threadpool *tp) {
  gap_ctx g = {x, y, c, nnp_blocks(c), hw};
  nnp_threadpool_run_homed(tp, gap_blocks, &g, n * g.cb);
}
