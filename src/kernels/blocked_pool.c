/* Blocked MaxPool (kernels/blocked_pool.h). Plain C over the 16 lanes of a block: the
 * compiler vectorises the lane loop, and a pool is a small share of any model next to
 * the convolutions around it. */
#include <math.h>

#include "kernels/blocked_conv.h"
#include "kernels/blocked_pool.h"

typedef struct pool_ctx {
  const nnp_pool2d_desc *d;
  const float *x;
  float *y;
} pool_ctx;

/* Task t = plane * oh + output row. */
static void pool_rows(void *p, int64_t begin, int64_t end) {
  const pool_ctx *c = p;
  const nnp_pool2d_desc *d = c->d;
  for (int64_t t = begin; t < end; t++) {
    const int64_t oh = t % d->oh, plane = t / d->oh;
    const float *x = c->x + plane * d->h * d->w * NNP_BLOCK;
    float *y = c->y + (plane * d->oh + oh) * d->ow * NNP_BLOCK;
    const int64_t h0 = oh * d->sh - d->ph;
    const int64_t ih0 = h0 < 0 ? 0 : h0, ih1 = h0 + d->kh < d->h ? h0 + d->kh : d->h;
    for (int64_t ow = 0; ow < d->ow; ow++) {
      const int64_t w0 = ow * d->sw - d->pw;
      const int64_t iw0 = w0 < 0 ? 0 : w0, iw1 = w0 + d->kw < d->w ? w0 + d->kw : d->w;
      float m[NNP_BLOCK];
      for (int l = 0; l < NNP_BLOCK; l++) m[l] = -INFINITY;
      for (int64_t ih = ih0; ih < ih1; ih++)
        for (int64_t iw = iw0; iw < iw1; iw++) {
          const float *v = x + (ih * d->w + iw) * NNP_BLOCK;
          for (int l = 0; l < NNP_BLOCK; l++) m[l] = v[l] > m[l] ? v[l] : m[l];
        }
      for (int l = 0; l < NNP_BLOCK; l++) y[ow * NNP_BLOCK + l] = m[l];
    }
  }
}

void nnp_maxpool2d_blocked(const nnp_pool2d_desc *d, const float *x, float *y, nnp_threadpool *tp) {
  pool_ctx c = {d, x, y};
  nnp_threadpool_run(tp, pool_rows, &c, d->planes * d->oh);
}
