/* Softmax, LogSoftmax, Reduce{Mean,Sum,Max,Min,Prod}, ArgMax, ArgMin. */
#include "ops/op_test_util.h"

#include <stdint.h>

/* ---- Softmax -------------------------------------------------------------------------- */

static void naive_softmax(const float *x, float *y, int64_t outer, int64_t n, int64_t inner, bool lg) {
  for (int64_t o = 0; o < outer; o++)
    for (int64_t j = 0; j < inner; j++) {
      double mx = -INFINITY, s = 0;
      for (int64_t k = 0; k < n; k++) mx = fmax(mx, x[(o * n + k) * inner + j]);
      for (int64_t k = 0; k < n; k++) s += exp(x[(o * n + k) * inner + j] - mx);
      for (int64_t k = 0; k < n; k++) {
        double v = x[(o * n + k) * inner + j] - mx;
        y[(o * n + k) * inner + j] = (float)(lg ? v - log(s) : exp(v) / s);
      }
    }
}

static void test_softmax_basic(void) {
  const float x[6] = {1, 2, 3, -1, 0, 5};
  const int64_t d[2] = {2, 3};
  nnp_tensor in = test_tensor(NNP_F32, 2, d, x), out;
  const nnp_tensor *ins[1] = {&in};
  float want[6];

  /* opset 13 default axis -1 */
  test_node t = test_node_new("Softmax");
  CHECK_OK(test_run(&t, 13, 1, ins, &out));
  naive_softmax(x, want, 2, 3, 1, false);
  CHECK(test_shape_is(&out, 2, d));
  CHECK(test_max_abs_diff(&out, want, 6) < 1e-6);
  nnp_tensor_free(&out);
  test_node_free(&t);

  /* opset 13 axis 0: strided path */
  t = test_node_new("Softmax");
  test_attr_int(&t, "axis", 0);
  CHECK_OK(test_run(&t, 13, 1, ins, &out));
  naive_softmax(x, want, 1, 2, 3, false);
  CHECK(test_max_abs_diff(&out, want, 6) < 1e-6);
  nnp_tensor_free(&out);
  test_node_free(&t);

  /* opset 11 axis 0: the whole tensor is one row */
  t = test_node_new("Softmax");
  test_attr_int(&t, "axis", 0);
  CHECK_OK(test_run(&t, 11, 1, ins, &out));
  naive_softmax(x, want, 1, 6, 1, false);
  CHECK(test_max_abs_diff(&out, want, 6) < 1e-6);
  nnp_tensor_free(&out);
  test_node_free(&t);

  /* LogSoftmax, opset 13, axis 0 and -1 */
  t = test_node_new("LogSoftmax");
  CHECK_OK(test_run(&t, 13, 1, ins, &out));
  naive_softmax(x, want, 2, 3, 1, true);
  CHECK(test_max_abs_diff(&out, want, 6) < 1e-5);
  nnp_tensor_free(&out);
  test_node_free(&t);
  t = test_node_new("LogSoftmax");
  test_attr_int(&t, "axis", -2);
  CHECK_OK(test_run(&t, 13, 1, ins, &out));
  naive_softmax(x, want, 1, 2, 3, true);
  CHECK(test_max_abs_diff(&out, want, 6) < 1e-5);
  nnp_tensor_free(&out);
  test_node_free(&t);
  nnp_tensor_free(&in);
}

static void test_softmax_coerce_2d(void) {
  /* [2,2,3] at opset 11 with default axis 1 = rows of 6; at opset 13 axis 1 = per-axis. */
  float x[12];
  test_fill_uniform(x, 12, -3, 3, 7);
  const int64_t d[3] = {2, 2, 3};
  nnp_tensor in = test_tensor(NNP_F32, 3, d, x), out;
  const nnp_tensor *ins[1] = {&in};
  float want[12];
  test_node t = test_node_new("Softmax");
  CHECK_OK(test_run(&t, 11, 1, ins, &out));
  naive_softmax(x, want, 2, 6, 1, false);
  CHECK(test_shape_is(&out, 3, d));
  CHECK(test_max_abs_diff(&out, want, 12) < 1e-6);
  nnp_tensor_free(&out);
  test_node_free(&t);

  t = test_node_new("Softmax");
  test_attr_int(&t, "axis", 1);
  CHECK_OK(test_run(&t, 13, 1, ins, &out));
  naive_softmax(x, want, 2, 2, 3, false);
  CHECK(test_max_abs_diff(&out, want, 12) < 1e-6);
  nnp_tensor_free(&out);
  test_node_free(&t);

  /* opset 11, axis == rank: rows of one element, all ones */
  t = test_node_new("Softmax");
  test_attr_int(&t, "axis", 3);
  CHECK_OK(test_run(&t, 11, 1, ins, &out));
  for (int i = 0; i < 12; i++) want[i] = 1;
  CHECK(test_max_abs_diff(&out, want, 12) == 0);
  nnp_tensor_free(&out);
  test_node_free(&t);
  nnp_tensor_free(&in);
}

