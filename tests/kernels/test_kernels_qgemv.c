/* The INT8 matrix product of quantized Gemm / MatMul (kernels/qgemv.h): the AVX2 body
 * (vpmaddwd) and the generic one against a plain int64 reference, bit for bit, for both
 * outputs (uint8 requantize with clamps, float32 dequantize), over random shapes (K not a
 * multiple of 16, N not a multiple of 4, several rows), per-channel zero points, and
 * thread counts 1..4; then the corners where u8 x s8 vpmaddubsw would saturate its int16
 * pair sums (x 255 against w -128 / 127 with zero points 0, and zero-point-shifted
 * operands at +-255), which the int16 path must compute exactly. */
#include <string.h>

#include "kernel_test_util.h"
#include "kernels/cpu.h"
#include "kernels/qgemv.h"
#include "nnperf/alloc.h"
#include "test.h"

typedef struct qv_case {
  int64_t R, N, K;
  uint8_t *X;
  int8_t *W; /* N x K */
  int32_t xzp, *wzp, *bias;
  float *mult;
  nnp_qepilogue ep;
} qv_case;

static int64_t raw_sum(const qv_case *q, int64_t r, int64_t n) {
  int64_t s = 0;
  for (int64_t k = 0; k < q->K; k++) s += ((int64_t)q->X[r * q->K + k] - q->xzp) * ((int64_t)q->W[n * q->K + k] - q->wzp[n]);
  return s;
}

static void run_case(const char *what, const qv_case *q, nnp_threadpool *const *pools) {
  int64_t R = q->R, N = q->N, K = q->K, kp = nnp_qgemv_kpad(K);
  int16_t *w = nnp_malloc((size_t)(N * kp) * sizeof(int16_t)), *x = nnp_malloc((size_t)(R * kp) * sizeof(int16_t));
  uint8_t *want8 = nnp_malloc((size_t)(R * N)), *got8 = nnp_malloc((size_t)(R * N));
  float *wantf = nnp_malloc((size_t)(R * N) * sizeof(float)), *gotf = nnp_malloc((size_t)(R * N) * sizeof(float));
  nnp_qgemv_pack_w(N, K, q->W, K, 1, q->wzp, w);
  nnp_qgemv_widen_x(R, K, q->X, q->xzp, x);
  for (int64_t r = 0; r < R; r++)
    for (int64_t n = 0; n < N; n++) {
      int64_t s = raw_sum(q, r, n);
      CHECK(s == (int32_t)s);
      want8[r * N + n] = nnp_qrequant((int32_t)s, &q->ep, n);
      wantf[r * N + n] = (float)((int32_t)s + (q->bias ? q->bias[n] : 0)) * q->mult[n];
    }
  for (int generic = 0; generic < 2; generic++)
    for (int t = 0; t < 4; t++) {
      memset(got8, 0xAB, (size_t)(R * N));
      nnp_qgemv_out o8 = {.u8 = got8, .ep = &q->ep};
      nnp_qgemv(R, N, kp, x, w, &o8, pools[t], generic);
      CHECK_MSG(!memcmp(got8, want8, (size_t)(R * N)), "%s: uint8 output differs (R %lld N %lld K %lld, generic %d, "
                "%d threads)", what, (long long)R, (long long)N, (long long)K, generic, t + 1);
      for (int64_t i = 0; i < R * N; i++) gotf[i] = -12345.0f;
      nnp_qgemv_out of = {.f32 = gotf, .bias = q->bias, .scale = q->mult};
      nnp_qgemv(R, N, kp, x, w, &of, pools[t], generic);
      CHECK_MSG(!memcmp(gotf, wantf, (size_t)(R * N) * sizeof(float)), "%s: float output differs (R %lld N %lld K "
                "%lld, generic %d, %d threads)", what, (long long)R, (long long)N, (long long)K, generic, t + 1);
    }
  nnp_free(w);
  nnp_free(x);
  nnp_free(want8);
  nnp_free(got8);
  nnp_free(wantf);
  nnp_free(gotf);
}

