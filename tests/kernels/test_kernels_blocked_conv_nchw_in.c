/* The NCHW-in, NCHW16c-out convolution (kernels/blocked_conv_nchw_in.h): the generic
 * kernel against a naive NCHW convolution (in double), reblocked, and the vector tile (AVX-512 or AVX2)
 * against the generic kernel, over random shapes: 1..4 input channels, output channels
 * ragged against 16, widths past the 14-pixel tile, strides 1..3, kernels 1..7 (square
 * and not), padding, dilation, every epilogue with and without bias and residual
 * (the residual also as the output itself), threads 1..3. Padded output lanes must be 0;
 * the unsupported shapes are declined. */
#include <string.h>

#include "kernel_test_util.h"
#include "kernels/blocked_conv.h"
#include "kernels/blocked_conv_nchw_in.h"
#include "kernels/cpu.h"
#include "kernels/dispatch.h"
#include "nnperf/alloc.h"
#include "test.h"

static void naive(const nnp_conv2d_desc *d, const float *x, const float *w, const float *bias, const float *res,
                  const nnp_epilogue *ep, float *y) {
  const int64_t P = d->oh * d->ow;
  for (int64_t n = 0; n < d->n; n++)
    for (int64_t m = 0; m < d->m; m++)
      for (int64_t oh = 0; oh < d->oh; oh++)
        for (int64_t ow = 0; ow < d->ow; ow++) {
          double acc = 0;
          for (int64_t ic = 0; ic < d->c; ic++)
            for (int64_t kh = 0; kh < d->kh; kh++)
              for (int64_t kw = 0; kw < d->kw; kw++) {
                const int64_t ih = oh * d->sh - d->ph + kh * d->dh, iw = ow * d->sw - d->pw + kw * d->dw;
                if (ih < 0 || ih >= d->h || iw < 0 || iw >= d->w) continue;
                acc += (double)x[((n * d->c + ic) * d->h + ih) * d->w + iw] * w[((m * d->c + ic) * d->kh + kh) * d->kw + kw];
              }
          const int64_t o = (n * d->m + m) * P + oh * d->ow + ow;
          float v = (float)acc + (bias ? bias[m] : 0.0f);
          if (res) v += res[o];
          y[o] = nnp_act_apply(ep, v);
        }
}

/* every lane of every pixel past channel m is 0 */
static bool padded_lanes_zero(const float *yb, int64_t n, int64_t m, int64_t P) {
  const int64_t mb = nnp_blocks(m);
  for (int64_t i = 0; i < n; i++)
    for (int64_t p = 0; p < P; p++)
      for (int64_t ch = m; ch < mb * NNP_BLOCK; ch++)
        if (yb[((i * mb + ch / NNP_BLOCK) * P + p) * NNP_BLOCK + ch % NNP_BLOCK] != 0.0f) return false;
  return true;
}

