/* Elementwise unary ops: math, activations, Clip, Not, Cast, Identity, Dropout. */
#include "ops/op_test_util.h"

#include <float.h>
#include <stdint.h>

static const int64_t D6[1] = {6};

/* Evaluates node t on n_in inputs with one output. */
/* Runs op (already configured in t) on a float32 vector and compares with want. */
static void check_f32_node(test_node *t, int64_t opset, const float *x, int n, const float *want,
                           double tol, const char *what) {
  const int64_t d[1] = {n};
  nnp_tensor in = test_tensor(NNP_F32, 1, d, x), out;
  const nnp_tensor *ins[1] = {&in};
  nnp_status st = test_run(t, opset, 1, ins, &out);
  CHECK_MSG(st == NNP_OK, "%s: %s", what, nnp_last_error());
  if (st == NNP_OK) {
    CHECK_MSG(out.dtype == NNP_F32 && out.rank == 1 && out.dims[0] == n, "%s: shape", what);
    const float *y = out.data;
    for (int i = 0; i < n; i++) {
      bool ok = (isnan(want[i]) && isnan(y[i])) || fabs((double)y[i] - want[i]) <= tol ||
                (isinf(want[i]) && y[i] == want[i]);
      CHECK_MSG(ok, "%s[%d]: got %.9g want %.9g", what, i, y[i], want[i]);
    }
    nnp_tensor_free(&out);
  }
  nnp_tensor_free(&in);
}

static void check_f32(const char *op, const float *x, int n, const float *want, double tol) {
  test_node t = test_node_new(op);
  check_f32_node(&t, 13, x, n, want, tol, op);
  test_node_free(&t);
}

/* The status of evaluating op on one input tensor (output freed). */
static nnp_status status_of(test_node *t, int64_t opset, int n_in, const nnp_tensor *const *in) {
  nnp_tensor out;
  nnp_status st = test_run(t, opset, n_in, in, &out);
  if (st == NNP_OK) nnp_tensor_free(&out);
  return st;
}

static void test_math(void) {
  const float x[6] = {-2.5f, -1.0f, -0.0f, 0.5f, 1.0f, 3.0f};
  float w[6];
  for (int i = 0; i < 6; i++) w[i] = fabsf(x[i]);
  check_f32("Abs", x, 6, w, 0);
  for (int i = 0; i < 6; i++) w[i] = -x[i];
  check_f32("Neg", x, 6, w, 0);
  for (int i = 0; i < 6; i++) w[i] = (float)exp(x[i]);
  check_f32("Exp", x, 6, w, 1e-6);
  for (int i = 0; i < 6; i++) w[i] = (float)floor(x[i]);
  check_f32("Floor", x, 6, w, 0);
  for (int i = 0; i < 6; i++) w[i] = (float)ceil(x[i]);
  check_f32("Ceil", x, 6, w, 0);
  for (int i = 0; i < 6; i++) w[i] = (float)erf(x[i]);
  check_f32("Erf", x, 6, w, 1e-6);
  for (int i = 0; i < 6; i++) w[i] = (float)tanh(x[i]);
  check_f32("Tanh", x, 6, w, 1e-6);
  for (int i = 0; i < 6; i++) w[i] = (float)(1.0 / x[i]);
  check_f32("Reciprocal", x, 6, w, 1e-6);
  const float p[4] = {0.0f, 1.0f, 4.0f, 2.0f};
  const float sq[4] = {0.0f, 1.0f, 2.0f, 1.41421356f};
  check_f32("Sqrt", p, 4, sq, 1e-6);
  const float lg[4] = {-INFINITY, 0.0f, 1.38629436f, 0.69314718f};
  check_f32("Log", p, 4, lg, 1e-6);
  /* Negative input to Sqrt/Log is NaN, not an error. */
  const float neg[1] = {-1.0f}, nan1[1] = {NAN};
  check_f32("Sqrt", neg, 1, nan1, 0);
  check_f32("Log", neg, 1, nan1, 0);
}