static void test_softmax_large_and_types(void) {
  const float x[4] = {1000, 1001, -1e30f, 3e38f};
  const int64_t d[2] = {2, 2};
  nnp_tensor in = test_tensor(NNP_F32, 2, d, x), out;
  const nnp_tensor *ins[1] = {&in};
  test_node t = test_node_new("Softmax");
  CHECK_OK(test_run(&t, 13, 1, ins, &out));
  const float *y = out.data;
  CHECK_NEAR(y[0], 0.26894142, 1e-6);
  CHECK_NEAR(y[1], 0.73105858, 1e-6);
  CHECK_NEAR(y[2], 0, 0);
  CHECK_NEAR(y[3], 1, 0);
  nnp_tensor_free(&out);
  test_node_free(&t);
  nnp_tensor_free(&in);

  /* float64 */
  const double xd[3] = {1, 2, 3};
  const int64_t d1[1] = {3};
  in = test_tensor(NNP_F64, 1, d1, xd);
  t = test_node_new("LogSoftmax");
  CHECK_OK(test_run(&t, 13, 1, ins, &out));
  double lse = log(exp(1.0) + exp(2.0) + exp(3.0));
  CHECK(out.dtype == NNP_F64);
  for (int i = 0; i < 3; i++) CHECK_NEAR(((double *)out.data)[i], xd[i] - lse, 1e-12);
  nnp_tensor_free(&out);
  test_node_free(&t);
  nnp_tensor_free(&in);

  /* float16 */
  uint16_t xh[2] = {nnp_f32_to_f16(0), nnp_f32_to_f16(1)};
  const int64_t d2[1] = {2};
  in = test_tensor(NNP_F16, 1, d2, xh);
  t = test_node_new("Softmax");
  CHECK_OK(test_run(&t, 13, 1, ins, &out));
  CHECK_NEAR(nnp_f16_to_f32(((uint16_t *)out.data)[0]), 0.26894142, 1e-3);
  CHECK_NEAR(nnp_f16_to_f32(((uint16_t *)out.data)[1]), 0.73105858, 1e-3);
  nnp_tensor_free(&out);
  test_node_free(&t);
  nnp_tensor_free(&in);
}

static void test_softmax_errors(void) {
  const int64_t d[2] = {2, 3};
  nnp_tensor in = test_tensor(NNP_F32, 2, d, NULL), out;
  const nnp_tensor *ins[1] = {&in};
  test_node t = test_node_new("Softmax");
  test_attr_int(&t, "axis", 2);
  CHECK(test_run(&t, 13, 1, ins, &out) == NNP_ERR_SHAPE);
  CHECK(test_run(&t, 11, 1, ins, &out) == NNP_OK); /* axis == rank is fine before 13 */
  nnp_tensor_free(&out);
  test_node_free(&t);
  t = test_node_new("Softmax");
  test_attr_int(&t, "axis", -3);
  CHECK(test_run(&t, 13, 1, ins, &out) == NNP_ERR_SHAPE);
  CHECK(test_run(&t, 11, 1, ins, &out) == NNP_ERR_SHAPE);
  test_node_free(&t);
  nnp_tensor_free(&in);

  in = test_tensor(NNP_I32, 2, d, NULL);
  t = test_node_new("Softmax");
  CHECK(test_run(&t, 13, 1, ins, &out) == NNP_ERR_UNSUPPORTED);
  test_node_free(&t);
  nnp_tensor_free(&in);
}

/* ---- Reductions ----------------------------------------------------------------------- */

