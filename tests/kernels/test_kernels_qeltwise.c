/* INT8 elementwise kernels (kernels/qeltwise.h): the AVX2 bodies and the generic path
 * against the reference formulas of ops/quant.c written out here (QuantizeLinear:
 * saturate(rint(x / s) + zp), NaN -> 0; DequantizeLinear: (q - zp) * s; the quantized Add:
 * Q(act(DQ(a) + DQ(b)))), byte for byte and bit for bit, over random lengths (vector
 * bodies and scalar tails), scales that saturate both ends, zero points, no act / Relu / Clip,
 * and threads 1..4 over several blocks. */
#include <math.h>
#include <string.h>

#include "kernel_test_util.h"
#include "kernels/cpu.h"
#include "kernels/qeltwise.h"
#include "nnperf/alloc.h"
#include "test.h"

static uint8_t ref_q(float x, float s, int32_t zp) {
  float r = rintf(rintf(x / s) + (float)zp);
  if (!(r >= 0.0f)) r = 0.0f;
  if (r > 255.0f) r = 255.0f;
  return (uint8_t)r;
}

static float ref_dq(uint8_t q, float s, int32_t zp) { return (float)((int64_t)q - zp) * s; }

int main(void) {
  nnp_threadpool *pools[4] = {NULL};
  for (int t = 1; t < 4; t++) CHECK_OK(nnp_threadpool_create(t + 1, &pools[t]));
  for (int trial = 0; trial < 60; trial++) {
    int64_t n = trial % 5 == 0 ? kt_int(NNP_QELTWISE_BLOCK, 3 * NNP_QELTWISE_BLOCK + 13) : kt_int(1, 200);
    float *x = nnp_malloc((size_t)n * 4), *fw = nnp_malloc((size_t)n * 4), *fg = nnp_malloc((size_t)n * 4);
    uint8_t *a = nnp_malloc((size_t)n), *b = nnp_malloc((size_t)n), *want = nnp_malloc((size_t)n),
            *got = nnp_malloc((size_t)n);
    float s = (float)kt_int(1, 4000) / 1000.0f * (trial % 3 == 0 ? 0.01f : 1.0f); /* small: saturates */
    int32_t zp = (int32_t)kt_int(0, 255);
    for (int64_t i = 0; i < n; i++) {
      x[i] = kt_float() * 3.0f;
      a[i] = (uint8_t)kt_next();
      b[i] = (uint8_t)kt_next();
    }
    if (n > 8) { /* the specials: NaN saturates low, infinities to the ends, exact halves */
      x[0] = NAN;
      x[1] = INFINITY;
      x[2] = -INFINITY;
      x[3] = 2.5f * s;
      x[4] = -0.5f * s;
      x[5] = -0.0f;
    }
    nnp_qadd_params p = {.a_scale = (float)kt_int(1, 3000) / 100000.0f, .b_scale = (float)kt_int(1, 3000) / 100000.0f,
                         .y_scale = (float)kt_int(1, 3000) / 100000.0f, .a_zp = (int32_t)kt_int(0, 255),
                         .b_zp = (int32_t)kt_int(0, 255), .y_zp = (int32_t)kt_int(0, 255), .act = trial % 3 != 0,
                         .lo = trial % 3 == 1 ? 0.0f : -0.5f, .hi = trial % 3 == 1 ? INFINITY : 1.5f}; /* Relu, Clip */
    for (int generic = 0; generic < 2; generic++) {
      if (!generic && !nnp_cpu_has_avx2_fma()) continue;
      for (int t = 0; t < 4; t++) {
        for (int64_t i = 0; i < n; i++) want[i] = ref_q(x[i], s, zp);
        memset(got, 0xa5, (size_t)n);
        nnp_quantize_u8(x, got, n, s, zp, pools[t], generic);
        CHECK_MSG(memcmp(got, want, (size_t)n) == 0, "quantize trial %d n %lld generic %d threads %d", trial,
                  (long long)n, generic, t + 1);

        for (int64_t i = 0; i < n; i++) fw[i] = ref_dq(a[i], s, zp);
        memset(fg, 0xa5, (size_t)n * 4);
        nnp_dequantize_u8(a, fg, n, s, zp, pools[t], generic);
        CHECK_MSG(memcmp(fg, fw, (size_t)n * 4) == 0, "dequantize trial %d generic %d threads %d", trial, generic,
                  t + 1);

        for (int64_t i = 0; i < n; i++) {
          float v = ref_dq(a[i], p.a_scale, p.a_zp) + ref_dq(b[i], p.b_scale, p.b_zp);
          if (p.act) { /* the reference Relu / Clip */
            v = v < p.lo ? p.lo : v;
            v = v > p.hi ? p.hi : v;
          }
          want[i] = ref_q(v, p.y_scale, p.y_zp);
        }
        memset(got, 0xa5, (size_t)n);
        nnp_qadd_u8(a, b, got, n, &p, pools[t], generic);
        int64_t bad = -1;
        for (int64_t i = 0; i < n && bad < 0; i++)
          if (got[i] != want[i]) bad = i;
        CHECK_MSG(bad < 0, "qadd trial %d n %lld act %d generic %d threads %d: y[%lld] = %d, want %d", trial,
                  (long long)n, p.act, generic, t + 1, (long long)bad, bad < 0 ? 0 : got[bad],
                  bad < 0 ? 0 : want[bad]);
      }
    }
    nnp_free(x);
    nnp_free(fw);
    nnp_free(fg);
    nnp_free(a);
    nnp_free(b);
    nnp_free(want);
    nnp_free(got);
  }
  for (int t = 1; t < 4; t++) nnp_threadpool_destroy(pools[t]);
  TEST_MAIN_END();
}
