/* FusedElementwise programs on AVX2 (kernels/ewprog.h) against a scalar reference with
 * the reference kernel's formulas (ops/fused_elementwise.c): random chains of 1..5
 * instructions over every covered opcode, operands of the output's length or one
 * element, lengths 1..5000 (ragged tails, several 1024-element blocks), a random range
 * [i0, i1) whose outside must stay untouched, in place and not. Sigmoid's polynomial
 * exp is within 1e-6 of expf; a chain of five stays within 1e-5 here. */
#include <math.h>
#include <string.h>

#include "kernel_test_util.h"
#include "kernels/cpu.h"
#include "kernels/dispatch.h"
#include "kernels/ewprog.h"
#include "kernels/softmax.h"
#include "nnperf/alloc.h"
#include "ops/internal_ops.h"
#include "test.h"

static const int64_t opcodes[] = {NNP_EW_ADD,  NNP_EW_SUB,     NNP_EW_RSUB, NNP_EW_MUL,  NNP_EW_DIV,
                                  NNP_EW_RDIV, NNP_EW_RELU,    NNP_EW_SIGMOID, NNP_EW_NEG, NNP_EW_CLIP,
                                  NNP_EW_HARD_SWISH, NNP_EW_ERF};

static float ref_op(int64_t op, float a, float b, float lo, float hi) {
  switch (op) {
    case NNP_EW_ADD: return a + b;
    case NNP_EW_SUB: return a - b;
    case NNP_EW_RSUB: return b - a;
    case NNP_EW_MUL: return a * b;
    case NNP_EW_DIV: return a / b;
    case NNP_EW_RDIV: return b / a;
    case NNP_EW_RELU: return a < 0 ? 0.0f : a;
    case NNP_EW_SIGMOID: return a >= 0 ? 1.0f / (1.0f + expf(-a)) : expf(a) / (1.0f + expf(a));
    case NNP_EW_NEG: return -a;
    case NNP_EW_CLIP: return (a < lo ? lo : a) > hi ? hi : (a < lo ? lo : a);
    case NNP_EW_ERF: return erff(a);
    default: { /* HardSwish */
      float t = a * (1.0f / 6.0f) + 0.5f;
      return a * (t < 0 ? 0.0f : (t > 1 ? 1.0f : t));
    }
  }
}

static bool divides(int64_t op) { return op == NNP_EW_DIV || op == NNP_EW_RDIV; }

static void one_case(int trial) {
  const int64_t len = trial % 4 == 0 ? kt_int(1, 40) : kt_int(1, 5000);
  const int n = (int)kt_int(1, 5);
  int64_t prog[10];
  float params[10];
  const float *b[5];
  bool bs[5];
  float *ops[5], *x = nnp_malloc((size_t)len * 4), *want = nnp_malloc((size_t)len * 4);
  float *got = nnp_malloc((size_t)len * 4);
  for (int64_t i = 0; i < len; i++) x[i] = 8.0f * kt_float(); /* sigmoid's whole range */
  for (int k = 0; k < n; k++) {
    prog[2 * k] = opcodes[kt_int(0, 11)];
    /* a divisor near zero after Sigmoid's last-bit difference amplifies it past any
     * fixed tolerance (conditioning, not the kernel): divisions come before any Sigmoid */
    for (int q = 0; q < k; q++)
      if ((prog[2 * q] == NNP_EW_SIGMOID || prog[2 * q] == NNP_EW_ERF) && divides(prog[2 * k])) prog[2 * k] = NNP_EW_MUL;
    prog[2 * k + 1] = prog[2 * k] < NNP_EW_RELU ? k + 1 : -1;
    params[2 * k] = -0.5f, params[2 * k + 1] = 0.8f;
    ops[k] = nnp_malloc((size_t)len * 4);
    for (int64_t i = 0; i < len; i++) /* divisors kept away from zero */
      ops[k][i] = divides(prog[2 * k]) ? (kt_next() & 1 ? 1.0f : -1.0f) * (0.5f + kt_float() * 0.4f + 0.5f) : kt_float();
    bs[k] = kt_next() % 4 == 0;
    b[k] = prog[2 * k + 1] > 0 ? ops[k] : NULL;
  }
  const int64_t i0 = kt_int(0, len - 1), i1 = kt_int(i0 + 1, len);
  for (int64_t i = 0; i < len; i++) {
    float a = x[i];
    for (int k = 0; k < n; k++) {
      const float bv = b[k] ? (bs[k] ? b[k][0] : b[k][i]) : 0.0f;
      a = ref_op(prog[2 * k], a, bv, params[2 * k], params[2 * k + 1]);
    }
    want[i] = i >= i0 && i < i1 ? a : 77.0f;
  }
  const bool in_place = trial % 2;
  for (int64_t i = 0; i < len; i++) got[i] = in_place ? x[i] : 77.0f;
  if (in_place)
    for (int64_t i = 0; i < len; i++)
      if (i < i0 || i >= i1) got[i] = 77.0f;
  const nnp_ewprog p = {.n = n, .op = prog, .params = params, .b = b, .b_scalar = bs};
  nnp_ewprog_run_avx2(&p, in_place ? got : x, got, i0, i1);
  /* RDIV of a value that reached zero (Relu, Clip) is inf/nan in both: compare finite ones */
  double err = 0;
  for (int64_t i = 0; i < len; i++) {
    if (!isfinite(want[i]) && !isfinite(got[i])) continue;
    double e = fabs((double)got[i] - (double)want[i]) / (1.0 + fabs((double)want[i]));
    if (!(e <= err)) err = e;
  }
  CHECK_MSG(err < 1e-5, "trial %d len %lld range [%lld, %lld) %d instructions (first opcode %lld)%s: err %g", trial,
            (long long)len, (long long)i0, (long long)i1, n, (long long)prog[0], in_place ? " in place" : "", err);
  for (int k = 0; k < n; k++) nnp_free(ops[k]);
  nnp_free(x), nnp_free(want), nnp_free(got);
}