static void one_case(int trial, nnp_threadpool *const *pools) {
  nnp_conv2d_desc d = {.n = kt_int(1, 2), .c = kt_int(1, NNP_BCONV_NCHW_MAX_C), .h = kt_int(1, 20),
                       .w = kt_int(1, 40), .m = kt_int(1, 70), .group = 1};
  d.kh = kt_int(0, 3) * 2 + 1;
  d.kw = trial % 5 == 2 ? kt_int(1, 7) : d.kh;
  d.sh = d.sw = trial % 9 == 4 ? 3 : kt_int(1, 2);
  d.dh = d.dw = trial % 7 == 6 ? 2 : 1;
  d.ph = kt_int(0, d.kh / 2), d.pw = kt_int(0, d.kw / 2);
  const int64_t eh = (d.kh - 1) * d.dh + 1, ew = (d.kw - 1) * d.dw + 1;
  if (d.h + 2 * d.ph < eh) d.h = eh;
  if (d.w + 2 * d.pw < ew) d.w = ew;
  d.oh = (d.h + 2 * d.ph - eh) / d.sh + 1;
  d.ow = (d.w + 2 * d.pw - ew) / d.sw + 1;
  const int64_t P = d.oh * d.ow, nx = d.n * d.c * d.h * d.w, ny = d.n * d.m * P, nw = d.m * d.c * d.kh * d.kw;
  const int64_t nyb = d.n * nnp_blocks(d.m) * P * NNP_BLOCK;
  float *x = nnp_malloc((size_t)nx * 4), *w = nnp_malloc((size_t)nw * 4), *bias = nnp_malloc((size_t)d.m * 4);
  float *res = nnp_malloc((size_t)ny * 4), *want = nnp_malloc((size_t)ny * 4), *got = nnp_malloc((size_t)ny * 4);
  float *rb = nnp_malloc((size_t)nyb * 4), *yg = nnp_malloc((size_t)nyb * 4), *yf = nnp_malloc((size_t)nyb * 4);
  kt_fill(x, nx);
  kt_fill(w, nw);
  kt_fill(bias, d.m);
  kt_fill(res, ny);
  const nnp_epilogue ep = {.act = trial % 6, .act_min = -0.2f, .act_max = 0.9f};
  const float *b = trial % 3 != 2 ? bias : NULL;
  const bool with_r = trial % 2;
  naive(&d, x, w, b, with_r ? res : NULL, &ep, want);
  nnp_nchw_to_blocked(res, rb, d.n, d.m, P, NULL);

  nnp_bconv_nchw_kernel *kg = NULL, *kf = NULL;
  CHECK_OK(nnp_bconv_nchw_prepare(&d, w, b, ep.act, ep.act_min, ep.act_max, true, &kg));
  CHECK_OK(nnp_bconv_nchw_prepare(&d, w, b, ep.act, ep.act_min, ep.act_max, false, &kf));
  memset(yg, 0xff, (size_t)nyb * 4); /* NaN: every element must be written */
  nnp_bconv_nchw_run(kg, x, yg, with_r ? rb : NULL, pools[trial % 3]);
  nnp_blocked_to_nchw(yg, got, d.n, d.m, P, NULL);
  const double eg = kt_max_err(got, want, ny);
  CHECK_MSG(eg < 1e-4 && padded_lanes_zero(yg, d.n, d.m, P),
            "generic vs naive: trial %d n%lld c%lld %lldx%lld m%lld k%lldx%lld s%lld p%lld,%lld d%lld: err %g", trial,
            (long long)d.n, (long long)d.c, (long long)d.h, (long long)d.w, (long long)d.m, (long long)d.kh,
            (long long)d.kw, (long long)d.sh, (long long)d.ph, (long long)d.pw, (long long)d.dh, eg);
  /* the fast tile, with the residual as the output itself when there is one (in place) */
  float *yout = yf;
  if (with_r) {
    memcpy(yf, rb, (size_t)nyb * 4);
  } else {
    memset(yf, 0xff, (size_t)nyb * 4);
  }
  nnp_bconv_nchw_run(kf, x, yout, with_r ? yf : NULL, pools[(trial + 1) % 3]);
  double ef = kt_max_err(yf, yg, nyb);
  CHECK_MSG(ef < 1e-5 && padded_lanes_zero(yf, d.n, d.m, P),
            "%s vs generic: trial %d n%lld c%lld %lldx%lld m%lld k%lldx%lld s%lld p%lld,%lld d%lld: err %g",
            nnp_isa_name(nnp_dispatch_isa(NNP_KF_BLOCKED_CONV)), trial, (long long)d.n, (long long)d.c, (long long)d.h,
            (long long)d.w, (long long)d.m, (long long)d.kh, (long long)d.kw, (long long)d.sh, (long long)d.ph,
            (long long)d.pw, (long long)d.dh, ef);
  nnp_bconv_nchw_destroy(kg);
  nnp_bconv_nchw_destroy(kf);
  nnp_free(x), nnp_free(w), nnp_free(bias), nnp_free(res), nnp_free(want), nnp_free(got);
  nnp_free(rb), nnp_free(yg), nnp_free(yf);
}

static void declines(void) {
  float w[5 * 2 * 9] = {0};
  nnp_bconv_nchw_kernel *k = NULL;
  nnp_conv2d_desc d = {.n = 1, .c = NNP_BCONV_NCHW_MAX_C + 1, .h = 5, .w = 5, .m = 2, .oh = 3, .ow = 3, .kh = 3,
                       .kw = 3, .sh = 1, .sw = 1, .dh = 1, .dw = 1, .group = 1};
  CHECK(nnp_bconv_nchw_prepare(&d, w, NULL, 0, 0, 0, false, &k) == NNP_ERR_UNSUPPORTED && !k);
  nnp_clear_error();
  d.c = 2;
  d.group = 2;
  CHECK(nnp_bconv_nchw_prepare(&d, w, NULL, 0, 0, 0, false, &k) == NNP_ERR_UNSUPPORTED && !k);
  nnp_clear_error();
}

int main(void) {
  printf("kernel isa: %s\n", nnp_cpu_kernel_isa());
  nnp_threadpool *pools[3] = {NULL, NULL, NULL};
  for (int t = 1; t < 3; t++) CHECK_OK(nnp_threadpool_create(t + 1, &pools[t]));
  for (int trial = 0; trial < 200; trial++) one_case(trial, pools);
  declines();
  for (int t = 1; t < 3; t++) nnp_threadpool_destroy(pools[t]);
  TEST_MAIN_END();
}
