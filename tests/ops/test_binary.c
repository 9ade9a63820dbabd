/* Elementwise binary / variadic ops with broadcasting, Where, PRelu, Pow. */
#include "ops/op_test_util.h"

#include <stdint.h>

static nnp_status status2(const char *op, int64_t opset, const nnp_tensor *a, const nnp_tensor *b) {
  test_node t = test_node_new(op);
  const nnp_tensor *ins[2] = {a, b};
  nnp_tensor out;
  nnp_status st = test_run(&t, opset, 2, ins, &out);
  if (st == NNP_OK) nnp_tensor_free(&out);
  test_node_free(&t);
  return st;
}

/* Naive broadcast reference: element of t at the output multi-index idx. */
static int64_t bcast_index(const nnp_tensor *t, int rank, const int64_t *idx) {
  int64_t off = 0, stride = 1;
  for (int d = t->rank - 1; d >= 0; d--) {
    int od = d + rank - t->rank;
    int64_t i = t->dims[d] == 1 ? 0 : idx[od];
    off += i * stride;
    stride *= t->dims[d];
  }
  return off;
}

typedef double (*ref2_fn)(double, double);
static double r_add(double a, double b) { return a + b; }
static double r_sub(double a, double b) { return a - b; }
static double r_mul(double a, double b) { return a * b; }
static double r_div(double a, double b) { return a / b; }
static double r_max(double a, double b) { return a > b ? a : b; }
static double r_prelu(double a, double b) { return a < 0 ? a * b : a; }

/* Checks float32 op(a, b) over two shapes against the naive broadcast reference. */
static void check_bcast_f32(const char *op, ref2_fn f, int ra, const int64_t *da, int rb,
                            const int64_t *db, int ry, const int64_t *dy) {
  nnp_tensor a = test_tensor(NNP_F32, ra, da, NULL), b = test_tensor(NNP_F32, rb, db, NULL), y;
  int64_t na = nnp_tensor_numel(&a), nb = nnp_tensor_numel(&b);
  test_fill_uniform(a.data, na, -2, 2, 1);
  test_fill_uniform(b.data, nb, 0.5f, 3, 2);
  test_node t = test_node_new(op);
  const nnp_tensor *ins[2] = {&a, &b};
  nnp_status st = test_run(&t, 14, 2, ins, &y);
  CHECK_MSG(st == NNP_OK, "%s: %s", op, nnp_last_error());
  if (st == NNP_OK) {
    CHECK_MSG(test_shape_is(&y, ry, dy), "%s output shape", op);
    int64_t n = nnp_tensor_numel(&y), idx[NNP_MAX_RANK] = {0};
    int bad = 0;
    for (int64_t i = 0; i < n; i++) {
      double want = f(((float *)a.data)[bcast_index(&a, ry, idx)],
                      ((float *)b.data)[bcast_index(&b, ry, idx)]);
      double got = ((float *)y.data)[i];
      if (fabs(got - want) > 1e-5 * (1 + fabs(want))) bad++;
      for (int d = ry - 1; d >= 0; d--) {
        if (++idx[d] < dy[d]) break;
        idx[d] = 0;
      }
    }
    CHECK_MSG(bad == 0, "%s: %d mismatches", op, bad);
    nnp_tensor_free(&y);
  }
  test_node_free(&t);
  nnp_tensor_free(&a);
  nnp_tensor_free(&b);
}