static void test_reduce_sum_axes_input(void) {
  const float x[6] = {1, 2, 3, 4, 5, 6};
  const int64_t d[2] = {2, 3};
  nnp_tensor in = test_tensor(NNP_F32, 2, d, x), out;
  const int64_t ax1[1] = {1}, one[1] = {1}, zero[1] = {0};
  nnp_tensor axes = test_tensor(NNP_I64, 1, one, ax1);
  nnp_tensor empty_axes = test_tensor(NNP_I64, 1, zero, NULL);
  const nnp_tensor *ins[2] = {&in, &axes};

  test_node t = test_node_new("ReduceSum");
  test_attr_int(&t, "keepdims", 0);
  CHECK_OK(test_run(&t, 13, 2, ins, &out));
  const int64_t d2[1] = {2};
  CHECK(test_shape_is(&out, 1, d2));
  const float w1[2] = {6, 15};
  CHECK(test_max_abs_diff(&out, w1, 2) == 0);
  nnp_tensor_free(&out);
  /* no axes input: reduce all */
  CHECK_OK(test_run(&t, 13, 1, ins, &out));
  CHECK(out.rank == 0 && ((float *)out.data)[0] == 21);
  nnp_tensor_free(&out);
  /* an empty axes tensor: reduce all too */
  ins[1] = &empty_axes;
  CHECK_OK(test_run(&t, 13, 2, ins, &out));
  CHECK(out.rank == 0 && ((float *)out.data)[0] == 21);
  nnp_tensor_free(&out);
  test_node_free(&t);

  /* noop_with_empty_axes = 1 with empty axes: identity */
  t = test_node_new("ReduceSum");
  test_attr_int(&t, "noop_with_empty_axes", 1);
  CHECK_OK(test_run(&t, 13, 2, ins, &out));
  CHECK(test_shape_is(&out, 2, d));
  CHECK(test_max_abs_diff(&out, x, 6) == 0);
  nnp_tensor_free(&out);
  test_node_free(&t);

  /* a runtime axes input is rejected */
  nnp_tensor rt = {.dtype = NNP_I64, .rank = 1, .dims = {1}, .data = NULL};
  ins[1] = &rt;
  t = test_node_new("ReduceSum");
  nnp_tensor o;
  CHECK(nnp_op_infer(t.n, 13, 2, ins, 1, &o, NULL) == NNP_ERR_UNSUPPORTED);
  /* axes input before opset 13 is an error */
  ins[1] = &axes;
  CHECK(test_run(&t, 11, 2, ins, &out) == NNP_ERR_FORMAT);
  test_node_free(&t);

  /* attribute form before opset 13 */
  t = test_node_new("ReduceSum");
  const int64_t a0[1] = {0};
  test_attr_ints(&t, "axes", 1, a0);
  CHECK_OK(test_run(&t, 11, 1, ins, &out));
  const int64_t d13[2] = {1, 3};
  CHECK(test_shape_is(&out, 2, d13));
  const float w2[3] = {5, 7, 9};
  CHECK(test_max_abs_diff(&out, w2, 3) == 0);
  nnp_tensor_free(&out);
  /* ...and an error at opset 13 */
  CHECK(test_run(&t, 13, 1, ins, &out) == NNP_ERR_FORMAT);
  test_node_free(&t);

  nnp_tensor_free(&in);
  nnp_tensor_free(&axes);
  nnp_tensor_free(&empty_axes);
}

static void test_reduce_attr_ops(void) {
  const float x[6] = {1, 2, 3, 4, 5, 6};
  const int64_t d[2] = {2, 3};
  nnp_tensor in = test_tensor(NNP_F32, 2, d, x), out;
  const nnp_tensor *ins[1] = {&in};
  const int64_t am2[1] = {-2};
  const int64_t d13[2] = {1, 3};
  struct { const char *op; float want[3]; } cases[] = {
      {"ReduceMean", {2.5f, 3.5f, 4.5f}}, {"ReduceMax", {4, 5, 6}},
      {"ReduceMin", {1, 2, 3}}, {"ReduceProd", {4, 10, 18}}};
  for (int c = 0; c < 4; c++) {
    test_node t = test_node_new(cases[c].op);
    test_attr_ints(&t, "axes", 1, am2);
    CHECK_OK(test_run(&t, 13, 1, ins, &out));
    CHECK(test_shape_is(&out, 2, d13));
    CHECK_MSG(test_max_abs_diff(&out, cases[c].want, 3) < 1e-6, "%s", cases[c].op);
    nnp_tensor_free(&out);
    /* opset 18: axes moved to an input, so the attribute is rejected */
    CHECK(test_run(&t, 18, 1, ins, &out) == NNP_ERR_FORMAT);
    test_node_free(&t);
  }
  /* opset 18 with an axes input */
  const int64_t one[1] = {1}, a1[1] = {1};
  nnp_tensor axes = test_tensor(NNP_I64, 1, one, a1);
  const nnp_tensor *ins2[2] = {&in, &axes};
  test_node t = test_node_new("ReduceMax");
  test_attr_int(&t, "keepdims", 0);
  CHECK_OK(test_run(&t, 18, 2, ins2, &out));
  const float w[2] = {3, 6};
  CHECK(test_max_abs_diff(&out, w, 2) == 0);
  nnp_tensor_free(&out);
  test_node_free(&t);
  nnp_tensor_free(&axes);
  nnp_tensor_free(&in);
}

