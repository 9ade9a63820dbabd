/* NCHW in, NCHW16c out (kernels/blocked_conv_nchw_in.h): packing, the thread split and
 * the portable kernel, which sums each lane in the tile's order (input channel, kh, kw). */
#include "kernels/blocked_conv_nchw_in.h"

#include <string.h>

#include "kernels/blocked_conv.h"
#include "kernels/dispatch.h"
#include "nnperf/alloc.h"

nnp_status nnp_bconv_nchw_prepare(const nnp_conv2d_desc *d, const float *w, const float *bias, int act,
                                  float act_min, float act_max, bool generic, nnp_bconv_nchw_kernel **out) {
  *out = NULL;
  if (d->group != 1 || d->c < 1 || d->c > NNP_BCONV_NCHW_MAX_C)
    return nnp_error(NNP_ERR_UNSUPPORTED, "blocked conv from NCHW: group %lld, %lld channels", (long long)d->group,
                     (long long)d->c);
  nnp_bconv_nchw_kernel *k = nnp_calloc(1, sizeof *k);
  if (!k) return nnp_error(NNP_ERR_NOMEM, "out of memory preparing a blocked conv");
  k->d = *d;
  const nnp_isa tile = nnp_dispatch_pick(NNP_KF_BLOCKED_CONV, generic);
  k->generic = tile == NNP_ISA_GENERIC;
  k->avx2 = tile == NNP_ISA_AVX2;
  k->mb = nnp_blocks(d->m);
  k->ep = (nnp_epilogue){.act = act, .act_min = act_min, .act_max = act_max};
  const int64_t taps = d->kh * d->kw;
  k->w = nnp_aligned_alloc((size_t)(k->mb * d->c * taps * NNP_BLOCK) * sizeof(float));
  k->bias = nnp_aligned_alloc((size_t)(k->mb * NNP_BLOCK) * sizeof(float));
  if (!k->w || !k->bias) {
    nnp_bconv_nchw_destroy(k);
    return nnp_error(NNP_ERR_NOMEM, "out of memory preparing a blocked conv");
  }
  memset(k->w, 0, (size_t)(k->mb * d->c * taps * NNP_BLOCK) * sizeof(float));
  memset(k->bias, 0, (size_t)(k->mb * NNP_BLOCK) * sizeof(float));
  for (int64_t m = 0; m < d->m; m++) {
    const int64_t ob = m / NNP_BLOCK, l = m % NNP_BLOCK;
    if (bias) k->bias[m] = bias[m];
    for (int64_t ic = 0; ic < d->c; ic++)
      for (int64_t t = 0; t < taps; t++)
        k->w[((ob * d->c + ic) * taps + t) * NNP_BLOCK + l] = w[(m * d->c + ic) * taps + t];
  }
  *out = k;
  return NNP_OK;
}

void nnp_bconv_nchw_destroy(nnp_bconv_nchw_kernel *k) {
  if (!k) return;
  nnp_aligned_free(k->w);
  nnp_aligned_free(k->bias);
  nnp_free(k);
}

void nnp_bconv_nchw_row_generic(const nnp_bconv_nchw_kernel *k, const float *x, float *y, const float *r, int64_t ob,
                                int nb, int64_t oh) {
  const nnp_conv2d_desc *d = &k->d;
  const int64_t taps = d->kh * d->kw;
  for (int b = 0; b < nb; b++) {
    const float *wb = k->w + (ob + b) * d->c * taps * NNP_BLOCK, *bias = k->bias + (ob + b) * NNP_BLOCK;
    const int64_t valid = d->m - (ob + b) * NNP_BLOCK;
    for (int64_t ow = 0; ow < d->ow; ow++) {
      float acc[NNP_BLOCK] = {0};
      for (int64_t ic = 0; ic < d->c; ic++)
        for (int64_t kh = 0; kh < d->kh; kh++) {
          const int64_t ih = oh * d->sh - d->ph + kh * d->dh;
          if (ih < 0 || ih >= d->h) continue;
          for (int64_t kw = 0; kw < d->kw; kw++) {
            const int64_t iw = ow * d->sw - d->pw + kw * d->dw;
            if (iw < 0 || iw >= d->w) continue;
            const float xv = x[(ic * d->h + ih) * d->w + iw], *wv = wb + (ic * taps + kh * d->kw + kw) * NNP_BLOCK;
            for (int l = 0; l < NNP_BLOCK; l++) acc[l] += xv * wv[l];
          }
        }
      const int64_t o = (((ob + b) * d->oh + oh) * d->ow + ow) * NNP_BLOCK;
      for (int l = 0; l < NNP_BLOCK; l++) {
        float v = acc[l] + bias[l];
        if (r) v += r[o + l];
        y[o + l] = l < valid ? nnp_act_apply(&k->ep, v) : 0.0f;
      }
    }
  }
}

typedef struct nchw_run_ctx {
  const nnp_bconv_nchw_kernel *k;
  const float *x, *r;
  float *y;
  int64_t pairs; /* output block pairs */
} nchw_run_ctx;

/* Task t = (row * images + image) * pairs + pair (threadpool.h: from its index alone):
 * row outer, so that the homed split gives each thread a band of rows of every block,
 * the band the pooling after a stem (blocked_pool.c, row outer too) reads. */
static void run_rows(void *p, int64_t begin, int64_t end) {
  const nchw_run_ctx *c = p;
  const nnp_bconv_nchw_kernel *k = c->k;
  const nnp_conv2d_desc *d = &k->d;
  const int64_t xs = d->c * d->h * d->w, ys = k->mb * d->oh * d->ow * NNP_BLOCK;
  for (int64_t t = begin; t < end; t++) {
    const int64_t pair = t % c->pairs, n = t / c->pairs % d->n, oh = t / c->pairs / d->n, ob = 2 * pair;
    const int nb = ob + 1 < k->mb ? 2 : 1;
    const float *x = c->x + n * xs, *r = c->r ? c->r + n * ys : NULL;
    float *y = c->y + n * ys;
    if (k->generic) nnp_bconv_nchw_row_generic(k, x, y, r, ob, nb, oh);
    else if (k->avx2) nnp_bconv_nchw_row_avx2(k, x, y, r, ob, nb, oh);
    else nnp_bconv_nchw_row_avx512(k, x, y, r, ob, nb, oh);
  }
}

void nnp_bconv_nchw_run(const nnp_bconv_nchw_kernel *k, const float *x, float *y, const float *residual,
                        nnp_threadpool *tp) {
  nchw_run_ctx c = {.k = k, .x = x, .r = residual, .y = y, .pairs = (k->mb + 1) / 2};
  /* one band of rows per thread (homed): a stem writes a large plane that the layer after
   * it reads by the same bands (resnet18's stem pool 0.094 -> 0.063 ms, 2 threads) */
  nnp_threadpool_run_homed(tp, run_rows, &c, k->d.n * c.pairs * k->d.oh);
}