static void test_broadcast_shapes(void) {
  /* same shape (flat), scalar both sides, row, channel, both-sided, rank 0 x rank 0 */
  const int64_t s345[3] = {3, 4, 5}, s5[1] = {5}, s45[2] = {4, 5}, s1[1] = {1};
  check_bcast_f32("Add", r_add, 3, s345, 3, s345, 3, s345);
  check_bcast_f32("Sub", r_sub, 3, s345, 0, NULL, 3, s345);
  check_bcast_f32("Sub", r_sub, 0, NULL, 3, s345, 3, s345);
  check_bcast_f32("Mul", r_mul, 3, s345, 1, s5, 3, s345);
  check_bcast_f32("Div", r_div, 1, s5, 3, s345, 3, s345);
  check_bcast_f32("Div", r_div, 2, s45, 3, s345, 3, s345);
  check_bcast_f32("Add", r_add, 3, s345, 1, s1, 3, s345);
  const int64_t nchw[4] = {2, 3, 4, 5}, c11[3] = {3, 1, 1}, n1hw[4] = {2, 1, 4, 5};
  check_bcast_f32("Add", r_add, 4, nchw, 3, c11, 4, nchw);
  check_bcast_f32("Mul", r_mul, 3, c11, 4, nchw, 4, nchw);
  check_bcast_f32("Max", r_max, 4, nchw, 4, n1hw, 4, nchw);
  const int64_t a[4] = {1, 4, 1, 6}, b[4] = {3, 1, 5, 6}, y[4] = {3, 4, 5, 6};
  check_bcast_f32("Add", r_add, 4, a, 4, b, 4, y);
  const int64_t c1[2] = {3, 1}, r4[1] = {4}, y34[2] = {3, 4};
  check_bcast_f32("Sub", r_sub, 2, c1, 1, r4, 2, y34); /* outer product shape */
  check_bcast_f32("Mul", r_mul, 0, NULL, 0, NULL, 0, NULL);
  const int64_t big[3] = {2, 1, 3}, big2[3] = {1, 7, 1}, ybig[3] = {2, 7, 3};
  check_bcast_f32("Div", r_div, 3, big, 3, big2, 3, ybig);
  check_bcast_f32("PRelu", r_prelu, 4, nchw, 3, c11, 4, nchw);
  check_bcast_f32("PRelu", r_prelu, 3, s345, 1, s5, 3, s345);

  /* zero-size dimension */
  const int64_t z[2] = {0, 5};
  nnp_tensor ta = test_tensor(NNP_F32, 2, z, NULL), tb = test_tensor(NNP_F32, 1, s5, NULL), out;
  test_node t = test_node_new("Add");
  const nnp_tensor *ins[2] = {&ta, &tb};
  CHECK_OK(test_run(&t, 14, 2, ins, &out));
  CHECK(test_shape_is(&out, 2, z));
  nnp_tensor_free(&out);
  test_node_free(&t);

  /* incompatible shapes, type mismatch, PRelu slope that would grow X */
  const int64_t s4[1] = {4};
  nnp_tensor t4 = test_tensor(NNP_F32, 1, s4, NULL), t345 = test_tensor(NNP_F32, 3, s345, NULL);
  CHECK(status2("Add", 14, &t345, &t4) == NNP_ERR_SHAPE);
  nnp_tensor ti = test_tensor(NNP_I32, 1, s5, NULL);
  CHECK(status2("Add", 14, &tb, &ti) == NNP_ERR_SHAPE);
  CHECK(status2("PRelu", 16, &tb, &t345) == NNP_ERR_SHAPE);
  /* legacy opset 6: no broadcast unless asked */
  CHECK(status2("Add", 6, &t345, &tb) == NNP_ERR_SHAPE);
  test_node lt = test_node_new("Add");
  test_attr_int(&lt, "broadcast", 1);
  ins[0] = &t345;
  ins[1] = &tb;
  CHECK_OK(test_run(&lt, 6, 2, ins, &out));
  nnp_tensor_free(&out);
  test_attr_int(&lt, "axis", 0);
  CHECK(test_run(&lt, 6, 2, ins, &out) == NNP_ERR_UNSUPPORTED);
  test_node_free(&lt);
  /* PRelu never had legacy broadcast attributes: numpy rules at every opset */
  const int64_t s51[2] = {5, 1}, s35[2] = {3, 5};
  nnp_tensor px = test_tensor(NNP_F32, 2, s35, NULL), ps = test_tensor(NNP_F32, 2, s51, NULL);
  CHECK(status2("PRelu", 6, &px, &tb) == NNP_OK);
  CHECK(status2("PRelu", 6, &px, &ps) == NNP_ERR_SHAPE);
  nnp_tensor_free(&px);
  nnp_tensor_free(&ps);
  /* bool arithmetic is not defined */
  nnp_tensor bb = test_tensor(NNP_BOOL, 1, s5, NULL);
  CHECK(status2("Add", 14, &bb, &bb) == NNP_ERR_UNSUPPORTED);
  CHECK(status2("And", 7, &tb, &tb) == NNP_ERR_UNSUPPORTED);
  nnp_tensor_free(&bb);
  nnp_tensor_free(&ti);
  nnp_tensor_free(&t4);
  nnp_tensor_free(&t345);
  nnp_tensor_free(&ta);
  nnp_tensor_free(&tb);
}

