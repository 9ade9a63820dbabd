/* NCHW Winograd F(2x2, 3x3) (kernels/winograd_nchw.h):
 *  - through nnp_conv2d_prepare_pick(WINOGRAD) against the double-precision naive
 *    convolution, on random shapes: planes 1x1 to 40x40 with odd sizes (a last tile
 *    half outside), padding 0 or 1 at each of the four sides, channels 1..40 (GEMM row
 *    and column panels ragged), batch 1..3, every epilogue, threads 1..4, in place and
 *    with the residual as the output itself;
 *  - the AVX2 transforms against the portable ones: the same bits (same adds in the
 *    same order), on shapes with tile rows of 1..40 tiles (vectors with a ragged end).
 * On a CPU without AVX2 + FMA (or under NNP_CPU_FEATURES=generic) the conv2d entry
 * never picks Winograd: that is checked instead. */
#include <string.h>

#include "conv_naive.h"
#include "kernel_test_util.h"
#include "kernels/conv.h"
#include "kernels/dispatch.h"
#include "kernels/winograd_nchw.h"
#include "nnperf/alloc.h"
#include "test.h"

static nnp_conv2d_desc random_shape(int trial) {
  nnp_conv2d_desc d = {.kh = 3, .kw = 3, .sh = 1, .sw = 1, .dh = 1, .dw = 1, .group = 1};
  d.n = kt_int(1, 3);
  d.c = trial % 3 ? kt_int(1, 40) : 16 * kt_int(1, 2);
  d.m = trial % 4 ? kt_int(1, 40) : 6 * kt_int(1, 5);
  d.h = trial % 9 == 0 ? kt_int(1, 3) : kt_int(1, 40);
  d.w = trial % 9 == 1 ? kt_int(1, 3) : kt_int(1, 40);
  d.ph = kt_int(0, 1);
  d.pw = kt_int(0, 1);
  const int64_t pe_h = kt_int(0, 1), pe_w = kt_int(0, 1); /* end padding: "valid", "same" or asymmetric */
  d.oh = d.h + d.ph + pe_h - 2;
  d.ow = d.w + d.pw + pe_w - 2;
  return d;
}

static void conv_case(const nnp_conv2d_desc *d, int trial, nnp_threadpool *const *pools) {
  const int64_t nx = d->n * d->c * d->h * d->w, ny = d->n * d->m * d->oh * d->ow, nw = d->m * d->c * 9;
  float *x = nnp_malloc((size_t)nx * 4), *w = nnp_malloc((size_t)nw * 4), *bias = nnp_malloc((size_t)d->m * 4);
  float *res = nnp_malloc((size_t)ny * 4), *want = nnp_malloc((size_t)ny * 4);
  float *got = nnp_malloc((size_t)(ny > nx ? ny : nx) * 4);
  kt_fill(x, nx);
  kt_fill(w, nw);
  kt_fill(bias, d->m);
  kt_fill(res, ny);
  nnp_epilogue ep = {.act = trial % 5, .act_min = -0.2f, .act_max = 0.9f};
  if (trial % 3 != 2) {
    ep.bias = bias;
    ep.bias_kind = NNP_BIAS_ROW;
  }
  const bool res_in_y = trial % 7 == 5;
  if (trial % 2 || res_in_y) ep.residual = res;
  kt_conv_naive(d, x, w, &ep, want);
  nnp_conv2d_kernel *k = NULL;
  CHECK_OK(nnp_conv2d_prepare_pick(d, w, false, NNP_CONV_PICK_WINOGRAD, &k));
  CHECK(nnp_conv2d_algo(k) == NNP_CONV_WINOGRAD);
  const bool inplace = nx == ny && trial % 4 == 3 && !res_in_y;
  void *scratch = nnp_aligned_alloc(nnp_conv2d_scratch_bytes(k) + 64);
  for (int t = 0; t < 4; t++) {
    memset(got, 0xff, (size_t)ny * 4);
    if (inplace) memcpy(got, x, (size_t)nx * 4);
    if (res_in_y) {
      memcpy(got, res, (size_t)ny * 4);
      ep.residual = got;
    }
    nnp_conv2d_run(k, inplace ? got : x, got, &ep, scratch, pools[t]);
    const double err = kt_max_err(got, want, ny);
    CHECK_MSG(err < 1e-4,
              "winograd trial %d n%lld c%lld %lldx%lld -> m%lld %lldx%lld p%lld,%lld act %d bias %d res %d (in y %d) "
              "inplace %d threads %d: err %g",
              trial, (long long)d->n, (long long)d->c, (long long)d->h, (long long)d->w, (long long)d->m,
              (long long)d->oh, (long long)d->ow, (long long)d->ph, (long long)d->pw, ep.act, ep.bias != NULL,
              ep.residual != NULL, res_in_y, inplace, t + 1, err);
  }
  nnp_aligned_free(scratch);
  nnp_conv2d_destroy(k);
  nnp_free(x);
  nnp_free(w);
  nnp_free(bias);
  nnp_free(res);
  nnp_free(want);
  nnp_free(got);
}