static void alloc_case(qv_case *q, int64_t R, int64_t N, int64_t K) {
  *q = (qv_case){.R = R, .N = N, .K = K};
  q->X = nnp_malloc((size_t)(R * K));
  q->W = nnp_malloc((size_t)(N * K));
  q->wzp = nnp_calloc((size_t)N, sizeof(int32_t));
  q->bias = nnp_malloc((size_t)N * sizeof(int32_t));
  q->mult = nnp_malloc((size_t)N * sizeof(float));
}

static void free_case(qv_case *q) {
  nnp_free(q->X);
  nnp_free(q->W);
  nnp_free(q->wzp);
  nnp_free(q->bias);
  nnp_free(q->mult);
}

int main(void) {
  nnp_threadpool *pools[4];
  for (int t = 0; t < 4; t++) CHECK_OK(nnp_threadpool_create(t + 1, &pools[t]));
  printf("AVX2 body %s\n", nnp_cpu_has_avx2_fma() ? "tested" : "not run (no AVX2 on this CPU: generic only)");
  for (int it = 0; it < 60; it++) {
    qv_case q;
    alloc_case(&q, kt_int(1, 5), kt_int(1, 37), kt_int(1, 300));
    for (int64_t i = 0; i < q.R * q.K; i++) q.X[i] = (uint8_t)kt_int(0, 255);
    for (int64_t i = 0; i < q.N * q.K; i++) q.W[i] = (int8_t)kt_int(-128, 127);
    q.xzp = (int32_t)kt_int(0, 255);
    bool per = it & 1;
    for (int64_t n = 0; n < q.N; n++) {
      q.wzp[n] = per ? (int32_t)kt_int(-20, 20) : 0;
      q.bias[n] = (int32_t)kt_int(-100000, 100000);
      q.mult[n] = 1e-4f * (1.0f + (float)kt_int(0, 100) / 10.0f);
    }
    q.ep = (nnp_qepilogue){.bias = it % 3 ? q.bias : NULL, .mult = q.mult, .zp = (int32_t)kt_int(0, 255), .qmin = 0,
                           .qmax = 255};
    if (it % 4 == 3) q.ep.qmin = (int32_t)kt_int(0, 100), q.ep.qmax = (int32_t)kt_int(150, 255);
    q.bias = it % 3 ? q.bias : (nnp_free(q.bias), NULL);
    run_case("random", &q, pools);
    free_case(&q);
  }
  /* saturating corners of u8 x s8 pair sums: 255 * 127 * 2 and 255 * -128 * 2 overflow
   * int16; here every product is exact and K = 2000 sums stay far inside int32 */
  const int8_t wv[4] = {-128, 127, -128, 127};
  const int32_t xzps[4] = {0, 0, 255, 255}, wzps[4] = {0, 0, 127, -128};
  const uint8_t xv[4] = {255, 255, 0, 0};
  for (int c = 0; c < 4; c++) {
    qv_case q;
    alloc_case(&q, 2, 9, 2000);
    memset(q.X, xv[c], (size_t)(q.R * q.K));
    memset(q.W, (uint8_t)wv[c], (size_t)(q.N * q.K));
    q.xzp = xzps[c];
    for (int64_t n = 0; n < q.N; n++) {
      q.wzp[n] = wzps[c];
      q.bias[n] = 0;
      q.mult[n] = 1.0f / 130050.0f / 1000.0f;
    }
    q.ep = (nnp_qepilogue){.bias = q.bias, .mult = q.mult, .zp = 128, .qmin = 0, .qmax = 255};
    int64_t s = raw_sum(&q, 0, 0);
    CHECK_MSG(llabs(s) >= 2000LL * 255 * 127, "corner %d: |sum| %lld", c, (long long)s);
    run_case("saturating corner", &q, pools);
    free_case(&q);
  }
  for (int t = 0; t < 4; t++) nnp_threadpool_destroy(pools[t]);
  TEST_MAIN_END();
}