static void test_int_arith(void) {
  const int64_t d4[1] = {4};
  const uint8_t ua[4] = {250, 7, 100, 9}, ub[4] = {10, 2, 3, 0};
  nnp_tensor a = test_tensor(NNP_U8, 1, d4, ua), b = test_tensor(NNP_U8, 1, d4, ub), y;
  const nnp_tensor *ins[2] = {&a, &b};
  test_node t = test_node_new("Add");
  CHECK_OK(test_run(&t, 14, 2, ins, &y));
  const uint8_t *u = y.data;
  CHECK(u[0] == 4 && u[1] == 9 && u[2] == 103 && u[3] == 9); /* wraps mod 256 */
  nnp_tensor_free(&y);
  test_node_free(&t);
  t = test_node_new("Sub");
  CHECK_OK(test_run(&t, 14, 2, ins, &y));
  u = y.data;
  CHECK(u[0] == 240 && u[1] == 5 && u[2] == 97 && u[3] == 9);
  nnp_tensor_free(&y);
  test_node_free(&t);
  t = test_node_new("Mul");
  CHECK_OK(test_run(&t, 14, 2, ins, &y));
  u = y.data;
  CHECK(u[0] == (uint8_t)2500 && u[1] == 14 && u[2] == 44 && u[3] == 0);
  nnp_tensor_free(&y);
  test_node_free(&t);
  t = test_node_new("Div");
  CHECK_OK(test_run(&t, 14, 2, ins, &y));
  u = y.data;
  CHECK(u[0] == 25 && u[1] == 3 && u[2] == 33 && u[3] == 0); /* x/0 -> 0, no trap */
  nnp_tensor_free(&y);
  test_node_free(&t);
  nnp_tensor_free(&a);
  nnp_tensor_free(&b);

  /* signed division truncates toward zero; INT32_MIN / -1 wraps; int64 stays exact */
  const int32_t sa[4] = {-7, 7, INT32_MIN, INT32_MAX}, sb[4] = {2, -2, -1, 2};
  a = test_tensor(NNP_I32, 1, d4, sa);
  b = test_tensor(NNP_I32, 1, d4, sb);
  t = test_node_new("Div");
  CHECK_OK(test_run(&t, 14, 2, ins, &y));
  const int32_t *s = y.data;
  CHECK(s[0] == -3 && s[1] == -3 && s[2] == INT32_MIN && s[3] == INT32_MAX / 2);
  nnp_tensor_free(&y);
  test_node_free(&t);
  t = test_node_new("Mul");
  CHECK_OK(test_run(&t, 14, 2, ins, &y));
  s = y.data;
  CHECK(s[0] == -14 && s[2] == INT32_MIN && s[3] == -2); /* INT32_MAX*2 wraps */
  nnp_tensor_free(&y);
  test_node_free(&t);
  nnp_tensor_free(&a);
  nnp_tensor_free(&b);

  const int64_t la[2] = {9007199254740993LL, INT64_MAX}, lb[1] = {1};
  const int64_t d2[1] = {2}, d1[1] = {1};
  a = test_tensor(NNP_I64, 1, d2, la);
  b = test_tensor(NNP_I64, 1, d1, lb);
  t = test_node_new("Add");
  CHECK_OK(test_run(&t, 14, 2, ins, &y));
  CHECK(((int64_t *)y.data)[0] == 9007199254740994LL && ((int64_t *)y.data)[1] == INT64_MIN);
  nnp_tensor_free(&y);
  test_node_free(&t);
  nnp_tensor_free(&a);
  nnp_tensor_free(&b);
}

