/* NCHW Winograd F(2x2, 3x3) (kernels/winograd_nchw.h):
 *  - through nnp_conv2d_prepare_pick(WINOGRAD) against the double-precision naive
 *    convolution, on random shapes: planes 1x1 to 40x40 with odd sizes (a last tile
 *    half outside), padding 0 or 1 at each of the four sides, channels 1..40 (GEMM row
 *    and column panels ragged), batch 1..3, every epilogue, threads 1..4, in place and
 *    with the residual as the output itself;
 *  - the kernel with bands of 1..3 tile rows forced (each band through the three
 *    stages in its own scratch slot), threads 1..4, and in place (no bands then);
 *  - the AVX2 transforms against the portable ones: the same bits (same adds in the
 *    same order), on shapes with tile rows of 1..40 tiles (vectors with a ragged end),
 *    with and without bands.
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
  if (trial % 4 == 3) { /* "same", C == M: conv_case runs these in place too */
    d.ph = d.pw = 1;
    d.oh = d.h;
    d.ow = d.w;
    d.m = d.c;
  }
  if (d.c == 1 && d.m == 1) d.m = d.c = 2; /* group == C == M == 1 is a depthwise conv */
  return d;
}

/* One case's buffers: input, weights, bias, residual, the oracle's output and ours. */
typedef struct conv_bufs {
  int64_t nx, ny;
  float *x, *w, *bias, *res, *want, *got;
} conv_bufs;

/* The conv2d entry or the kernel itself (k: bands forced), on the same arguments. */
static void run_either(const nnp_conv2d_kernel *c, const nnp_wnc *k, const float *x, float *y,
                       const nnp_epilogue *ep, void *scratch, nnp_threadpool *tp) {
  if (c) nnp_conv2d_run(c, x, y, ep, scratch, tp);
  else nnp_wnc_run(k, x, y, ep, scratch, tp);
}

/* Runs on 1..4 threads, in place or with the residual as the output where asked, each
 * against the oracle. */
static void check_runs(const char *what, const nnp_conv2d_desc *d, int trial, const nnp_conv2d_kernel *c,
                       const nnp_wnc *k, size_t scratch_bytes, conv_bufs *b, nnp_epilogue *ep, bool inplace,
                       bool res_in_y, nnp_threadpool *const *pools) {
  void *scratch = nnp_aligned_alloc(scratch_bytes + 64);
  for (int t = 0; t < 4; t++) {
    memset(b->got, 0xff, (size_t)b->ny * 4);
    if (inplace) memcpy(b->got, b->x, (size_t)b->nx * 4);
    if (res_in_y) { /* the residual is the output itself (an Add fused in place) */
      memcpy(b->got, b->res, (size_t)b->ny * 4);
      ep->residual = b->got;
    }
    run_either(c, k, inplace ? b->got : b->x, b->got, ep, scratch, pools[t]);
    const double err = kt_max_err(b->got, b->want, b->ny);
    CHECK_MSG(err < 1e-4,
              "winograd %s trial %d n%lld c%lld %lldx%lld -> m%lld %lldx%lld p%lld,%lld act %d bias %d res %d (in y %d) "
              "inplace %d threads %d: err %g",
              what, trial, (long long)d->n, (long long)d->c, (long long)d->h, (long long)d->w, (long long)d->m,
              (long long)d->oh, (long long)d->ow, (long long)d->ph, (long long)d->pw, ep->act, ep->bias != NULL,
              ep->residual != NULL, res_in_y, inplace, t + 1, err);
  }
  nnp_aligned_free(scratch);
}

static void conv_case(const nnp_conv2d_desc *d, int trial, nnp_threadpool *const *pools) {
  conv_bufs b = {.nx = d->n * d->c * d->h * d->w, .ny = d->n * d->m * d->oh * d->ow};
  const int64_t nw = d->m * d->c * 9;
  b.x = nnp_malloc((size_t)b.nx * 4), b.w = nnp_malloc((size_t)nw * 4), b.bias = nnp_malloc((size_t)d->m * 4);
  b.res = nnp_malloc((size_t)b.ny * 4), b.want = nnp_malloc((size_t)b.ny * 4);
  b.got = nnp_malloc((size_t)(b.ny > b.nx ? b.ny : b.nx) * 4);
  kt_fill(b.x, b.nx);
  kt_fill(b.w, nw);
  kt_fill(b.bias, d->m);
  kt_fill(b.res, b.ny);
  nnp_epilogue ep = {.act = trial % 6, .act_min = -0.2f, .act_max = 0.9f};
  if (trial % 3 != 2) {
    ep.bias = b.bias;
    ep.bias_kind = NNP_BIAS_ROW;
  }
  const bool res_in_y = trial % 7 == 5;
  if (trial % 2 || res_in_y) ep.residual = b.res;
  kt_conv_naive(d, b.x, b.w, &ep, b.want);
  const bool inplace = b.nx == b.ny && trial % 4 == 3 && !res_in_y;
  nnp_conv2d_kernel *c = NULL;
  CHECK_OK(nnp_conv2d_prepare_pick(d, b.w, false, NNP_CONV_PICK_WINOGRAD, &c));
  CHECK(nnp_conv2d_algo(c) == NNP_CONV_WINOGRAD);
  check_runs("conv2d", d, trial, c, NULL, nnp_conv2d_scratch_bytes(c), &b, &ep, inplace, res_in_y, pools);
  nnp_conv2d_destroy(c);
  /* the kernel itself with bands of 1..3 tile rows forced (one band per slot, the
   * stages without barriers), in place too (where it must not go by bands) */
  nnp_wnc *k = NULL;
  CHECK_OK(nnp_wnc_prepare(d, b.w, false, 1 + trial % 3, &k));
  if (res_in_y) ep.residual = b.res;
  check_runs("bands", d, trial, NULL, k, nnp_wnc_scratch_bytes(k), &b, &ep, inplace, res_in_y, pools);
  nnp_wnc_destroy(k);
  nnp_free(b.x);
  nnp_free(b.w);
  nnp_free(b.bias);
  nnp_free(b.res);
  nnp_free(b.want);
  nnp_free(b.got);
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
    CHECK_OK(nnp_wnc_prepare(d, w, generic, trial % 4 - 1, &k)); /* none, or bands of 1..2 rows */
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