static void test_activations(void) {
  const float x[6] = {-100.0f, -1.0f, 0.0f, 0.5f, 2.0f, 100.0f};
  float w[6];
  for (int i = 0; i < 6; i++) w[i] = (float)(1.0 / (1.0 + exp(-(double)x[i])));
  check_f32("Sigmoid", x, 6, w, 1e-7); /* no NaN/overflow at +-100 */
  for (int i = 0; i < 6; i++) w[i] = x[i] < 0 ? 0 : x[i];
  check_f32("Relu", x, 6, w, 0);
  for (int i = 0; i < 6; i++) w[i] = (float)log1p(exp((double)x[i]));
  check_f32("Softplus", x, 6, w, 1e-5); /* softplus(100) = 100, not inf */
  for (int i = 0; i < 6; i++) {
    double hs = x[i] / 6.0 + 0.5;
    w[i] = (float)(x[i] * (hs < 0 ? 0 : hs > 1 ? 1 : hs));
  }
  check_f32("HardSwish", x, 6, w, 1e-6);

  /* LeakyRelu: default alpha 0.01, then 0.1 */
  for (int i = 0; i < 6; i++) w[i] = x[i] < 0 ? 0.01f * x[i] : x[i];
  check_f32("LeakyRelu", x, 6, w, 1e-6);
  test_node t = test_node_new("LeakyRelu");
  test_attr_float(&t, "alpha", 0.1f);
  for (int i = 0; i < 6; i++) w[i] = x[i] < 0 ? 0.1f * x[i] : x[i];
  check_f32_node(&t, 16, x, 6, w, 1e-6, "LeakyRelu alpha=0.1");
  test_node_free(&t);

  /* HardSigmoid defaults 0.2/0.5 and explicit 0.5/0.6 */
  for (int i = 0; i < 6; i++) {
    float v = 0.2f * x[i] + 0.5f;
    w[i] = v < 0 ? 0 : v > 1 ? 1 : v;
  }
  check_f32("HardSigmoid", x, 6, w, 1e-6);
  t = test_node_new("HardSigmoid");
  test_attr_float(&t, "alpha", 0.5f);
  test_attr_float(&t, "beta", 0.6f);
  for (int i = 0; i < 6; i++) {
    float v = 0.5f * x[i] + 0.6f;
    w[i] = v < 0 ? 0 : v > 1 ? 1 : v;
  }
  check_f32_node(&t, 6, x, 6, w, 1e-6, "HardSigmoid 0.5/0.6");
  test_node_free(&t);

  /* Elu default alpha 1, then 2 */
  for (int i = 0; i < 6; i++) w[i] = x[i] < 0 ? (float)expm1(x[i]) : x[i];
  check_f32("Elu", x, 6, w, 1e-6);
  t = test_node_new("Elu");
  test_attr_float(&t, "alpha", 2.0f);
  for (int i = 0; i < 6; i++) w[i] = x[i] < 0 ? 2.0f * (float)expm1(x[i]) : x[i];
  check_f32_node(&t, 6, x, 6, w, 1e-6, "Elu alpha=2");
  test_node_free(&t);

  /* Selu defaults and alpha=2, gamma=3 */
  for (int i = 0; i < 6; i++)
    w[i] = (float)(1.05070102214813232421875 *
                   (x[i] <= 0 ? 1.67326319217681884765625 * expm1(x[i]) : x[i]));
  check_f32("Selu", x, 6, w, 1e-5);
  t = test_node_new("Selu");
  test_attr_float(&t, "alpha", 2.0f);
  test_attr_float(&t, "gamma", 3.0f);
  for (int i = 0; i < 6; i++) w[i] = (float)(3.0 * (x[i] <= 0 ? 2.0 * expm1(x[i]) : x[i]));
  check_f32_node(&t, 6, x, 6, w, 1e-5, "Selu 2/3");
  test_node_free(&t);

  /* Gelu: default "none", "tanh", and a bad value */
  const float g[4] = {-3.0f, -0.5f, 0.0f, 1.5f};
  float gw[4];
  for (int i = 0; i < 4; i++) gw[i] = (float)(0.5 * g[i] * (1 + erf(g[i] / sqrt(2.0))));
  check_f32("Gelu", g, 4, gw, 1e-6);
  t = test_node_new("Gelu");
  test_attr_string(&t, "approximate", "tanh");
  for (int i = 0; i < 4; i++) {
    double v = g[i];
    gw[i] = (float)(0.5 * v * (1 + tanh(sqrt(2 / M_PI) * (v + 0.044715 * v * v * v))));
  }
  check_f32_node(&t, 13, g, 4, gw, 1e-6, "Gelu tanh");
  test_node_free(&t);
  t = test_node_new("Gelu");
  test_attr_string(&t, "approximate", "sigmoid");
  nnp_tensor in = test_tensor(NNP_F32, 1, D6, x);
  const nnp_tensor *ins[1] = {&in};
  CHECK(status_of(&t, 20, 1, ins) == NNP_ERR_UNSUPPORTED);
  test_node_free(&t);
  nnp_tensor_free(&in);
}