static void test_compare_logic(void) {
  const int64_t d4[1] = {4}, d1[1] = {1};
  const float fa[4] = {1, 2, 3, NAN}, fb[1] = {2};
  nnp_tensor a = test_tensor(NNP_F32, 1, d4, fa), b = test_tensor(NNP_F32, 1, d1, fb), y;
  const nnp_tensor *ins[2] = {&a, &b};
  const char *ops[5] = {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"};
  const uint8_t want[5][4] = {{0, 1, 0, 0}, {1, 0, 0, 0}, {0, 0, 1, 0}, {1, 1, 0, 0}, {0, 1, 1, 0}};
  for (int k = 0; k < 5; k++) {
    test_node t = test_node_new(ops[k]);
    CHECK_OK(test_run(&t, 16, 2, ins, &y));
    CHECK_MSG(y.dtype == NNP_BOOL && memcmp(y.data, want[k], 4) == 0, "%s", ops[k]);
    nnp_tensor_free(&y);
    test_node_free(&t);
  }
  nnp_tensor_free(&a);
  nnp_tensor_free(&b);

  /* int64 compare exactly (doubles would call these equal) */
  const int64_t la[1] = {9007199254740993LL}, lb[1] = {9007199254740992LL};
  a = test_tensor(NNP_I64, 1, d1, la);
  b = test_tensor(NNP_I64, 1, d1, lb);
  test_node t = test_node_new("Equal");
  CHECK_OK(test_run(&t, 13, 2, ins, &y));
  CHECK(((uint8_t *)y.data)[0] == 0);
  nnp_tensor_free(&y);
  test_node_free(&t);
  nnp_tensor_free(&a);
  nnp_tensor_free(&b);

  /* bool: Equal, And, Or, Xor with broadcast [2,1] x [2] */
  const uint8_t ba[2] = {0, 1}, bb[2] = {0, 1};
  const int64_t d21[2] = {2, 1}, d2[1] = {2};
  a = test_tensor(NNP_BOOL, 2, d21, ba);
  b = test_tensor(NNP_BOOL, 1, d2, bb);
  const char *lops[4] = {"And", "Or", "Xor", "Equal"};
  const uint8_t lw[4][4] = {{0, 0, 0, 1}, {0, 1, 1, 1}, {0, 1, 1, 0}, {1, 0, 0, 1}};
  for (int k = 0; k < 4; k++) {
    t = test_node_new(lops[k]);
    CHECK_OK(test_run(&t, 11, 2, ins, &y));
    CHECK_MSG(y.dtype == NNP_BOOL && y.rank == 2 && y.dims[0] == 2 && y.dims[1] == 2 &&
                  memcmp(y.data, lw[k], 4) == 0, "%s", lops[k]);
    nnp_tensor_free(&y);
    test_node_free(&t);
  }
  nnp_tensor_free(&a);
  nnp_tensor_free(&b);
}

static void test_variadic(void) {
  const int64_t d3[1] = {3}, d1[1] = {1}, d23[2] = {2, 3};
  const float x0[3] = {1, 5, -2}, x1[1] = {2}, x2[6] = {0, 0, 0, 10, 10, 10};
  nnp_tensor a = test_tensor(NNP_F32, 1, d3, x0), b = test_tensor(NNP_F32, 1, d1, x1),
             c = test_tensor(NNP_F32, 2, d23, x2), y;
  const nnp_tensor *ins[3] = {&a, &b, &c};
  struct { const char *op; float w[6]; } cases[4] = {
      {"Sum", {3, 7, 0, 13, 17, 10}},
      {"Mean", {1, 7.0f / 3, 0, 13.0f / 3, 17.0f / 3, 10.0f / 3}},
      {"Max", {2, 5, 2, 10, 10, 10}},
      {"Min", {0, 0, -2, 1, 2, -2}},
  };
  for (int k = 0; k < 4; k++) {
    test_node t = test_node_new(cases[k].op);
    CHECK_OK(test_run(&t, 13, 3, ins, &y));
    CHECK_MSG(test_shape_is(&y, 2, d23) && test_max_abs_diff(&y, cases[k].w, 6) < 1e-6, "%s", cases[k].op);
    nnp_tensor_free(&y);
    /* one input: a copy */
    CHECK_OK(test_run(&t, 13, 1, ins, &y));
    CHECK(test_shape_is(&y, 1, d3) && memcmp(y.data, x0, sizeof x0) == 0);
    nnp_tensor_free(&y);
    /* two inputs */
    CHECK_OK(test_run(&t, 13, 2, ins, &y));
    CHECK(test_shape_is(&y, 1, d3));
    nnp_tensor_free(&y);
    test_node_free(&t);
  }
  /* Max propagates NaN like numpy.maximum */
  const float n1[3] = {NAN, 1, 2};
  nnp_tensor tn = test_tensor(NNP_F32, 1, d3, n1);
  const nnp_tensor *nins[2] = {&a, &tn};
  test_node t = test_node_new("Max");
  CHECK_OK(test_run(&t, 13, 2, nins, &y));
  CHECK(isnan(((float *)y.data)[0]) && ((float *)y.data)[1] == 5);
  nnp_tensor_free(&y);
  nins[0] = &tn;
  nins[1] = &a;
  CHECK_OK(test_run(&t, 13, 2, nins, &y));
  CHECK(isnan(((float *)y.data)[0]));
  nnp_tensor_free(&y);
  test_node_free(&t);
  nnp_tensor_free(&tn);

  /* uint64 Max stays exact; Mean of ints is rejected; missing/mismatched inputs */
  const uint64_t u0[1] = {UINT64_MAX - 1}, u1[1] = {UINT64_MAX};
  nnp_tensor ua = test_tensor(NNP_U64, 1, d1, u0), ub = test_tensor(NNP_U64, 1, d1, u1);
  const nnp_tensor *uins[3] = {&ua, &ub, NULL};
  t = test_node_new("Max");
  CHECK_OK(test_run(&t, 13, 2, uins, &y));
  CHECK(((uint64_t *)y.data)[0] == UINT64_MAX);
  nnp_tensor_free(&y);
  CHECK(test_run(&t, 13, 3, uins, &y) == NNP_ERR_SHAPE);
  uins[2] = &a;
  CHECK(test_run(&t, 13, 3, uins, &y) == NNP_ERR_SHAPE);
  test_node_free(&t);
  t = test_node_new("Mean");
  CHECK(test_run(&t, 13, 2, uins, &y) == NNP_ERR_UNSUPPORTED);
  test_node_free(&t);
  nnp_tensor_free(&ua);
  nnp_tensor_free(&ub);

  /* float16 Sum */
  uint16_t h0[3], h1[3];
  for (int i = 0; i < 3; i++) {
    h0[i] = nnp_f32_to_f16(x0[i]);
    h1[i] = nnp_f32_to_f16(0.5f);
  }
  nnp_tensor ha = test_tensor(NNP_F16, 1, d3, h0), hb = test_tensor(NNP_F16, 1, d3, h1);
  const nnp_tensor *hins[2] = {&ha, &hb};
  t = test_node_new("Sum");
  CHECK_OK(test_run(&t, 13, 2, hins, &y));
  CHECK(y.dtype == NNP_F16 && nnp_f16_to_f32(((uint16_t *)y.data)[2]) == -1.5f);
  nnp_tensor_free(&y);
  test_node_free(&t);
  nnp_tensor_free(&ha);
  nnp_tensor_free(&hb);
  nnp_tensor_free(&a);
  nnp_tensor_free(&b);
  nnp_tensor_free(&c);
}

static void test_where(void) {
  const int64_t d22[2] = {2, 2}, d2[1] = {2}, d21[2] = {2, 1};
  const uint8_t cond[4] = {1, 0, 0, 1};
  const int64_t xv[2] = {10, 20}, yv[2] = {-1, -2};
  nnp_tensor c = test_tensor(NNP_BOOL, 2, d22, cond), x = test_tensor(NNP_I64, 1, d2, xv),
             y = test_tensor(NNP_I64, 2, d21, yv), out;
  const nnp_tensor *ins[3] = {&c, &x, &y};
  test_node t = test_node_new("Where");
  CHECK_OK(test_run(&t, 16, 3, ins, &out));
  const int64_t *o = out.data;
  CHECK(test_shape_is(&out, 2, d22) && out.dtype == NNP_I64);
  CHECK(o[0] == 10 && o[1] == -1 && o[2] == -2 && o[3] == 20);
  nnp_tensor_free(&out);
  /* same-shape fast path, float */
  const float fx[4] = {1, 2, 3, 4}, fy[4] = {5, 6, 7, 8};
  nnp_tensor a = test_tensor(NNP_F32, 2, d22, fx), b = test_tensor(NNP_F32, 2, d22, fy);
  const nnp_tensor *fins[3] = {&c, &a, &b};
  CHECK_OK(test_run(&t, 16, 3, fins, &out));
  const float want[4] = {1, 6, 7, 4};
  CHECK(test_max_abs_diff(&out, want, 4) == 0);
  nnp_tensor_free(&out);
  /* errors: non-bool condition, mismatched types */
  const nnp_tensor *bad1[3] = {&a, &a, &b};
  CHECK(test_run(&t, 16, 3, bad1, &out) == NNP_ERR_SHAPE);
  const nnp_tensor *bad2[3] = {&c, &a, &x};
  CHECK(test_run(&t, 16, 3, bad2, &out) == NNP_ERR_SHAPE);
  test_node_free(&t);
  nnp_tensor_free(&a);
  nnp_tensor_free(&b);
  nnp_tensor_free(&c);
  nnp_tensor_free(&x);
  nnp_tensor_free(&y);
}

static void test_pow(void) {
  const int64_t d3[1] = {3};
  const float fb[3] = {2, -2, 4}, fe[3] = {3, 2, 0.5f};
  nnp_tensor a = test_tensor(NNP_F32, 1, d3, fb), b = test_tensor(NNP_F32, 1, d3, fe), y;
  const nnp_tensor *ins[2] = {&a, &b};
  test_node t = test_node_new("Pow");
  CHECK_OK(test_run(&t, 15, 2, ins, &y));
  const float w1[3] = {8, 4, 2};
  CHECK(test_max_abs_diff(&y, w1, 3) < 1e-6);
  nnp_tensor_free(&y);
  nnp_tensor_free(&b);
  /* scalar exponent 2 takes the x*x path */
  const float two = 2.0f;
  b = test_tensor(NNP_F32, 0, NULL, &two);
  CHECK_OK(test_run(&t, 15, 2, ins, &y));
  const float wsq[3] = {4, 4, 16};
  CHECK(test_max_abs_diff(&y, wsq, 3) == 0);
  nnp_tensor_free(&y);
  nnp_tensor_free(&b);
  /* float ^ int64 */
  const int64_t ie[3] = {3, -1, 2};
  b = test_tensor(NNP_I64, 1, d3, ie);
  CHECK_OK(test_run(&t, 15, 2, ins, &y));
  const float w2[3] = {8, -0.5f, 16};
  CHECK(y.dtype == NNP_F32 && test_max_abs_diff(&y, w2, 3) < 1e-6);
  nnp_tensor_free(&y);
  nnp_tensor_free(&a);
  /* int64 ^ int64 exact (3^39 > 2^53), negative exponent, wrap */
  const int64_t ib[3] = {3, 2, -1}, ie2[3] = {39, -1, 5};
  nnp_tensor_free(&b);
  a = test_tensor(NNP_I64, 1, d3, ib);
  b = test_tensor(NNP_I64, 1, d3, ie2);
  CHECK_OK(test_run(&t, 15, 2, ins, &y));
  const int64_t *o = y.data;
  CHECK(y.dtype == NNP_I64 && o[0] == 4052555153018976267LL && o[1] == 0 && o[2] == -1);
  nnp_tensor_free(&y);
  nnp_tensor_free(&b);
  /* int ^ float: output keeps the base type */
  const float fe2[3] = {2, 0.5f, 3};
  b = test_tensor(NNP_F32, 1, d3, fe2);
  CHECK_OK(test_run(&t, 15, 2, ins, &y));
  o = y.data;
  CHECK(y.dtype == NNP_I64 && o[0] == 9 && o[1] == 1 && o[2] == -1);
  nnp_tensor_free(&y);
  nnp_tensor_free(&b);
  /* broadcast scalar exponent */
  const int32_t e0 = 2;
  b = test_tensor(NNP_I32, 0, NULL, &e0);
  CHECK_OK(test_run(&t, 15, 2, ins, &y));
  o = y.data;
  CHECK(o[0] == 9 && o[1] == 4 && o[2] == 1);
  nnp_tensor_free(&y);
  nnp_tensor_free(&b);
  /* bool exponent is rejected */
  const uint8_t bt[1] = {1};
  b = test_tensor(NNP_BOOL, 0, NULL, bt);
  CHECK(test_run(&t, 15, 2, ins, &y) == NNP_ERR_UNSUPPORTED);
  nnp_tensor_free(&b);
  test_node_free(&t);
  nnp_tensor_free(&a);
}

/* Larger float32 shapes through every fast path against the naive reference. */
static void test_fast_paths(void) {
  const int64_t x[4] = {2, 16, 7, 9};
  const int64_t shapes[][4] = {{2, 16, 7, 9}, {16, 1, 1}, {9}, {1}, {2, 1, 7, 1}, {7, 9}, {2, 16, 1, 9}};
  const int ranks[] = {4, 3, 1, 1, 4, 2, 4};
  for (int k = 0; k < 7; k++) {
    check_bcast_f32("Add", r_add, 4, x, ranks[k], shapes[k], 4, x);
    check_bcast_f32("Sub", r_sub, ranks[k], shapes[k], 4, x, 4, x);
    check_bcast_f32("PRelu", r_prelu, 4, x, ranks[k], shapes[k], 4, x);
  }
}

int main(void) {
  test_broadcast_shapes();
  test_int_arith();
  test_compare_logic();
  test_variadic();
  test_where();
  test_pow();
  test_fast_paths();
  TEST_MAIN_END();
}