/* SiLU as the graph has it: Sigmoid, then Mul whose operand is the program's own input x
 * (the kernel's dedicated loop), in place (y is x) and not, over a random range. */
static void silu_case(int trial) {
  const int64_t len = kt_int(1, 3000), i0 = kt_int(0, len - 1), i1 = kt_int(i0 + 1, len);
  float *x = nnp_malloc((size_t)len * 4), *got = nnp_malloc((size_t)len * 4);
  for (int64_t i = 0; i < len; i++) x[i] = 16.0f * kt_float() - 8.0f;
  const bool in_place = trial % 2;
  for (int64_t i = 0; i < len; i++) got[i] = in_place ? x[i] : 77.0f;
  const float *src = in_place ? got : x;
  const int64_t prog[4] = {NNP_EW_SIGMOID, -1, NNP_EW_MUL, 0};
  const float params[4] = {0};
  const float *b[2] = {NULL, src};
  const bool bs[2] = {false, false};
  const nnp_ewprog p = {.n = 2, .op = prog, .params = params, .b = b, .b_scalar = bs};
  nnp_ewprog_run_avx2(&p, src, got, i0, i1);
  double err = 0;
  for (int64_t i = 0; i < len; i++) {
    const float want = i >= i0 && i < i1 ? x[i] * ref_op(NNP_EW_SIGMOID, x[i], 0, 0, 0) : in_place ? x[i] : 77.0f;
    const double e = fabs((double)got[i] - want) / (1.0 + fabs((double)want));
    if (!(e <= err)) err = e;
  }
  CHECK_MSG(err < 1e-6, "SiLU trial %d len %lld range [%lld, %lld)%s: err %g", trial, (long long)len, (long long)i0,
            (long long)i1, in_place ? " in place" : "", err);
  nnp_free(x), nnp_free(got);
}

/* GELU's own loops (AVX2, and AVX-512 where the dispatch picks it) against the program
 * as the reference kernel runs it: x / c, erff, + a, * x, * h (torch's c = sqrt 2, a = 1,
 * h = 0.5, and other constants), in place and not, random ranges with ragged ends,
 * values across erf's whole range (|x| up to 12: e^(-x^2) underflows). */
static void gelu_case(int trial, bool avx512) {
  const int64_t len = kt_int(1, 3000), i0 = kt_int(0, len - 1), i1 = kt_int(i0 + 1, len);
  const float c = trial % 3 ? 1.41421353816986083984375f : 0.5f + kt_float(), a = trial % 3 ? 1.0f : kt_float();
  const float h = trial % 3 ? 0.5f : kt_float();
  float *x = nnp_malloc((size_t)len * 4), *got = nnp_malloc((size_t)len * 4);
  for (int64_t i = 0; i < len; i++) x[i] = (trial % 4 ? 8.0f : 24.0f) * kt_float() - (trial % 4 ? 4.0f : 12.0f);
  const bool in_place = trial % 2;
  for (int64_t i = 0; i < len; i++) got[i] = in_place ? x[i] : 77.0f;
  (avx512 ? nnp_gelu_run_avx512 : nnp_gelu_run_avx2)(in_place ? got : x, got, i0, i1, 1.0f / c, a, h);
  double err = 0;
  for (int64_t i = 0; i < len; i++) {
    const float want = i >= i0 && i < i1 ? (erff(x[i] / c) + a) * x[i] * h : in_place ? x[i] : 77.0f;
    const double e = fabs((double)got[i] - want) / (1.0 + fabs((double)want));
    if (!(e <= err)) err = e;
  }
  CHECK_MSG(err < 1e-6, "GELU %s trial %d len %lld range [%lld, %lld) c %g a %g h %g%s: err %g",
            avx512 ? "avx512" : "avx2", trial, (long long)len, (long long)i0, (long long)i1, c, a, h,
            in_place ? " in place" : "", err);
  nnp_free(x), nnp_free(got);
}