/* float64 and float16 go through the same formulas. */
static void test_other_float_types(void) {
  const double xd[4] = {-1.0, 0.0, 0.5, 2.0};
  const int64_t d4[1] = {4};
  nnp_tensor in = test_tensor(NNP_F64, 1, d4, xd), out;
  const nnp_tensor *ins[1] = {&in};
  test_node t = test_node_new("Sigmoid");
  CHECK_OK(test_run(&t, 13, 1, ins, &out));
  CHECK(out.dtype == NNP_F64);
  for (int i = 0; i < 4; i++) CHECK_NEAR(((double *)out.data)[i], 1 / (1 + exp(-xd[i])), 1e-15);
  nnp_tensor_free(&out);
  test_node_free(&t);
  nnp_tensor_free(&in);

  uint16_t xh[4];
  for (int i = 0; i < 4; i++) xh[i] = nnp_f32_to_f16((float)xd[i]);
  in = test_tensor(NNP_F16, 1, d4, xh);
  t = test_node_new("Exp");
  CHECK_OK(test_run(&t, 13, 1, ins, &out));
  CHECK(out.dtype == NNP_F16);
  for (int i = 0; i < 4; i++)
    CHECK_NEAR(nnp_f16_to_f32(((uint16_t *)out.data)[i]), exp(xd[i]), 4e-3);
  nnp_tensor_free(&out);
  test_node_free(&t);
  nnp_tensor_free(&in);

  /* Integer input to a float-only op is rejected at load time. */
  const int32_t xi[4] = {1, 2, 3, 4};
  in = test_tensor(NNP_I32, 1, d4, xi);
  t = test_node_new("Exp");
  CHECK(status_of(&t, 13, 1, ins) == NNP_ERR_UNSUPPORTED);
  test_node_free(&t);
  nnp_tensor_free(&in);

  /* Rank 0 */
  const float s = -4.0f;
  in = test_tensor(NNP_F32, 0, NULL, &s);
  t = test_node_new("Abs");
  CHECK_OK(test_run(&t, 13, 1, ins, &out));
  CHECK(out.rank == 0 && ((float *)out.data)[0] == 4.0f);
  nnp_tensor_free(&out);
  test_node_free(&t);
  nnp_tensor_free(&in);
}

