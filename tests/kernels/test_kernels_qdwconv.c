/* The INT8 depthwise convolution (kernels/qdwconv.h): the fastest body this CPU runs
 * (AVX-512 VNNI quads / pairs / row paths, or AVX2) against the generic one, byte for
 * byte, over random shapes: planes from 1x1 to 130 wide, kernels 1..7 (square and not),
 * strides 1..3, dilation 1..2, symmetric and end-heavy padding (oh past the symmetric
 * size), weights that fit int8 (the quads path, -128 and 127 included) and weights from
 * a zero point that do not (the pairs and row paths), random epilogues and clamps, 1 and
 * 3 threads. Run again with NNP_CPU_FEATURES=avx2 (tests/CMakeLists.txt). */
#include <string.h>

#include "kernel_test_util.h"
#include "kernels/cpu.h"
#include "kernels/qdwconv.h"
#include "nnperf/alloc.h"
#include "test.h"

static void one_case(int trial, nnp_threadpool *const *pools) {
  nnp_qdw_desc d = {.c = kt_int(1, 40), .h = kt_int(1, 20), .w = kt_int(1, 20), .sh = kt_int(1, 2)};
  if (trial % 5 == 1) d.h = kt_int(20, 70), d.w = kt_int(20, 130); /* long rows: several 64-output blocks */
  if (trial % 11 == 7) d.sh = 3;
  d.sw = d.sh;
  d.kh = kt_int(0, 3) * 2 + 1;
  d.kw = trial % 6 == 2 ? kt_int(1, 7) : d.kh;
  d.dh = d.dw = trial % 9 == 8 ? 2 : 1;
  d.ph = kt_int(0, d.kh / 2), d.pw = kt_int(0, d.kw / 2);
  const int64_t eh = (d.kh - 1) * d.dh + 1, ew = (d.kw - 1) * d.dw + 1; /* extents */
  if (d.h + 2 * d.ph < eh) d.h = eh;
  if (d.w + 2 * d.pw < ew) d.w = ew;
  d.oh = (d.h + 2 * d.ph - eh) / d.sh + 1;
  d.ow = (d.w + 2 * d.pw - ew) / d.sw + 1;
  if (trial % 7 == 3) d.oh += 1, d.ow += 1; /* end padding one stride longer than the start's */
  const int64_t khw = d.kh * d.kw, nx = d.c * d.h * d.w, ny = d.c * d.oh * d.ow;
  uint8_t *x = nnp_malloc((size_t)nx), *want = nnp_malloc((size_t)ny), *got = nnp_malloc((size_t)ny);
  int16_t *w = nnp_malloc((size_t)(d.c * khw) * sizeof *w);
  int32_t *bias = nnp_malloc((size_t)d.c * sizeof *bias);
  float *mult = nnp_malloc((size_t)d.c * sizeof *mult);
  const bool wide_w = trial % 4 == 0; /* w - w_zp outside int8: not for the quads path */
  for (int64_t i = 0; i < nx; i++) x[i] = (uint8_t)kt_next();
  for (int64_t i = 0; i < d.c * khw; i++) {
    w[i] = (int16_t)(wide_w ? kt_int(-255, 255) : kt_int(-128, 127));
    if (trial % 8 == 5) w[i] = i % 2 ? 127 : -128; /* the extremes of every lane */
  }
  for (int64_t m = 0; m < d.c; m++) bias[m] = (int32_t)kt_int(-30000, 30000), mult[m] = 1e-4f * (float)kt_int(1, 50);
  const int32_t xzp = (int32_t)kt_int(0, 255);
  nnp_qepilogue ep = {.bias = trial % 3 ? bias : NULL, .mult = mult, .zp = (int32_t)kt_int(0, 255), .qmin = 0,
                      .qmax = 255};
  if (trial % 10 == 4) ep.qmin = (int32_t)kt_int(0, 100), ep.qmax = (int32_t)kt_int(150, 255);
  nnp_qdwconv(&d, x, xzp, w, want, &ep, NULL, true);
  for (int th = 0; th < 2; th++) {
    memset(got, 0xA5, (size_t)ny);
    nnp_qdwconv(&d, x, xzp, w, got, &ep, pools[th], false);
    int64_t bad = -1;
    for (int64_t i = 0; i < ny && bad < 0; i++)
      if (got[i] != want[i]) bad = i;
    CHECK_MSG(bad < 0,
              "trial %d c=%lld %lldx%lld -> %lldx%lld k=%lldx%lld s=%lld p=%lld,%lld dil=%lld wide_w=%d threads=%d: "
              "y[%lld] = %d, want %d",
              trial, (long long)d.c, (long long)d.h, (long long)d.w, (long long)d.oh, (long long)d.ow,
              (long long)d.kh, (long long)d.kw, (long long)d.sh, (long long)d.ph, (long long)d.pw, (long long)d.dh,
              wide_w, th ? 3 : 1, (long long)bad, bad < 0 ? 0 : got[bad], bad < 0 ? 0 : want[bad]);
  }
  nnp_free(x), nnp_free(want), nnp_free(got), nnp_free(w), nnp_free(bias), nnp_free(mult);
}

int main(void) {
  nnp_threadpool *pools[2] = {NULL};
  CHECK_OK(nnp_threadpool_create(3, &pools[1]));
  printf("INT8 depthwise against the generic body on %s\n",
         nnp_cpu_has_avx512_vnni() && nnp_cpu_get()->avx512bw ? "AVX-512 VNNI"
         : nnp_cpu_has_avx2_fma()                              ? "AVX2"
                                                               : "the generic body itself");
  for (int trial = 0; trial < 400; trial++) one_case(trial, pools);
  nnp_threadpool_destroy(pools[1]);
  TEST_MAIN_END();
}
