/* The blocked (NCHW16c) convolution: the vector tiles the dispatch table picks (AVX-512's,
 * or AVX2's 6-pixel tiles) against the generic C kernel, and
 * the generic kernel against a naive NCHW convolution (in double) reblocked, over random
 * shapes: channel counts ragged against 16, strides 1 to 3, 1x1 / 3x3 / 5x5 / 7x7,
 * padding, dilation, dense and depthwise, every epilogue with and without bias and
 * residual, threads 1..3, and the Winograd path (kernels/winograd.h) on the 3x3 stride-1
 * layers it takes. The padded lanes of the output must be 0. */
#include <string.h>

#include "conv_naive.h"
#include "kernel_test_util.h"
#include "kernels/blocked_conv.h"
#include "kernels/cpu.h"
#include "kernels/dispatch.h"
#include "nnperf/alloc.h"
#include "test.h"

static int cases, wino_cases;

static void run_case(const nnp_conv2d_desc *d, int trial, nnp_threadpool *const *pools) {
  const int64_t hw = d->h * d->w, P = d->oh * d->ow;
  const int64_t nx = d->n * d->c * hw, ny = d->n * d->m * P, nw = d->m * (d->c / d->group) * d->kh * d->kw;
  const int64_t nxb = d->n * nnp_blocks(d->c) * hw * NNP_BLOCK, nyb = d->n * nnp_blocks(d->m) * P * NNP_BLOCK;
  float *x = nnp_malloc((size_t)nx * 4), *w = nnp_malloc((size_t)nw * 4), *bias = nnp_malloc((size_t)d->m * 4);
  float *res = nnp_malloc((size_t)ny * 4), *want = nnp_malloc((size_t)ny * 4), *got = nnp_malloc((size_t)(ny > nx ? ny : nx) * 4);
  float *xb = nnp_malloc((size_t)nxb * 4), *rb = nnp_malloc((size_t)nyb * 4);
  float *yg = nnp_malloc((size_t)nyb * 4), *yf = nnp_malloc((size_t)nyb * 4);
  kt_fill(x, nx);
  kt_fill(w, nw);
  kt_fill(bias, d->m);
  kt_fill(res, ny);
  const int act = trial % 6; /* nnp_act: none .. SiLU */
  nnp_epilogue ep = {.act = act, .act_min = trial % 7 == 3 ? 0.1f : -0.2f, .act_max = 0.9f};
  const float *b = trial % 3 != 2 ? bias : NULL;
  const float *r = trial % 2 ? res : NULL;
  nnp_epilogue full = ep; /* the oracle's: bias and residual as NCHW epilogue terms */
  full.bias = b;
  full.bias_kind = b ? NNP_BIAS_ROW : NNP_BIAS_NONE;
  full.residual = r;
  kt_conv_naive(d, x, w, &full, want);
  nnp_nchw_to_blocked(x, xb, d->n, d->c, hw, pools[trial % 3]);
  nnp_nchw_to_blocked(res, rb, d->n, d->m, P, NULL);
  /* the reorders are each other's inverse */
  nnp_blocked_to_nchw(xb, got, d->n, d->c, hw, pools[(trial + 1) % 3]);
  CHECK(!memcmp(got, x, (size_t)nx * 4));

  nnp_bconv_kernel *kg = NULL, *kf = NULL;
  CHECK_OK(nnp_bconv_prepare(d, w, b, act, ep.act_min, ep.act_max, true, &kg));
  CHECK(nnp_bconv_generic(kg));
  CHECK(nnp_bconv_depthwise(kg) == (d->group > 1 && d->group == d->c && d->group == d->m));
  CHECK(nnp_bconv_scratch_bytes(kg) == 0);
  nnp_bconv_run(kg, xb, yg, r ? rb : NULL, NULL, NULL);
  nnp_blocked_to_nchw(yg, got, d->n, d->m, P, NULL);
  double e = kt_max_err(got, want, ny);
  if (!(e < 1e-4)) {
    printf("generic vs naive: n%lld c%lld %lldx%lld m%lld k%lldx%lld s%lld p%lld d%lld g%lld act %d: err %g\n",
           (long long)d->n, (long long)d->c, (long long)d->h, (long long)d->w, (long long)d->m, (long long)d->kh,
           (long long)d->kw, (long long)d->sh, (long long)d->ph, (long long)d->dh, (long long)d->group, act, e);
    CHECK(0);
  }
  /* padded lanes of the last output block are zero */
  if (d->m % NNP_BLOCK) {
    const int64_t mb = nnp_blocks(d->m);
    bool zero = true;
    for (int64_t n = 0; n < d->n; n++)
      for (int64_t p = 0; p < P; p++)
        for (int64_t l = d->m % NNP_BLOCK; l < NNP_BLOCK; l++)
          zero &= yg[((n * mb + mb - 1) * P + p) * NNP_BLOCK + l] == 0.0f;
    CHECK(zero);
  }
  const nnp_isa isa = nnp_dispatch_isa(NNP_KF_BLOCKED_CONV);
  if (isa == NNP_ISA_AVX512 || isa == NNP_ISA_AVX2) {
    CHECK_OK(nnp_bconv_prepare(d, w, b, act, ep.act_min, ep.act_max, false, &kf));
    CHECK(!nnp_bconv_generic(kf));
    CHECK(nnp_bconv_avx2(kf) == (isa == NNP_ISA_AVX2));
    /* the direct tiles sum in the generic kernel's order (rounding differs little);
     * Winograd rounds differently (transforms, 16 partial products): the tolerance of
     * generic vs naive. A wrong transform coefficient errs by O(1). */
    const bool wino = nnp_bconv_winograd(kf);
    CHECK((nnp_bconv_scratch_bytes(kf) > 0) == wino);
    void *scratch = nnp_aligned_alloc(nnp_bconv_scratch_bytes(kf) + 64);
    const double tol = wino ? 1e-4 : 1e-5;
    wino_cases += wino;
    for (int t = 0; t < 3; t++) {
      memset(yf, 0xff, (size_t)nyb * 4); /* NaN: every lane must be written */
      nnp_bconv_run(kf, xb, yf, r ? rb : NULL, scratch, pools[t]);
      double ef = kt_max_err(yf, yg, nyb);
      if (!(ef < tol)) {
        printf("%s vs generic (threads %d): n%lld c%lld %lldx%lld m%lld k%lldx%lld s%lld p%lld g%lld act %d: "
               "err %g\n",
               nnp_isa_name(isa), t + 1, (long long)d->n, (long long)d->c, (long long)d->h, (long long)d->w, (long long)d->m,
               (long long)d->kh, (long long)d->kw, (long long)d->sh, (long long)d->ph, (long long)d->group, act, ef);
        CHECK(0);
        break;
      }
    }
    /* residual as the output itself (in place over R) */
    if (r) {
      memcpy(yf, rb, (size_t)nyb * 4);
      nnp_bconv_run(kf, xb, yf, yf, scratch, pools[1]);
      CHECK(kt_max_err(yf, yg, nyb) < tol);
    }
    nnp_aligned_free(scratch);
  }
  nnp_bconv_destroy(kg);
  nnp_bconv_destroy(kf);
  nnp_free(x), nnp_free(w), nnp_free(bias), nnp_free(res), nnp_free(want), nnp_free(got);
  nnp_free(xb), nnp_free(rb), nnp_free(yg), nnp_free(yf);
  cases++;
}