static void test_int_unary(void) {
  const int8_t x8[4] = {-128, -5, 0, 7};
  const int64_t d4[1] = {4};
  nnp_tensor in = test_tensor(NNP_I8, 1, d4, x8), out;
  const nnp_tensor *ins[1] = {&in};
  test_node t = test_node_new("Abs");
  CHECK_OK(test_run(&t, 13, 1, ins, &out));
  const int8_t *y8 = out.data;
  CHECK(y8[0] == -128 && y8[1] == 5 && y8[2] == 0 && y8[3] == 7); /* numpy wraps -128 */
  nnp_tensor_free(&out);
  test_node_free(&t);
  t = test_node_new("Neg");
  CHECK_OK(test_run(&t, 13, 1, ins, &out));
  y8 = out.data;
  CHECK(y8[0] == -128 && y8[1] == 5 && y8[2] == 0 && y8[3] == -7);
  nnp_tensor_free(&out);
  test_node_free(&t);
  t = test_node_new("Relu");
  CHECK_OK(test_run(&t, 14, 1, ins, &out));
  y8 = out.data;
  CHECK(y8[0] == 0 && y8[1] == 0 && y8[2] == 0 && y8[3] == 7);
  nnp_tensor_free(&out);
  test_node_free(&t);
  nnp_tensor_free(&in);

  const int64_t x64[2] = {INT64_MIN, -3};
  const int64_t d2[1] = {2};
  in = test_tensor(NNP_I64, 1, d2, x64);
  t = test_node_new("Neg");
  CHECK_OK(test_run(&t, 13, 1, ins, &out));
  CHECK(((int64_t *)out.data)[0] == INT64_MIN && ((int64_t *)out.data)[1] == 3);
  nnp_tensor_free(&out);
  test_node_free(&t);
  nnp_tensor_free(&in);

  const uint8_t xu[2] = {200, 3};
  in = test_tensor(NNP_U8, 1, d2, xu);
  t = test_node_new("Abs");
  CHECK_OK(test_run(&t, 13, 1, ins, &out));
  CHECK(((uint8_t *)out.data)[0] == 200 && ((uint8_t *)out.data)[1] == 3);
  nnp_tensor_free(&out);
  test_node_free(&t);
  t = test_node_new("Neg"); /* Neg is not defined on unsigned types */
  CHECK(status_of(&t, 13, 1, ins) == NNP_ERR_UNSUPPORTED);
  test_node_free(&t);
  nnp_tensor_free(&in);
}

