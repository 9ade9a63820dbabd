/* Elementwise fast paths against the scalar epilogue (kernels/epilogue.h): every
 * activation, Add and Mul, sizes around the block size, threads 1..4, in-place; and
 * HardSigmoid against its definition, bit for bit, NaN passed through as the reference
 * does. */
#include <math.h>
#include <string.h>

#include "kernel_test_util.h"
#include "kernels/eltwise.h"
#include "nnperf/alloc.h"
#include "test.h"

int main(void) {
  nnp_threadpool *pools[4] = {NULL};
  for (int t = 1; t < 4; t++) CHECK_OK(nnp_threadpool_create(t + 1, &pools[t]));
  const int64_t sizes[] = {1, 7, 33, NNP_ELTWISE_BLOCK - 1, NNP_ELTWISE_BLOCK + 5, 3 * NNP_ELTWISE_BLOCK + 17};
  for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
    int64_t n = sizes[si];
    float *a = nnp_malloc((size_t)n * 4), *b = nnp_malloc((size_t)n * 4);
    float *want = nnp_malloc((size_t)n * 4), *got = nnp_malloc((size_t)n * 4);
    for (int64_t i = 0; i < n; i++) {
      a[i] = kt_float() * 8.0f;
      b[i] = kt_float();
    }
    for (int t = 0; t < 4; t++) { /* HardSigmoid: both clamps taken (a in [-8, 8)), a NaN */
      const float alpha = t == 0 ? 0.2f : 1.0f / 6.0f, beta = t == 3 ? 0.25f : 0.5f;
      a[0] = NAN;
      nnp_eltwise_hard_sigmoid(a, got, n, alpha, beta, pools[t]);
      int bad = isnan(got[0]) ? 0 : 1;
      for (int64_t i = 1; i < n; i++) {
        const float v = alpha * a[i] + beta;
        bad += got[i] != fmaxf(0.0f, fminf(1.0f, v));
      }
      CHECK_MSG(bad == 0, "HardSigmoid n %lld threads %d: %d elements differ", (long long)n, t + 1, bad);
      a[0] = 0.5f;
    }
    for (int act = NNP_ACT_NONE; act <= NNP_ACT_SILU; act++)
      for (int op = -1; op <= 1; op++)
        for (int t = 0; t < 4; t++)
          for (int inplace = 0; inplace < 2; inplace++) {
            nnp_epilogue ep = {.act = act, .act_min = -1.5f, .act_max = 2.5f};
            for (int64_t i = 0; i < n; i++)
              want[i] = nnp_act_apply(&ep, op < 0 ? a[i] : op == NNP_BINOP_ADD ? a[i] + b[i] : a[i] * b[i]);
            const float *src = a;
            if (inplace) {
              memcpy(got, a, (size_t)n * 4);
              src = got;
            }
            if (op < 0) nnp_eltwise_act(src, got, n, &ep, pools[t]);
            else nnp_eltwise_binary((nnp_binop)op, src, b, got, n, &ep, pools[t]);
            double err = kt_max_err(got, want, n);
            CHECK_MSG(err < 1e-6, "n %lld act %d op %d threads %d inplace %d: err %g", (long long)n, act, op, t + 1,
                      inplace, err);
          }
    nnp_free(a);
    nnp_free(b);
    nnp_free(want);
    nnp_free(got);
  }
  for (int t = 1; t < 4; t++) nnp_threadpool_destroy(pools[t]);
  TEST_MAIN_END();
}
