/* Blocked MaxPool and GlobalAveragePool (kernels/blocked_pool.h) against the NCHW MaxPool kernel
 * (kernels/pool.h) on reblocked data, over random shapes: channels ragged against 16,
 * windows 1..4, strides 1..3, padding, threads 1..3. Max is exact, so the outputs must
 * be equal, and the padded lanes 0. Odd trials run the portable rows, even ones the best
 * for this CPU (AVX-512 or AVX2 where it has them). Blocked AveragePool likewise against the
 * portable NCHW rows (the same sums in the same order: equal bits), with end pads that
 * ceil_mode makes and count_include_pad both ways. */
#include <string.h>

#include "kernel_test_util.h"
#include "kernels/blocked_conv.h"
#include "kernels/blocked_pool.h"
#include "nnperf/alloc.h"
#include "test.h"

int main(void) {
  nnp_threadpool *pools[3] = {NULL, NULL, NULL};
  for (int t = 1; t < 3; t++) CHECK_OK(nnp_threadpool_create(t + 1, &pools[t]));
  for (int trial = 0; trial < 240; trial++) {
    const int64_t n = kt_int(1, 2), c = kt_int(1, 40);
    nnp_pool2d_desc d = {.h = kt_int(1, 17), .w = kt_int(1, 19), .kh = kt_int(1, 4), .kw = kt_int(1, 4),
                         .sh = kt_int(1, 3), .sw = kt_int(1, 3)};
    d.ph = kt_int(0, d.kh - 1);
    d.pw = kt_int(0, d.kw - 1);
    if (d.h + 2 * d.ph < d.kh) d.h = d.kh;
    if (d.w + 2 * d.pw < d.kw) d.w = d.kw;
    d.oh = (d.h + 2 * d.ph - d.kh) / d.sh + 1;
    d.ow = (d.w + 2 * d.pw - d.kw) / d.sw + 1;
    const int64_t cb = nnp_blocks(c), nx = n * c * d.h * d.w, ny = n * c * d.oh * d.ow;
    const int64_t nyb = n * cb * d.oh * d.ow * NNP_BLOCK;
    float *x = nnp_malloc((size_t)nx * 4), *want = nnp_malloc((size_t)ny * 4), *got = nnp_malloc((size_t)ny * 4);
    float *xb = nnp_malloc((size_t)(n * cb * d.h * d.w * NNP_BLOCK) * 4), *yb = nnp_malloc((size_t)nyb * 4);
    kt_fill(x, nx);
    nnp_pool2d_desc dn = d;
    dn.planes = n * c;
    nnp_maxpool2d(&dn, x, want, true, NULL);
    nnp_nchw_to_blocked(x, xb, n, c, d.h * d.w, NULL);
    d.planes = n * cb;
    memset(yb, 0xff, (size_t)nyb * 4);
    nnp_maxpool2d_blocked(&d, xb, yb, trial % 2 == 1, pools[trial % 3]);
    nnp_blocked_to_nchw(yb, got, n, c, d.oh * d.ow, NULL);
    CHECK_MSG(!memcmp(got, want, (size_t)ny * 4), "n%lld c%lld %lldx%lld k%lldx%lld s%lld p%lld", (long long)n,
              (long long)c, (long long)d.h, (long long)d.w, (long long)d.kh, (long long)d.kw, (long long)d.sh,
              (long long)d.ph);
    bool zero = true;
    for (int64_t i = 0; i < n; i++)
      for (int64_t p = 0; p < d.oh * d.ow; p++)
        for (int64_t l = c - (cb - 1) * NNP_BLOCK; l < NNP_BLOCK; l++)
          zero &= yb[((i * cb + cb - 1) * d.oh * d.ow + p) * NNP_BLOCK + l] == 0.0f;
    CHECK(zero);
    nnp_free(x), nnp_free(want), nnp_free(got), nnp_free(xb), nnp_free(yb);
  }
  for (int trial = 0; trial < 240; trial++) {
    const int64_t n = kt_int(1, 2), c = kt_int(1, 40);
    nnp_avgpool2d_desc a = {.p = {.h = kt_int(1, 17), .w = kt_int(1, 19), .kh = kt_int(1, 4), .kw = kt_int(1, 4),
                                  .sh = kt_int(1, 3), .sw = kt_int(1, 3)},
                            .include_pad = trial % 4 < 2};
    nnp_pool2d_desc *d = &a.p;
    d->ph = kt_int(0, d->kh - 1);
    d->pw = kt_int(0, d->kw - 1);
    a.ph_end = d->ph + kt_int(0, 1); /* ceil_mode's extra end padding, sometimes */
    a.pw_end = d->pw + kt_int(0, 1);
    if (d->h + d->ph + a.ph_end < d->kh) d->h = d->kh;
    if (d->w + d->pw + a.pw_end < d->kw) d->w = d->kw;
    d->oh = (d->h + d->ph + a.ph_end - d->kh) / d->sh + 1;
    d->ow = (d->w + d->pw + a.pw_end - d->kw) / d->sw + 1;
    const int64_t cb = nnp_blocks(c), nx = n * c * d->h * d->w, ny = n * c * d->oh * d->ow;
    const int64_t nyb = n * cb * d->oh * d->ow * NNP_BLOCK;
    float *x = nnp_malloc((size_t)nx * 4), *want = nnp_malloc((size_t)ny * 4), *got = nnp_malloc((size_t)ny * 4);
    float *xb = nnp_malloc((size_t)(n * cb * d->h * d->w * NNP_BLOCK) * 4), *yb = nnp_malloc((size_t)nyb * 4);
    kt_fill(x, nx);
    nnp_avgpool2d_desc an = a;
    an.p.planes = n * c;
    nnp_avgpool2d(&an, x, want, true, NULL);
    nnp_nchw_to_blocked(x, xb, n, c, d->h * d->w, NULL);
    d->planes = n * cb;
    memset(yb, 0xff, (size_t)nyb * 4);
    nnp_avgpool2d_blocked(&a, xb, yb, trial % 2 == 1, pools[trial % 3]);
    nnp_blocked_to_nchw(yb, got, n, c, d->oh * d->ow, NULL);
    CHECK_MSG(!memcmp(got, want, (size_t)ny * 4), "avg n%lld c%lld %lldx%lld k%lldx%lld s%lld p%lld/%lld incl %d %s",
              (long long)n, (long long)c, (long long)d->h, (long long)d->w, (long long)d->kh, (long long)d->kw,
              (long long)d->sh, (long long)d->ph, (long long)a.ph_end, a.include_pad,
              trial % 2 ? "portable" : "fast");
    bool zero = true;
    for (int64_t i = 0; i < n; i++)
      for (int64_t p = 0; p < d->oh * d->ow; p++)
        for (int64_t l = c - (cb - 1) * NNP_BLOCK; l < NNP_BLOCK; l++)
          zero &= yb[((i * cb + cb - 1) * d->oh * d->ow + p) * NNP_BLOCK + l] == 0.0f;
    CHECK(zero);
    nnp_free(x), nnp_free(want), nnp_free(got), nnp_free(xb), nnp_free(yb);
  }
  /* GlobalAveragePool of blocked X into NCHW Y: equal to the NCHW kernel (both sum in
   * double in pixel order); channels ragged against 16, planes 1x1 to 9x9 */
  for (int trial = 0; trial < 60; trial++) {
    const int64_t n = kt_int(1, 3), c = kt_int(1, 50), hw = kt_int(1, 81), cb = nnp_blocks(c);
    float *x = nnp_malloc((size_t)(n * c * hw) * 4), *xb = nnp_malloc((size_t)(n * cb * hw * NNP_BLOCK) * 4);
    float *want = nnp_malloc((size_t)(n * c) * 4), *got = nnp_malloc((size_t)(n * c + 1) * 4);
    kt_fill(x, n * c * hw);
    nnp_nchw_to_blocked(x, xb, n, c, hw, NULL);
    nnp_global_avgpool(n * c, hw, x, want, NULL);
    memset(got, 0xff, (size_t)(n * c + 1) * 4);
    nnp_global_avgpool_blocked(n, c, hw, xb, got, pools[trial % 3]);
    CHECK_MSG(!memcmp(got, want, (size_t)(n * c) * 4), "gap n%lld c%lld hw%lld", (long long)n, (long long)c,
              (long long)hw);
    uint32_t past;
    memcpy(&past, &got[n * c], 4);
    CHECK_MSG(past == 0xffffffffu, "gap n%lld c%lld: wrote past Y", (long long)n, (long long)c);
    nnp_free(x), nnp_free(xb), nnp_free(want), nnp_free(got);
  }
  for (int t = 1; t < 3; t++) nnp_threadpool_destroy(pools[t]);
  TEST_MAIN_END();
}