static void gelu_cases(void) {
  const bool avx512 = nnp_dispatch_isa(NNP_KF_FUSED_ELTWISE) == NNP_ISA_AVX512;
  for (int trial = 0; trial < 400; trial++) gelu_case(trial, false);
  for (int trial = 0; trial < 400 && avx512; trial++) gelu_case(trial, true);
  printf("GELU loops vs the program: 400 ranges on AVX2, %s\n",
         avx512 ? "400 on AVX-512" : "AVX-512's skipped (the dispatch does not pick it here)");
  /* the shape the op looks for, and near misses */
  const int64_t gelu[10] = {NNP_EW_DIV, 1, NNP_EW_ERF, -1, NNP_EW_ADD, 2, NNP_EW_MUL, 3, NNP_EW_MUL, 4};
  int64_t miss[10];
  CHECK(nnp_ewprog_is_gelu(gelu, 5) && !nnp_ewprog_is_gelu(gelu, 4));
  for (int k = 0; k < 5; k++) {
    memcpy(miss, gelu, sizeof miss);
    miss[2 * k] = k == 1 ? NNP_EW_SIGMOID : NNP_EW_SUB;
    CHECK_MSG(!nnp_ewprog_is_gelu(miss, 5), "instruction %d changed: still taken for GELU", k);
  }
}

/* Softmax rows (kernels/softmax.h, the same vector exp) against double sums of expf:
 * row lengths 1..300 (ragged ends), large and negative values, threads 1..3; the AVX2
 * kernel, or the AVX-512 one (its masked ragged end) where the dispatch picks it. */
static void softmax_cases(bool avx512) {
  nnp_threadpool *tp = NULL;
  CHECK_OK(nnp_threadpool_create(3, &tp));
  for (int trial = 0; trial < 200; trial++) {
    const int64_t n = kt_int(1, 300), rows = kt_int(1, 5);
    float *x = nnp_malloc((size_t)(n * rows) * 4), *want = nnp_malloc((size_t)(n * rows) * 4);
    float *got = nnp_malloc((size_t)(n * rows) * 4);
    for (int64_t i = 0; i < n * rows; i++) x[i] = (trial % 3 ? 8.0f : 60.0f) * kt_float() - (trial % 5 ? 0 : 30.0f);
    for (int64_t r = 0; r < rows; r++) {
      const float *xr = x + r * n;
      float mx = xr[0];
      for (int64_t i = 1; i < n; i++) mx = xr[i] > mx ? xr[i] : mx;
      double sum = 0;
      for (int64_t i = 0; i < n; i++) sum += expf(xr[i] - mx);
      for (int64_t i = 0; i < n; i++) want[r * n + i] = (float)(expf(xr[i] - mx) / sum);
    }
    nnp_softmax_rows(x, got, rows, n, avx512, trial % 2 ? tp : NULL);
    CHECK_MSG(kt_max_err(got, want, n * rows) < 1e-6, "softmax %s trial %d n %lld rows %lld: err %g",
              avx512 ? "avx512" : "avx2", trial, (long long)n, (long long)rows, kt_max_err(got, want, n * rows));
    nnp_free(x);
    nnp_free(want);
    nnp_free(got);
  }
  nnp_threadpool_destroy(tp);
  printf("softmax rows (%s) vs double sums: 200 cases\n", avx512 ? "avx512" : "avx2");
}

int main(void) {
  if (!nnp_cpu_has_avx2_fma()) {
    printf("skip: the FusedElementwise kernel needs AVX2 + FMA\n");
    TEST_MAIN_END();
  }
  for (int trial = 0; trial < 3000; trial++) one_case(trial);
  for (int trial = 0; trial < 400; trial++) silu_case(trial);
  printf("FusedElementwise AVX2 vs reference: 3000 programs, 400 SiLU ranges\n");
  gelu_cases();
  softmax_cases(false);
  if (nnp_dispatch_isa(NNP_KF_FUSED_ELTWISE) == NNP_ISA_AVX512) softmax_cases(true);
  else printf("softmax rows (avx512): skipped, the dispatch does not pick AVX-512 here\n");
  TEST_MAIN_END();
}