static void out_size(nnp_conv2d_desc *d) {
  d->oh = (d->h + 2 * d->ph - (d->kh - 1) * d->dh - 1) / d->sh + 1;
  d->ow = (d->w + 2 * d->pw - (d->kw - 1) * d->dw - 1) / d->sw + 1;
}

/* NCHW -> NCHW16c against its definition, element by element: the AVX-512 transpose path
 * (16 pixels at a time, masked tails, chunk edges at 256 pixels) and the padded lanes
 * zero, for channel counts around block edges and planes around 16 and 256. */
static void reorder_cases(nnp_threadpool *const *pools) {
  static const int64_t cs[] = {1, 3, 15, 16, 17, 33, 40}, hws[] = {1, 15, 16, 17, 255, 256, 300, 784};
  for (size_t ci = 0; ci < sizeof cs / sizeof cs[0]; ci++)
    for (size_t hi = 0; hi < sizeof hws / sizeof hws[0]; hi++) {
      const int64_t n = 2, c = cs[ci], hw = hws[hi], cb = nnp_blocks(c);
      float *x = nnp_malloc((size_t)(n * c * hw) * 4), *y = nnp_malloc((size_t)(n * cb * hw * NNP_BLOCK) * 4);
      kt_fill(x, n * c * hw);
      memset(y, 0xff, (size_t)(n * cb * hw * NNP_BLOCK) * 4); /* NaN: every element must be written */
      nnp_nchw_to_blocked(x, y, n, c, hw, pools[(ci + hi) % 3]);
      int64_t bad = -1;
      for (int64_t i = 0; i < n && bad < 0; i++)
        for (int64_t ch = 0; ch < cb * NNP_BLOCK && bad < 0; ch++)
          for (int64_t q = 0; q < hw; q++) {
            const float want = ch < c ? x[(i * c + ch) * hw + q] : 0.0f;
            const int64_t at = ((i * cb + ch / NNP_BLOCK) * hw + q) * NNP_BLOCK + ch % NNP_BLOCK;
            if (memcmp(&y[at], &want, 4)) {
              bad = at;
              break;
            }
          }
      CHECK_MSG(bad < 0, "to blocked: c %lld hw %lld: element %lld wrong", (long long)c, (long long)hw, (long long)bad);
      nnp_free(x);
      nnp_free(y);
    }
}