static void test_reduce_errors(void) {
  const int64_t d[2] = {2, 3};
  nnp_tensor in = test_tensor(NNP_F32, 2, d, NULL), out;
  const nnp_tensor *ins[1] = {&in};
  const int64_t dup[2] = {1, -1}, big[1] = {2}, neg[1] = {-3};
  test_node t = test_node_new("ReduceMean");
  test_attr_ints(&t, "axes", 2, dup);
  CHECK(test_run(&t, 13, 1, ins, &out) == NNP_ERR_SHAPE);
  test_node_free(&t);
  t = test_node_new("ReduceMean");
  test_attr_ints(&t, "axes", 1, big);
  CHECK(test_run(&t, 13, 1, ins, &out) == NNP_ERR_SHAPE);
  test_node_free(&t);
  t = test_node_new("ReduceMin");
  test_attr_ints(&t, "axes", 1, neg);
  CHECK(test_run(&t, 13, 1, ins, &out) == NNP_ERR_SHAPE);
  test_node_free(&t);
  nnp_tensor_free(&in);
  in = test_tensor(NNP_BOOL, 2, d, NULL);
  t = test_node_new("ReduceSum");
  CHECK(test_run(&t, 13, 1, ins, &out) == NNP_ERR_UNSUPPORTED);
  test_node_free(&t);
  nnp_tensor_free(&in);
}

/* Naive reduction over a mask, for f64 data of shape dims (rank r). */
static void naive_reduce(const char *op, int r, const int64_t *dims, unsigned mask, const double *x, double *y,
                         int64_t out_n) {
  int64_t n = 1;
  for (int i = 0; i < r; i++) n *= dims[i];
  double init = !strcmp(op, "ReduceProd") ? 1 : !strcmp(op, "ReduceMax") ? -INFINITY
              : !strcmp(op, "ReduceMin") ? INFINITY : 0;
  for (int64_t o = 0; o < out_n; o++) y[o] = init;
  for (int64_t i = 0; i < n; i++) {
    int64_t rem = i, oi = 0, os = 1;
    int64_t idx[NNP_MAX_RANK];
    for (int k = r - 1; k >= 0; k--) { idx[k] = rem % dims[k]; rem /= dims[k]; }
    for (int k = r - 1; k >= 0; k--)
      if (!(mask >> k & 1)) { oi += idx[k] * os; os *= dims[k]; }
    double v = x[i];
    if (!strcmp(op, "ReduceProd")) y[oi] *= v;
    else if (!strcmp(op, "ReduceMax")) y[oi] = fmax(y[oi], v);
    else if (!strcmp(op, "ReduceMin")) y[oi] = fmin(y[oi], v);
    else y[oi] += v;
  }
  if (!strcmp(op, "ReduceMean"))
    for (int64_t o = 0; o < out_n; o++) y[o] /= (double)(n / out_n);
}