static void test_clip(void) {
  const float x[6] = {-3.0f, -1.0f, 0.0f, 0.5f, 2.0f, NAN};
  /* opset 6: attributes, defaults unbounded */
  test_node t = test_node_new("Clip");
  test_attr_float(&t, "min", -1.5f);
  test_attr_float(&t, "max", 1.0f);
  const float w1[6] = {-1.5f, -1.0f, 0.0f, 0.5f, 1.0f, NAN};
  check_f32_node(&t, 6, x, 6, w1, 0, "Clip-6 min/max");
  test_node_free(&t);
  t = test_node_new("Clip");
  test_attr_float(&t, "max", 0.0f);
  const float w2[6] = {-3.0f, -1.0f, 0.0f, 0.0f, 0.0f, NAN};
  check_f32_node(&t, 6, x, 6, w2, 0, "Clip-6 max only");
  test_node_free(&t);

  /* opset 13: inputs */
  nnp_tensor in = test_tensor(NNP_F32, 1, D6, x), out;
  float lo = -1.0f, hi = 0.75f;
  nnp_tensor tlo = test_tensor(NNP_F32, 0, NULL, &lo), thi = test_tensor(NNP_F32, 0, NULL, &hi);
  const nnp_tensor *both[3] = {&in, &tlo, &thi};
  const nnp_tensor *max_only[3] = {&in, NULL, &thi};
  const nnp_tensor *min_only[2] = {&in, &tlo};
  t = test_node_new("Clip");
  CHECK_OK(test_run(&t, 13, 3, both, &out));
  const float *y = out.data;
  CHECK(y[0] == -1.0f && y[1] == -1.0f && y[2] == 0 && y[3] == 0.5f && y[4] == 0.75f && isnan(y[5]));
  nnp_tensor_free(&out);
  CHECK_OK(test_run(&t, 13, 3, max_only, &out));
  y = out.data;
  CHECK(y[0] == -3.0f && y[4] == 0.75f);
  nnp_tensor_free(&out);
  CHECK_OK(test_run(&t, 13, 2, min_only, &out));
  y = out.data;
  CHECK(y[0] == -1.0f && y[4] == 2.0f);
  nnp_tensor_free(&out);
  CHECK_OK(test_run(&t, 13, 1, both, &out));
  CHECK(memcmp(out.data, x, 5 * sizeof(float)) == 0);
  nnp_tensor_free(&out);
  /* min > max: numpy gives max everywhere */
  const nnp_tensor *swapped[3] = {&in, &thi, &tlo};
  CHECK_OK(test_run(&t, 13, 3, swapped, &out));
  y = out.data;
  CHECK(y[0] == -1.0f && y[2] == -1.0f && y[4] == -1.0f);
  nnp_tensor_free(&out);

  /* Errors: non-scalar bound, type mismatch, inputs before opset 11 */
  const int64_t d2[1] = {2};
  const float two[2] = {0, 1};
  nnp_tensor bad = test_tensor(NNP_F32, 1, d2, two);
  const nnp_tensor *badb[2] = {&in, &bad};
  CHECK(status_of(&t, 13, 2, badb) == NNP_ERR_SHAPE);
  nnp_tensor_free(&bad);
  const double dlo = 0;
  bad = test_tensor(NNP_F64, 0, NULL, &dlo);
  CHECK(status_of(&t, 13, 2, badb) == NNP_ERR_SHAPE);
  nnp_tensor_free(&bad);
  CHECK(status_of(&t, 6, 2, min_only) == NNP_ERR_FORMAT);
  test_node_free(&t);
  nnp_tensor_free(&in);
  nnp_tensor_free(&tlo);
  nnp_tensor_free(&thi);

  /* int8, bounds absent and present */
  const int8_t xi[4] = {-128, -10, 10, 127};
  const int64_t d4[1] = {4};
  in = test_tensor(NNP_I8, 1, d4, xi);
  int8_t ilo = -5, ihi = 6;
  tlo = test_tensor(NNP_I8, 0, NULL, &ilo);
  thi = test_tensor(NNP_I8, 1, (const int64_t[]){1}, &ihi); /* [1] accepted as scalar */
  t = test_node_new("Clip");
  const nnp_tensor *iboth[3] = {&in, &tlo, &thi};
  CHECK_OK(test_run(&t, 13, 3, iboth, &out));
  const int8_t *yi = out.data;
  CHECK(yi[0] == -5 && yi[1] == -5 && yi[2] == 6 && yi[3] == 6);
  nnp_tensor_free(&out);
  CHECK_OK(test_run(&t, 13, 1, iboth, &out));
  CHECK(memcmp(out.data, xi, 4) == 0);
  nnp_tensor_free(&out);
  const nnp_tensor *imax[3] = {&in, NULL, &thi};
  CHECK_OK(test_run(&t, 13, 3, imax, &out));
  yi = out.data;
  CHECK(yi[0] == -128 && yi[3] == 6);
  nnp_tensor_free(&out);
  test_node_free(&t);
  nnp_tensor_free(&in);
  nnp_tensor_free(&tlo);
  nnp_tensor_free(&thi);
}