int main(void) {
  nnp_threadpool *pools[3] = {NULL, NULL, NULL};
  for (int t = 1; t < 3; t++) CHECK_OK(nnp_threadpool_create(t + 1, &pools[t]));
  printf("kernel isa: %s\n", nnp_cpu_kernel_isa());
  reorder_cases(pools);
  static const int ks[] = {1, 3, 5, 7};
  for (int trial = 0; trial < 160; trial++) {
    /* widths past 2 x 14: two and more wide tiles per row, and their ragged last tile */
    nnp_conv2d_desc d = {.n = kt_int(1, 2), .h = kt_int(1, 19), .w = kt_int(1, trial % 3 == 1 ? 45 : 21)};
    const bool dw = trial % 4 == 3;
    d.kh = d.kw = ks[kt_int(0, trial % 8 == 0 ? 3 : 2)];
    if (trial % 9 == 5) d.kw = ks[kt_int(0, 2)]; /* non-square */
    d.sh = d.sw = kt_int(1, trial % 5 == 2 ? 3 : 2); /* stride 3: the 8-pixel border tile's rows */
    d.dh = d.dw = trial % 11 == 7 ? 2 : 1;
    d.ph = kt_int(0, d.kh / 2);
    d.pw = kt_int(0, d.kw / 2);
    d.c = kt_int(1, 40);
    d.m = dw ? d.c : kt_int(1, 50);
    d.group = dw ? d.c : 1;
    if (dw && d.c == 1) d.group = 1; /* one channel: the dense path */
    if (trial % 7 == 4 && !dw) { /* groups of whole blocks: 1 to 3 output blocks per group (odd: single-block tasks) */
      d.group = kt_int(2, 4);
      d.c = d.group * NNP_BLOCK * kt_int(1, 2);
      d.m = d.group * NNP_BLOCK * kt_int(1, 3);
    }
    if (trial % 7 == 6 && !dw) { /* groups of any width: windows of blocks with zeros between groups */
      const int64_t cg = kt_int(2, 24), mg = cg * kt_int(1, 2);
      d.group = kt_int(2, 5);
      d.c = d.group * cg; /* may end inside a block */
      d.m = d.group * mg;
      if (!nnp_bconv_groups_fit(&d)) d.group = 1, d.m = kt_int(1, 50);
    }
    if (d.h + 2 * d.ph < (d.kh - 1) * d.dh + 1) d.h = (d.kh - 1) * d.dh + 1;
    if (d.w + 2 * d.pw < (d.kw - 1) * d.dw + 1) d.w = (d.kw - 1) * d.dw + 1;
    out_size(&d);
    run_case(&d, trial, pools);
  }
  /* resnet18 / mobilenet-like layers: full blocks, 7x7 and 56x56 planes, stride 2 */
  const nnp_conv2d_desc fixed[] = {
      {.n = 1, .c = 64, .h = 14, .w = 14, .m = 64, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .ph = 1, .pw = 1, .dh = 1, .dw = 1, .group = 1},
      {.n = 1, .c = 128, .h = 7, .w = 7, .m = 96, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .ph = 1, .pw = 1, .dh = 1, .dw = 1, .group = 1},
      {.n = 1, .c = 32, .h = 28, .w = 28, .m = 64, .kh = 3, .kw = 3, .sh = 2, .sw = 2, .ph = 1, .pw = 1, .dh = 1, .dw = 1, .group = 1},
      {.n = 1, .c = 3, .h = 32, .w = 32, .m = 24, .kh = 7, .kw = 7, .sh = 2, .sw = 2, .ph = 3, .pw = 3, .dh = 1, .dw = 1, .group = 1},
      /* the wide tile (14 pixels, strides 1 and 2): a 1x1 tap with padding 1 misses one
       * pixel on both sides, several 14-pixel tiles per row, pads 3 (7x7 s1: the
       * per-pixel tested taps), dilation; stride 3: the 8-pixel border tile */
      {.n = 1, .c = 16, .h = 3, .w = 9, .m = 32, .kh = 1, .kw = 1, .sh = 1, .sw = 1, .ph = 1, .pw = 1, .dh = 1, .dw = 1, .group = 1},
      {.n = 1, .c = 7, .h = 3, .w = 23, .m = 9, .kh = 7, .kw = 7, .sh = 1, .sw = 1, .ph = 3, .pw = 3, .dh = 1, .dw = 1, .group = 1},
      {.n = 1, .c = 20, .h = 4, .w = 58, .m = 40, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .ph = 1, .pw = 1, .dh = 1, .dw = 1, .group = 1},
      {.n = 1, .c = 5, .h = 9, .w = 60, .m = 17, .kh = 7, .kw = 7, .sh = 2, .sw = 2, .ph = 3, .pw = 3, .dh = 1, .dw = 1, .group = 1},
      {.n = 1, .c = 18, .h = 5, .w = 33, .m = 33, .kh = 5, .kw = 5, .sh = 1, .sw = 1, .ph = 2, .pw = 2, .dh = 2, .dw = 2, .group = 1},
      {.n = 1, .c = 16, .h = 7, .w = 40, .m = 16, .kh = 3, .kw = 3, .sh = 3, .sw = 3, .ph = 1, .pw = 1, .dh = 1, .dw = 1, .group = 1},
      {.n = 1, .c = 48, .h = 20, .w = 20, .m = 48, .kh = 3, .kw = 3, .sh = 2, .sw = 2, .ph = 1, .pw = 1, .dh = 1, .dw = 1, .group = 48},
      {.n = 2, .c = 40, .h = 9, .w = 9, .m = 40, .kh = 5, .kw = 5, .sh = 1, .sw = 1, .ph = 2, .pw = 2, .dh = 1, .dw = 1, .group = 40},
      /* planes at most 7 wide and 8 high in input block chunks (nnp_bconv_dense_plane_avx512):
       * 1x1 over many chunks with a ragged last one, an odd output block count (one
       * block's tiles), 5 pairs over 2-3 threads (half planes), stride 2, 3x3 (a chunk per
       * block), 8 and 5 rows, batch 2 */
      {.n = 1, .c = 200, .h = 7, .w = 7, .m = 40, .kh = 1, .kw = 1, .sh = 1, .sw = 1, .ph = 0, .pw = 0, .dh = 1, .dw = 1, .group = 1},
      {.n = 1, .c = 150, .h = 7, .w = 7, .m = 160, .kh = 1, .kw = 1, .sh = 1, .sw = 1, .ph = 0, .pw = 0, .dh = 1, .dw = 1, .group = 1},
      {.n = 1, .c = 130, .h = 14, .w = 13, .m = 50, .kh = 1, .kw = 1, .sh = 2, .sw = 2, .ph = 0, .pw = 0, .dh = 1, .dw = 1, .group = 1},
      {.n = 2, .c = 48, .h = 8, .w = 6, .m = 70, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .ph = 1, .pw = 1, .dh = 1, .dw = 1, .group = 1},
      {.n = 1, .c = 36, .h = 5, .w = 7, .m = 33, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .ph = 1, .pw = 1, .dh = 1, .dw = 1, .group = 1},
      /* ... and planes 8 to 14 wide: one-row tiles in groups of 4 rows, a short last group */
      {.n = 1, .c = 250, .h = 14, .w = 14, .m = 40, .kh = 1, .kw = 1, .sh = 1, .sw = 1, .ph = 0, .pw = 0, .dh = 1, .dw = 1, .group = 1},
      {.n = 2, .c = 40, .h = 13, .w = 11, .m = 36, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .ph = 1, .pw = 1, .dh = 1, .dw = 1, .group = 1},
      {.n = 1, .c = 200, .h = 27, .w = 27, .m = 20, .kh = 1, .kw = 1, .sh = 2, .sw = 2, .ph = 0, .pw = 0, .dh = 1, .dw = 1, .group = 1},
      {.n = 1, .c = 34, .h = 18, .w = 17, .m = 48, .kh = 3, .kw = 3, .sh = 2, .sw = 2, .ph = 1, .pw = 1, .dh = 1, .dw = 1, .group = 1},
      /* depthwise rows with taps from registers (dw_regs_tile): 3, 5 and 7 taps at strides
       * 1 and 2, output rows of 2, 7, 8, 9, 10, 14 and 35 to 38 pixels (ragged last
       * tiles), no padding and padding on one side only, a stride of 2 down and 1 across,
       * batch 2 */
      {.n = 1, .c = 40, .h = 23, .w = 37, .m = 40, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .ph = 1, .pw = 1, .dh = 1, .dw = 1, .group = 40},
      {.n = 2, .c = 24, .h = 20, .w = 35, .m = 24, .kh = 5, .kw = 5, .sh = 1, .sw = 1, .ph = 2, .pw = 2, .dh = 1, .dw = 1, .group = 24},
      {.n = 1, .c = 17, .h = 9, .w = 40, .m = 17, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .ph = 0, .pw = 0, .dh = 1, .dw = 1, .group = 17},
      {.n = 1, .c = 20, .h = 14, .w = 14, .m = 20, .kh = 7, .kw = 7, .sh = 1, .sw = 1, .ph = 3, .pw = 3, .dh = 1, .dw = 1, .group = 20},
      {.n = 2, .c = 33, .h = 15, .w = 17, .m = 33, .kh = 7, .kw = 7, .sh = 2, .sw = 2, .ph = 3, .pw = 3, .dh = 1, .dw = 1, .group = 33},
      {.n = 1, .c = 48, .h = 17, .w = 19, .m = 48, .kh = 5, .kw = 5, .sh = 2, .sw = 2, .ph = 2, .pw = 2, .dh = 1, .dw = 1, .group = 48},
      {.n = 1, .c = 32, .h = 16, .w = 17, .m = 32, .kh = 3, .kw = 3, .sh = 2, .sw = 2, .ph = 0, .pw = 0, .dh = 1, .dw = 1, .group = 32},
      {.n = 1, .c = 16, .h = 9, .w = 9, .m = 16, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .ph = 1, .pw = 0, .dh = 1, .dw = 1, .group = 16},
      {.n = 1, .c = 18, .h = 12, .w = 8, .m = 18, .kh = 5, .kw = 3, .sh = 2, .sw = 1, .ph = 2, .pw = 1, .dh = 1, .dw = 1, .group = 18},
      {.n = 1, .c = 24, .h = 5, .w = 3, .m = 24, .kh = 3, .kw = 3, .sh = 2, .sw = 2, .ph = 1, .pw = 1, .dh = 1, .dw = 1, .group = 24},
      /* Winograd F(2x2, 3x3) (3x3, stride 1, planes at least 14 wide): full and ragged
       * channel blocks, an odd number of output blocks, odd planes (half-used last tile
       * row and column), no padding, padding on one axis only, batch 2, 28x28, ... */
      {.n = 1, .c = 32, .h = 14, .w = 14, .m = 64, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .ph = 1, .pw = 1, .dh = 1, .dw = 1, .group = 1},
      {.n = 2, .c = 20, .h = 15, .w = 29, .m = 40, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .ph = 1, .pw = 1, .dh = 1, .dw = 1, .group = 1},
      {.n = 1, .c = 7, .h = 19, .w = 17, .m = 33, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .ph = 0, .pw = 0, .dh = 1, .dw = 1, .group = 1},
      {.n = 1, .c = 48, .h = 16, .w = 21, .m = 16, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .ph = 1, .pw = 0, .dh = 1, .dw = 1, .group = 1},
      {.n = 1, .c = 64, .h = 28, .w = 28, .m = 48, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .ph = 1, .pw = 1, .dh = 1, .dw = 1, .group = 1},
      /* ... products in input-block chunks (over 192 channels) on a 7x7 plane of tiles;
       * transformed weights over 512 KB (three passes, not bands) */
      {.n = 1, .c = 200, .h = 14, .w = 14, .m = 20, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .ph = 1, .pw = 1, .dh = 1, .dw = 1, .group = 1},
      {.n = 1, .c = 192, .h = 16, .w = 17, .m = 180, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .ph = 1, .pw = 1, .dh = 1, .dw = 1, .group = 1},
  };
  for (int i = 0; i < (int)(sizeof fixed / sizeof fixed[0]); i++) {
    nnp_conv2d_desc d = fixed[i];
    out_size(&d);
    for (int trial = 0; trial < 5; trial++) run_case(&d, trial * 7 + 1, pools);
  }
  /* grouped layers of RegNet (16-wide groups, stride 1 and 2, a batch) and ResNeXt (32-wide
   * groups on 7x7: block pairs; and 64 inputs per group: input-block chunks) */
  const nnp_conv2d_desc grouped[] = {
      {.n = 1, .c = 64, .h = 28, .w = 28, .m = 64, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .ph = 1, .pw = 1, .dh = 1, .dw = 1, .group = 4},
      {.n = 2, .c = 48, .h = 15, .w = 15, .m = 48, .kh = 3, .kw = 3, .sh = 2, .sw = 2, .ph = 1, .pw = 1, .dh = 1, .dw = 1, .group = 3},
      {.n = 1, .c = 128, .h = 7, .w = 7, .m = 128, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .ph = 1, .pw = 1, .dh = 1, .dw = 1, .group = 4},
      {.n = 1, .c = 512, .h = 7, .w = 7, .m = 64, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .ph = 1, .pw = 1, .dh = 1, .dw = 1, .group = 2},
      /* RegNetY-1.6GF's 24-wide groups (windows of 2 or 3 blocks, a pair of blocks per task
       * only where both share one) */
      {.n = 1, .c = 120, .h = 14, .w = 14, .m = 120, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .ph = 1, .pw = 1, .dh = 1, .dw = 1, .group = 5},
      {.n = 1, .c = 48, .h = 28, .w = 28, .m = 48, .kh = 3, .kw = 3, .sh = 2, .sw = 2, .ph = 1, .pw = 1, .dh = 1, .dw = 1, .group = 2},
      /* ResNeXt's 4- and 8-wide groups (block-diagonal weights), the second at stride 2 */
      {.n = 1, .c = 128, .h = 14, .w = 14, .m = 128, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .ph = 1, .pw = 1, .dh = 1, .dw = 1, .group = 32},
      {.n = 2, .c = 64, .h = 15, .w = 15, .m = 64, .kh = 3, .kw = 3, .sh = 2, .sw = 2, .ph = 1, .pw = 1, .dh = 1, .dw = 1, .group = 8},
  };
  for (int i = 0; i < (int)(sizeof grouped / sizeof grouped[0]); i++) {
    nnp_conv2d_desc d = grouped[i];
    out_size(&d);
    for (int trial = 0; trial < 5; trial++) run_case(&d, trial * 7 + 1, pools);
  }
  /* Winograd over a batch, several images per pass (transformed weights over 512 KB,
   * 1.3 MB of tiles per image: passes of 6 and 1 images); two trials, it is large */
  nnp_conv2d_desc wb = {.n = 7, .c = 96, .h = 20, .w = 20, .m = 100, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .ph = 1,
                        .pw = 1, .dh = 1, .dw = 1, .group = 1};
  out_size(&wb);
  run_case(&wb, 1, pools);
  run_case(&wb, 8, pools);
  /* ... and 7x7 planes in batches of 8 (small transformed weights: bands of one image;
   * large: one pass of all 8) */
  const nnp_conv2d_desc w7[] = {
      {.n = 8, .c = 40, .h = 7, .w = 7, .m = 36, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .ph = 1, .pw = 1, .dh = 1, .dw = 1, .group = 1},
      {.n = 8, .c = 192, .h = 7, .w = 7, .m = 180, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .ph = 1, .pw = 1, .dh = 1, .dw = 1, .group = 1},
  };
  for (int i = 0; i < 2; i++) {
    nnp_conv2d_desc d = w7[i];
    out_size(&d);
    run_case(&d, 3, pools);
    run_case(&d, 4, pools);
  }
  for (int t = 1; t < 3; t++) nnp_threadpool_destroy(pools[t]);
  printf("%d cases, %d of them through Winograd\n", cases, wino_cases);
  /* Winograd: the blocked kind runs with the AVX-512 tiles only (AVX2 keeps the NCHW one) */
  if (nnp_dispatch_isa(NNP_KF_WINOGRAD) == NNP_ISA_AVX512) CHECK(wino_cases >= 41); /* the fixed shapes at least */
  else CHECK(wino_cases == 0);
  TEST_MAIN_END();
}