/* The whole kernel with the AVX2 transforms and with the portable ones: equal bits. */
static void transforms_case(const nnp_conv2d_desc *d, int trial) {
  const int64_t nx = d->n * d->c * d->h * d->w, ny = d->n * d->m * d->oh * d->ow, nw = d->m * d->c * 9;
  float *x = nnp_malloc((size_t)nx * 4), *w = nnp_malloc((size_t)nw * 4), *bias = nnp_malloc((size_t)d->m * 4);
  float *res = nnp_malloc((size_t)ny * 4), *y[2] = {nnp_malloc((size_t)ny * 4), nnp_malloc((size_t)ny * 4)};
  kt_fill(x, nx);
  kt_fill(w, nw);
  kt_fill(bias, d->m);
  kt_fill(res, ny);
  static const int acts[4] = {NNP_ACT_NONE, NNP_ACT_RELU, NNP_ACT_CLIP, NNP_ACT_HARDSWISH};
  nnp_epilogue ep = {.bias = bias, .bias_kind = NNP_BIAS_ROW, .act = acts[trial % 4], .act_min = -0.2f,
                     .act_max = 0.9f, .residual = trial % 2 ? res : NULL};
  for (int generic = 0; generic < 2; generic++) {
    nnp_wnc *k = NULL;
    CHECK_OK(nnp_wnc_prepare(d, w, generic, &k));
    void *scratch = nnp_aligned_alloc(nnp_wnc_scratch_bytes(k) + 64);
    memset(y[generic], 0xff, (size_t)ny * 4);
    nnp_wnc_run(k, x, y[generic], trial % 5 == 4 ? NULL : &ep, scratch, NULL);
    nnp_aligned_free(scratch);
    nnp_wnc_destroy(k);
  }
  CHECK_MSG(!memcmp(y[0], y[1], (size_t)ny * 4), "winograd transforms trial %d c%lld %lldx%lld -> m%lld %lldx%lld: "
            "AVX2 and generic differ", trial, (long long)d->c, (long long)d->h, (long long)d->w, (long long)d->m,
            (long long)d->oh, (long long)d->ow);
  nnp_free(x);
  nnp_free(w);
  nnp_free(bias);
  nnp_free(res);
  nnp_free(y[0]);
  nnp_free(y[1]);
}