/* Every axes subset of a rank-4 tensor with a size-1 dim, every op, keepdims on and off. */
static void test_reduce_exhaustive(void) {
  const int64_t d[4] = {3, 1, 4, 5};
  double x[60], want[60];
  for (int i = 0; i < 60; i++) x[i] = 0.5 + ((i * 37) % 17) / 8.0;
  nnp_tensor in = test_tensor(NNP_F64, 4, d, x), out;
  const char *ops[5] = {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd"};
  for (int o = 0; o < 5; o++)
    for (unsigned mask = 1; mask < 16; mask++)
      for (int keep = 0; keep < 2; keep++) {
        int64_t axes[4];
        int na = 0;
        for (int k = 0; k < 4; k++)
          if (mask >> k & 1) axes[na++] = (k & 1) ? k - 4 : k; /* mix negative axes in */
        int64_t ad[1] = {na};
        nnp_tensor at = test_tensor(NNP_I64, 1, ad, axes);
        const nnp_tensor *ins[2] = {&in, &at};
        test_node t = test_node_new(ops[o]);
        test_attr_int(&t, "keepdims", keep);
        nnp_status st = test_run(&t, 18, 2, ins, &out);
        CHECK_OK(st);
        if (st == NNP_OK) {
          int64_t out_n = nnp_tensor_numel(&out);
          naive_reduce(ops[o], 4, d, mask, x, want, out_n);
          int want_rank = keep ? 4 : 4 - na;
          CHECK(out.rank == want_rank);
          double m = 0;
          for (int64_t i = 0; i < out_n; i++) m = fmax(m, fabs(((double *)out.data)[i] - want[i]) / fmax(1, fabs(want[i])));
          CHECK_MSG(m < 1e-12, "%s mask %u keep %d err %g", ops[o], mask, keep, m);
          nnp_tensor_free(&out);
        }
        test_node_free(&t);
        nnp_tensor_free(&at);
      }
  nnp_tensor_free(&in);
}

static void test_reduce_ints_and_special(void) {
  /* int64 sums stay exact beyond 2^53 */
  const int64_t xi[3] = {(int64_t)1 << 60, 1, 3};
  const int64_t d3[1] = {3};
  nnp_tensor in = test_tensor(NNP_I64, 1, d3, xi), out;
  const nnp_tensor *ins[1] = {&in};
  test_node t = test_node_new("ReduceSum");
  CHECK_OK(test_run(&t, 13, 1, ins, &out));
  CHECK(out.dtype == NNP_I64 && out.rank == 1 && ((int64_t *)out.data)[0] == ((int64_t)1 << 60) + 4);
  nnp_tensor_free(&out);
  test_node_free(&t);
  nnp_tensor_free(&in);

  /* int32 prod, mean truncates toward zero, uint8 max/min */
  const int32_t x32[4] = {-3, 4, 5, -2};
  const int64_t d4[1] = {4};
  in = test_tensor(NNP_I32, 1, d4, x32);
  t = test_node_new("ReduceProd");
  test_attr_int(&t, "keepdims", 0);
  CHECK_OK(test_run(&t, 13, 1, ins, &out));
  CHECK(out.rank == 0 && ((int32_t *)out.data)[0] == 120);
  nnp_tensor_free(&out);
  test_node_free(&t);
  t = test_node_new("ReduceMean");
  CHECK_OK(test_run(&t, 13, 1, ins, &out));
  CHECK(((int32_t *)out.data)[0] == 1); /* 4 / 4 */
  nnp_tensor_free(&out);
  test_node_free(&t);
  nnp_tensor_free(&in);

  const uint8_t x8[4] = {200, 7, 255, 0};
  in = test_tensor(NNP_U8, 1, d4, x8);
  t = test_node_new("ReduceMax");
  CHECK_OK(test_run(&t, 13, 1, ins, &out));
  CHECK(((uint8_t *)out.data)[0] == 255);
  nnp_tensor_free(&out);
  test_node_free(&t);
  t = test_node_new("ReduceMin");
  CHECK_OK(test_run(&t, 13, 1, ins, &out));
  CHECK(((uint8_t *)out.data)[0] == 0);
  nnp_tensor_free(&out);
  test_node_free(&t);
  nnp_tensor_free(&in);

  /* NaN propagates through max */
  const float xn[3] = {1, NAN, 2};
  in = test_tensor(NNP_F32, 1, d3, xn);
  t = test_node_new("ReduceMax");
  CHECK_OK(test_run(&t, 13, 1, ins, &out));
  CHECK(isnan(((float *)out.data)[0]));
  nnp_tensor_free(&out);
  test_node_free(&t);
  nnp_tensor_free(&in);

  /* reducing an empty axis: sum 0, prod 1, max -inf */
  const int64_t d02[2] = {0, 2};
  in = test_tensor(NNP_F32, 2, d02, NULL);
  const int64_t a0[1] = {0};
  const char *ops[3] = {"ReduceSum", "ReduceProd", "ReduceMax"};
  const float want[3] = {0, 1, -INFINITY};
  for (int i = 0; i < 3; i++) {
    t = test_node_new(ops[i]);
    test_attr_ints(&t, "axes", 1, a0);
    nnp_status st = test_run(&t, 12, 1, ins, &out); /* ReduceSum axes is an attribute before 13 */
    CHECK_OK(st);
    if (st == NNP_OK) {
      const int64_t d12[2] = {1, 2};
      CHECK(test_shape_is(&out, 2, d12));
      CHECK(((float *)out.data)[0] == want[i] && ((float *)out.data)[1] == want[i]);
      nnp_tensor_free(&out);
    }
    test_node_free(&t);
  }
  nnp_tensor_free(&in);

  /* a scalar input reduces to itself */
  const float s = 4;
  in = test_tensor(NNP_F32, 0, NULL, &s);
  t = test_node_new("ReduceMean");
  CHECK_OK(test_run(&t, 13, 1, ins, &out));
  CHECK(out.rank == 0 && ((float *)out.data)[0] == 4);
  nnp_tensor_free(&out);
  test_node_free(&t);
  nnp_tensor_free(&in);
}

/* ---- ArgMax / ArgMin ------------------------------------------------------------------ */

static void test_argmax(void) {
  const float x[6] = {2, 1, 2, 3, 10, 3};
  const int64_t d[2] = {2, 3};
  nnp_tensor in = test_tensor(NNP_F32, 2, d, x), out;
  const nnp_tensor *ins[1] = {&in};

  /* default axis 0, keepdims 1 */
  test_node t = test_node_new("ArgMax");
  CHECK_OK(test_run(&t, 13, 1, ins, &out));
  const int64_t d13[2] = {1, 3};
  CHECK(out.dtype == NNP_I64 && test_shape_is(&out, 2, d13));
  const int64_t *y = out.data;
  CHECK(y[0] == 1 && y[1] == 1 && y[2] == 1);
  nnp_tensor_free(&out);
  test_node_free(&t);

  /* axis -1, no keepdims, ties: first vs last */
  t = test_node_new("ArgMax");
  test_attr_int(&t, "axis", -1);
  test_attr_int(&t, "keepdims", 0);
  CHECK_OK(test_run(&t, 13, 1, ins, &out));
  const int64_t d2[1] = {2};
  CHECK(test_shape_is(&out, 1, d2));
  y = out.data;
  CHECK(y[0] == 0 && y[1] == 1);
  nnp_tensor_free(&out);
  test_attr_int(&t, "select_last_index", 1);
  CHECK_OK(test_run(&t, 13, 1, ins, &out));
  y = out.data;
  CHECK(y[0] == 2 && y[1] == 1);
  nnp_tensor_free(&out);
  test_node_free(&t);

  t = test_node_new("ArgMin");
  test_attr_int(&t, "axis", 1);
  CHECK_OK(test_run(&t, 13, 1, ins, &out));
  y = out.data;
  const int64_t d21[2] = {2, 1};
  CHECK(test_shape_is(&out, 2, d21) && y[0] == 1 && y[1] == 0);
  nnp_tensor_free(&out);
  test_attr_int(&t, "select_last_index", 1);
  CHECK_OK(test_run(&t, 13, 1, ins, &out));
  y = out.data;
  CHECK(y[0] == 1 && y[1] == 2);
  nnp_tensor_free(&out);
  test_node_free(&t);

  /* errors: axis out of range, empty axis */
  t = test_node_new("ArgMax");
  test_attr_int(&t, "axis", 2);
  CHECK(test_run(&t, 13, 1, ins, &out) == NNP_ERR_SHAPE);
  test_node_free(&t);
  nnp_tensor_free(&in);
  const int64_t d0[2] = {0, 3};
  in = test_tensor(NNP_F32, 2, d0, NULL);
  t = test_node_new("ArgMax");
  CHECK(test_run(&t, 13, 1, ins, &out) == NNP_ERR_SHAPE);
  test_node_free(&t);
  nnp_tensor_free(&in);

  /* int32 on a middle axis of a rank-3 tensor */
  const int32_t xi[8] = {1, 9, 4, 2, /* */ -5, -1, -7, -1};
  const int64_t d3[3] = {2, 2, 2};
  in = test_tensor(NNP_I32, 3, d3, xi);
  t = test_node_new("ArgMin");
  test_attr_int(&t, "axis", 1);
  test_attr_int(&t, "keepdims", 0);
  CHECK_OK(test_run(&t, 13, 1, ins, &out));
  y = out.data;
  CHECK(y[0] == 0 && y[1] == 1 && y[2] == 1 && y[3] == 0);
  nnp_tensor_free(&out);
  test_node_free(&t);
  nnp_tensor_free(&in);
}

int main(void) {
  test_softmax_basic();
  test_softmax_coerce_2d();
  test_softmax_large_and_types();
  test_softmax_errors();
  test_reduce_sum_axes_input();
  test_reduce_attr_ops();
  test_reduce_errors();
  test_reduce_exhaustive();
  test_reduce_ints_and_special();
  test_argmax();
  TEST_MAIN_END();
}