static void test_not_identity(void) {
  const uint8_t b[4] = {0, 1, 1, 0};
  const int64_t d[2] = {2, 2};
  nnp_tensor in = test_tensor(NNP_BOOL, 2, d, b), out;
  const nnp_tensor *ins[1] = {&in};
  test_node t = test_node_new("Not");
  CHECK_OK(test_run(&t, 1, 1, ins, &out));
  const uint8_t *y = out.data;
  CHECK(out.dtype == NNP_BOOL && out.rank == 2 && y[0] == 1 && y[1] == 0 && y[2] == 0 && y[3] == 1);
  nnp_tensor_free(&out);
  test_node_free(&t);
  nnp_tensor_free(&in);
  const float f[1] = {1};
  in = test_tensor(NNP_F32, 1, (const int64_t[]){1}, f);
  t = test_node_new("Not");
  CHECK(status_of(&t, 1, 1, ins) == NNP_ERR_UNSUPPORTED);
  test_node_free(&t);
  nnp_tensor_free(&in);

  const int64_t v[3] = {INT64_MIN, 0, INT64_MAX};
  in = test_tensor(NNP_I64, 1, (const int64_t[]){3}, v);
  t = test_node_new("Identity");
  CHECK_OK(test_run(&t, 16, 1, ins, &out));
  CHECK(out.dtype == NNP_I64 && memcmp(out.data, v, sizeof v) == 0);
  nnp_tensor_free(&out);
  test_node_free(&t);
  nnp_tensor_free(&in);
}

static void test_dropout(void) {
  const float x[6] = {1, -2, 3, -4, 5, -6};
  nnp_tensor in = test_tensor(NNP_F32, 1, D6, x), out[2];
  const nnp_tensor *ins[3] = {&in, NULL, NULL};
  /* opset 13, with mask output */
  test_node t = test_node_new("Dropout");
  CHECK_OK(nnp_op_eval(t.n, 13, 1, ins, 2, out));
  CHECK(memcmp(out[0].data, x, sizeof x) == 0);
  CHECK(out[1].dtype == NNP_BOOL && out[1].dims[0] == 6);
  for (int i = 0; i < 6; i++) CHECK(((uint8_t *)out[1].data)[i] == 1);
  nnp_tensor_free(&out[0]);
  nnp_tensor_free(&out[1]);
  /* opset 7: mask has the input type */
  CHECK_OK(nnp_op_eval(t.n, 7, 1, ins, 2, out));
  CHECK(out[1].dtype == NNP_F32 && ((float *)out[1].data)[5] == 1.0f);
  nnp_tensor_free(&out[0]);
  nnp_tensor_free(&out[1]);
  /* ratio given, training_mode false / true / unknown */
  float r = 0.5f;
  uint8_t tm = 0;
  nnp_tensor tr = test_tensor(NNP_F32, 0, NULL, &r), ttm = test_tensor(NNP_BOOL, 0, NULL, &tm);
  ins[1] = &tr;
  ins[2] = &ttm;
  CHECK_OK(nnp_op_eval(t.n, 13, 3, ins, 1, out));
  CHECK(memcmp(out[0].data, x, sizeof x) == 0);
  nnp_tensor_free(&out[0]);
  ((uint8_t *)ttm.data)[0] = 1;
  CHECK(nnp_op_eval(t.n, 13, 3, ins, 1, out) == NNP_ERR_UNSUPPORTED);
  nnp_tensor unknown = {.dtype = NNP_BOOL, .rank = 0};
  ins[2] = &unknown;
  CHECK(nnp_op_eval(t.n, 13, 3, ins, 1, out) == NNP_ERR_UNSUPPORTED);
  /* opset 11: ratio is an attribute, no second input */
  CHECK(nnp_op_eval(t.n, 11, 2, ins, 1, out) == NNP_ERR_FORMAT);
  test_node_free(&t);
  nnp_tensor_free(&tr);
  nnp_tensor_free(&ttm);
  nnp_tensor_free(&in);
}

/* Cast from a src tensor of 4 elements to `to`; returns output (caller frees). */
static nnp_status cast(nnp_dtype src, const void *data, int n, int64_t to, nnp_tensor *out) {
  const int64_t d[1] = {n};
  nnp_tensor in = test_tensor(src, 1, d, data);
  const nnp_tensor *ins[1] = {&in};
  test_node t = test_node_new("Cast");
  test_attr_int(&t, "to", to);
  nnp_status st = test_run(&t, 13, 1, ins, out);
  test_node_free(&t);
  nnp_tensor_free(&in);
  return st;
}