int main(void) {
  if (nnp_dispatch_isa(NNP_KF_WINOGRAD) != NNP_ISA_AVX2 || !nnp_wnc_avx2_built()) {
    /* the conv2d entry must then keep its other algorithms */
    const nnp_conv2d_desc d = {.n = 1, .c = 32, .h = 28, .w = 28, .m = 32, .oh = 28, .ow = 28, .kh = 3, .kw = 3,
                               .sh = 1, .sw = 1, .ph = 1, .pw = 1, .dh = 1, .dw = 1, .group = 1};
    static float w[32 * 32 * 9];
    nnp_conv2d_kernel *k = NULL;
    CHECK_OK(nnp_conv2d_prepare_pick(&d, w, false, NNP_CONV_PICK_WINOGRAD, &k));
    CHECK(nnp_conv2d_algo(k) != NNP_CONV_WINOGRAD);
    nnp_conv2d_destroy(k);
    printf("skip: the dispatch table runs no NCHW Winograd here (winograd %s); checked that it is not picked\n",
           nnp_isa_name(nnp_dispatch_isa(NNP_KF_WINOGRAD)));
    TEST_MAIN_END();
  }
  nnp_threadpool *pools[4] = {NULL};
  for (int t = 1; t < 4; t++) CHECK_OK(nnp_threadpool_create(t + 1, &pools[t]));
  int ran = 0;
  for (int trial = 0; trial < 300; trial++) {
    const nnp_conv2d_desc d = random_shape(trial);
    if (d.oh < 1 || d.ow < 1) continue;
    CHECK(nnp_wnc_applies(&d));
    conv_case(&d, trial, pools);
    ran++;
  }
  for (int trial = 0; trial < 120; trial++) {
    nnp_conv2d_desc d = random_shape(trial);
    d.w = kt_int(1, 80); /* tile rows of up to 40 tiles: five vectors, the last ragged */
    d.ow = d.w + d.pw + (trial & 1) - 2;
    d.n = 1;
    if (d.oh < 1 || d.ow < 1) continue;
    transforms_case(&d, trial);
  }
  /* not served: strides, dilations, groups, other kernel sizes, padding 2 */
  nnp_conv2d_desc no = {.n = 1, .c = 8, .h = 9, .w = 9, .m = 8, .oh = 9, .ow = 9, .kh = 3, .kw = 3, .sh = 1,
                        .sw = 1, .ph = 1, .pw = 1, .dh = 1, .dw = 1, .group = 1};
  CHECK(nnp_wnc_applies(&no));
  no.group = 2;
  CHECK(!nnp_wnc_applies(&no));
  no.group = 1, no.sh = 2, no.oh = 5;
  CHECK(!nnp_wnc_applies(&no));
  no.sh = 1, no.oh = 9, no.dw = 2, no.ow = 7;
  CHECK(!nnp_wnc_applies(&no));
  no.dw = 1, no.ow = 11, no.pw = 2;
  CHECK(!nnp_wnc_applies(&no));
  /* the rule of nnp_wnc_pays at its edges (kernels.md's grid) */
  nnp_conv2d_desc r18 = {.n = 1, .c = 64, .h = 56, .w = 56, .m = 64, .oh = 56, .ow = 56, .kh = 3, .kw = 3,
                         .sh = 1, .sw = 1, .ph = 1, .pw = 1, .dh = 1, .dw = 1, .group = 1};
  CHECK(nnp_wnc_pays(&r18));
  nnp_conv2d_kernel *auto_k = NULL;
  static float w0[64 * 64 * 9];
  CHECK_OK(nnp_conv2d_prepare(&r18, w0, false, &auto_k));
  CHECK(nnp_conv2d_algo(auto_k) == NNP_CONV_WINOGRAD); /* AUTO takes it where it pays */
  nnp_conv2d_destroy(auto_k);
  nnp_conv2d_desc big = r18;
  big.h = big.w = big.oh = big.ow = 512; /* V and M of 537 MB: the direct kernel stays */
  CHECK(!nnp_wnc_pays(&big));
  nnp_conv2d_desc thin = r18;
  thin.c = 16, thin.m = 512; /* 56x56, 16 -> 512: measured slower */
  CHECK(!nnp_wnc_pays(&thin));
  thin.m = 16, thin.c = 512, thin.h = thin.w = thin.oh = thin.ow = 7; /* few outputs on a small plane */
  CHECK(!nnp_wnc_pays(&thin));
  printf("NCHW Winograd: %d shapes against the naive convolution\n", ran);
  for (int t = 1; t < 4; t++) nnp_threadpool_destroy(pools[t]);
  TEST_MAIN_END();
}
