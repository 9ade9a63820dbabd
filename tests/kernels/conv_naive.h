/* The kernel tests' conv2d oracle: a direct loop nest in double over every output, with
 * the epilogue as nnp_conv2d_run defines it (rows are the channels of one image). */
#ifndef NNP_TEST_CONV_NAIVE_H
#define NNP_TEST_CONV_NAIVE_H

#include "kernels/conv.h"
#include "kernels/epilogue.h"

static inline void kt_conv_naive(const nnp_conv2d_desc *d, const float *x, const float *w, const nnp_epilogue *ep, float *y) {
  int64_t cg = d->c / d->group, mg = d->m / d->group, P = d->oh * d->ow;
  for (int64_t n = 0; n < d->n; n++)
    for (int64_t m = 0; m < d->m; m++)
      for (int64_t oh = 0; oh < d->oh; oh++)
        for (int64_t ow = 0; ow < d->ow; ow++) {
          double acc = 0;
          int64_t g = m / mg;
          for (int64_t ic = 0; ic < cg; ic++)
            for (int64_t kh = 0; kh < d->kh; kh++)
              for (int64_t kw = 0; kw < d->kw; kw++) {
                int64_t ih = oh * d->sh - d->ph + kh * d->dh, iw = ow * d->sw - d->pw + kw * d->dw;
                if (ih < 0 || ih >= d->h || iw < 0 || iw >= d->w) continue;
                acc += (double)x[((n * d->c + g * cg + ic) * d->h + ih) * d->w + iw] *
                       w[((m * cg + ic) * d->kh + kh) * d->kw + kw];
              }
          /* the epilogue as nnp_conv2d_run defines it: rows are channels of image n */
          nnp_epilogue loc = *ep;
          if (loc.residual) loc.residual += n * d->m * P;
          loc.ld_res = P;
          y[(n * d->m + m) * P + oh * d->ow + ow] = nnp_epilogue_apply(&loc, m, oh * d->ow + ow, (float)acc);
        }
}

#endif