static void test_cast(void) {
  nnp_tensor out;
  /* float -> int: truncation toward zero, saturation, NaN -> 0 */
  const float f[6] = {-1.7f, 2.9f, 1e10f, -1e10f, NAN, -0.5f};
  CHECK_OK(cast(NNP_F32, f, 6, NNP_I32, &out));
  const int32_t *i32 = out.data;
  CHECK(out.dtype == NNP_I32);
  CHECK(i32[0] == -1 && i32[1] == 2 && i32[2] == INT32_MAX && i32[3] == INT32_MIN && i32[4] == 0 &&
        i32[5] == 0);
  nnp_tensor_free(&out);
  CHECK_OK(cast(NNP_F32, f, 6, NNP_U8, &out));
  const uint8_t *u8 = out.data;
  CHECK(u8[0] == 0 && u8[1] == 2 && u8[2] == 255 && u8[3] == 0);
  nnp_tensor_free(&out);
  CHECK_OK(cast(NNP_F32, f, 6, NNP_I64, &out));
  CHECK(((int64_t *)out.data)[2] == 10000000000LL && ((int64_t *)out.data)[0] == -1);
  nnp_tensor_free(&out);
  /* float -> bool: nonzero and NaN are true */
  CHECK_OK(cast(NNP_F32, f, 6, NNP_BOOL, &out));
  u8 = out.data;
  CHECK(u8[0] == 1 && u8[4] == 1 && u8[5] == 1);
  nnp_tensor_free(&out);
  const float z[1] = {0.0f};
  CHECK_OK(cast(NNP_F32, z, 1, NNP_BOOL, &out));
  CHECK(((uint8_t *)out.data)[0] == 0);
  nnp_tensor_free(&out);

  /* int -> int wraps like numpy astype; int64 stays exact */
  const int64_t big[3] = {300, -1, 9007199254740993LL};
  CHECK_OK(cast(NNP_I64, big, 3, NNP_U8, &out));
  CHECK(((uint8_t *)out.data)[0] == 44 && ((uint8_t *)out.data)[1] == 255);
  nnp_tensor_free(&out);
  CHECK_OK(cast(NNP_I64, big, 3, NNP_U64, &out));
  CHECK(((uint64_t *)out.data)[1] == UINT64_MAX && ((uint64_t *)out.data)[2] == 9007199254740993ULL);
  nnp_tensor_free(&out);
  const uint64_t ubig[1] = {UINT64_MAX};
  CHECK_OK(cast(NNP_U64, ubig, 1, NNP_I64, &out));
  CHECK(((int64_t *)out.data)[0] == -1);
  nnp_tensor_free(&out);
  CHECK_OK(cast(NNP_U64, ubig, 1, NNP_F64, &out));
  CHECK(((double *)out.data)[0] == 18446744073709551615.0);
  nnp_tensor_free(&out);

  /* bool -> float */
  const uint8_t b[2] = {1, 0};
  CHECK_OK(cast(NNP_BOOL, b, 2, NNP_F32, &out));
  CHECK(((float *)out.data)[0] == 1.0f && ((float *)out.data)[1] == 0.0f);
  nnp_tensor_free(&out);

  /* float16 both ways, and double -> float16 rounds once: 1 + 2^-11 + 2^-40 is just
   * above the midpoint between 1 and the next half (1 + 2^-10), so it rounds up; going
   * through float would first round to exactly the midpoint and then to even (1.0). */
  const double dh[3] = {1.0 + 0x1p-11 + 0x1p-40, 65520.0, -0x1p-25};
  CHECK_OK(cast(NNP_F64, dh, 3, NNP_F16, &out));
  const uint16_t *h = out.data;
  CHECK_MSG(h[0] == 0x3c01, "h[0] = %#x", h[0]);
  CHECK(h[1] == 0x7c00);        /* rounds to infinity */
  CHECK(h[2] == 0x8000);        /* tie at half the smallest subnormal -> -0 */
  nnp_tensor_free(&out);
  const double sub[1] = {3 * 0x1p-26}; /* 0.75 of the smallest subnormal -> rounds up */
  CHECK_OK(cast(NNP_F64, sub, 1, NNP_F16, &out));
  CHECK(((uint16_t *)out.data)[0] == 0x0001);
  nnp_tensor_free(&out);
  const float fh[3] = {0.1f, -2.0f, 65504.0f};
  CHECK_OK(cast(NNP_F32, fh, 3, NNP_F16, &out));
  h = out.data;
  CHECK(h[0] == 0x2e66 && h[1] == 0xc000 && h[2] == 0x7bff);
  nnp_tensor tmp = out;
  CHECK_OK(cast(NNP_F16, tmp.data, 3, NNP_F64, &out));
  CHECK_NEAR(((double *)out.data)[0], 0.0999755859375, 0);
  CHECK(((double *)out.data)[2] == 65504.0);
  nnp_tensor_free(&out);
  nnp_tensor_free(&tmp);
  const int32_t ih[2] = {-3, 70000};
  CHECK_OK(cast(NNP_I32, ih, 2, NNP_F16, &out));
  CHECK(((uint16_t *)out.data)[0] == 0xc200 && ((uint16_t *)out.data)[1] == 0x7c00);
  nnp_tensor_free(&out);

  /* same type: copy */
  CHECK_OK(cast(NNP_F32, fh, 3, NNP_F32, &out));
  CHECK(memcmp(out.data, fh, sizeof fh) == 0);
  nnp_tensor_free(&out);

  /* bfloat16: truncation of the float32 bits, as ONNX 1.12's reference */
  CHECK_OK(cast(NNP_F32, fh, 3, NNP_BF16, &out));
  for (int i = 0; i < 3; i++) {
    uint32_t bits;
    memcpy(&bits, &fh[i], 4);
    CHECK(((const uint16_t *)out.data)[i] == (uint16_t)(bits >> 16));
  }
  nnp_tensor_free(&out);

  /* rejected: string, missing `to` */
  CHECK(cast(NNP_F32, fh, 3, NNP_STRING, &out) == NNP_ERR_UNSUPPORTED);
  CHECK(cast(NNP_F32, fh, 3, -1, &out) == NNP_ERR_UNSUPPORTED);
  CHECK(cast(NNP_F32, fh, 3, 1000000, &out) == NNP_ERR_UNSUPPORTED);
  nnp_tensor in = test_tensor(NNP_F32, 1, (const int64_t[]){3}, fh);
  const nnp_tensor *ins[1] = {&in};
  test_node t = test_node_new("Cast");
  CHECK(status_of(&t, 13, 1, ins) == NNP_ERR_FORMAT);
  test_attr_int(&t, "to", NNP_F16);
  const nnp_tensor *none[1] = {NULL}; /* input given as "": the engine refuses it */
  CHECK(status_of(&t, 13, 1, none) == NNP_ERR_FORMAT);
  test_node_free(&t);
  nnp_tensor_free(&in);

  /* A long tensor crosses the internal block size. */
  enum { N = 1000 };
  static int16_t s16[N];
  for (int i = 0; i < N; i++) s16[i] = (int16_t)(i * 37 - 20000);
  CHECK_OK(cast(NNP_I16, s16, N, NNP_F64, &out));
  bool ok = true;
  for (int i = 0; i < N; i++) ok = ok && ((double *)out.data)[i] == s16[i];
  CHECK(ok);
  nnp_tensor_free(&out);
}

int main(void) {
  test_math();
  test_activations();
  test_other_float_types();
  test_int_unary();
  test_clip();
  test_not_identity();
  test_dropout();
  test_cast();
  TEST_MAIN_END();
}
