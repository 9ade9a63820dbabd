/* Shape, Size, Constant, ConstantOfShape, Reshape, Flatten, Squeeze, Unsqueeze, Range. */
#include "ops/op_test_util.h"

#include <stdint.h>

static bool i64_are(const nnp_tensor *t, int n, const int64_t *v) {
  if (t->dtype != NNP_I64 || nnp_tensor_numel(t) != n) return false;
  for (int i = 0; i < n; i++)
    if (((const int64_t *)t->data)[i] != v[i]) return false;
  return true;
}

/* A tensor attribute; the graph takes ownership of the tensor. */
static void test_attr_tensor(test_node *t, const char *name, nnp_tensor v) {
  nnp_attr *a;
  if (nnp_node_add_attr(t->n, name, &a) != NNP_OK) abort();
  a->type = NNP_ATTR_TENSOR;
  a->tensor = nnp_malloc(sizeof(nnp_tensor));
  *a->tensor = v;
}

static nnp_tensor i64_vec(int n, const int64_t *v) {
  int64_t d[1] = {n};
  return test_tensor(NNP_I64, 1, d, v);
}

/* ---- Shape / Size --------------------------------------------------------------------- */

static void shape_case(int64_t start, int64_t end, bool has_s, bool has_e, int n, const int64_t *want) {
  nnp_tensor x = {.dtype = NNP_F32, .rank = 3, .dims = {2, 3, 4}, .data = NULL}; /* shape-only */
  const nnp_tensor *ins[1] = {&x};
  nnp_tensor out;
  test_node t = test_node_new("Shape");
  if (has_s) test_attr_int(&t, "start", start);
  if (has_e) test_attr_int(&t, "end", end);
  CHECK_OK(test_run(&t, 15, 1, ins, &out));
  CHECK_MSG(out.rank == 1 && out.dims[0] == n && i64_are(&out, n, want), "start %lld end %lld",
            (long long)start, (long long)end);
  nnp_tensor_free(&out);
  test_node_free(&t);
}

static void test_shape_size(void) {
  CHECK(nnp_op_get(nnp_op_lookup("", "Shape"))->flags & NNP_OPF_SHAPE_ONLY);
  CHECK(nnp_op_get(nnp_op_lookup("", "Size"))->flags & NNP_OPF_SHAPE_ONLY);
  const int64_t all[3] = {2, 3, 4};
  shape_case(0, 0, false, false, 3, all);
  shape_case(1, 0, true, false, 2, all + 1);
  shape_case(0, -1, false, true, 2, all);
  shape_case(-10, 0, true, false, 3, all);
  shape_case(0, 10, false, true, 3, all);
  shape_case(1, 2, true, true, 1, all + 1);
  shape_case(-1, 0, true, false, 1, all + 2);
  shape_case(2, 1, true, true, 0, all); /* start past end: empty */

  /* Shape of a scalar: an empty vector */
  nnp_tensor s = {.dtype = NNP_I8, .rank = 0}, out;
  const nnp_tensor *ins[1] = {&s};
  test_node t = test_node_new("Shape");
  CHECK_OK(test_run(&t, 13, 1, ins, &out));
  CHECK(out.dtype == NNP_I64 && out.rank == 1 && out.dims[0] == 0);
  nnp_tensor_free(&out);
  test_node_free(&t);

  nnp_tensor x = {.dtype = NNP_F32, .rank = 3, .dims = {2, 3, 4}};
  ins[0] = &x;
  t = test_node_new("Size");
  CHECK_OK(test_run(&t, 13, 1, ins, &out));
  CHECK(out.dtype == NNP_I64 && out.rank == 0 && ((int64_t *)out.data)[0] == 24);
  nnp_tensor_free(&out);
  ins[0] = &s;
  CHECK_OK(test_run(&t, 13, 1, ins, &out));
  CHECK(((int64_t *)out.data)[0] == 1);
  nnp_tensor_free(&out);
  test_node_free(&t);
}

/* ---- Constant ------------------------------------------------------------------------- */

static void test_constant(void) {
  nnp_tensor out;
  /* tensor value */
  const int32_t v[6] = {1, 2, 3, 4, 5, 6};
  const int64_t d[2] = {3, 2};
  test_node t = test_node_new("Constant");
  test_attr_tensor(&t, "value", test_tensor(NNP_I32, 2, d, v));
  CHECK_OK(test_run(&t, 13, 0, NULL, &out));
  CHECK(out.dtype == NNP_I32 && test_shape_is(&out, 2, d) && !memcmp(out.data, v, sizeof v));
  nnp_tensor_free(&out);
  test_node_free(&t);

  t = test_node_new("Constant");
  test_attr_float(&t, "value_float", 2.5f);
  CHECK_OK(test_run(&t, 13, 0, NULL, &out));
  CHECK(out.dtype == NNP_F32 && out.rank == 0 && ((float *)out.data)[0] == 2.5f);
  nnp_tensor_free(&out);
  test_node_free(&t);

  const float fv[3] = {1, -2, 3};
  t = test_node_new("Constant");
  test_attr_floats(&t, "value_floats", 3, fv);
  CHECK_OK(test_run(&t, 13, 0, NULL, &out));
  CHECK(out.dtype == NNP_F32 && out.rank == 1 && out.dims[0] == 3 && !memcmp(out.data, fv, sizeof fv));
  nnp_tensor_free(&out);
  test_node_free(&t);

  t = test_node_new("Constant");
  test_attr_int(&t, "value_int", -7);
  CHECK_OK(test_run(&t, 13, 0, NULL, &out));
  CHECK(out.dtype == NNP_I64 && out.rank == 0 && ((int64_t *)out.data)[0] == -7);
  nnp_tensor_free(&out);
  test_node_free(&t);

  const int64_t iv[2] = {5, INT64_MIN};
  t = test_node_new("Constant");
  test_attr_ints(&t, "value_ints", 2, iv);
  CHECK_OK(test_run(&t, 13, 0, NULL, &out));
  CHECK(out.rank == 1 && i64_are(&out, 2, iv));
  nnp_tensor_free(&out);
  test_node_free(&t);

  /* empty value_ints: a zero-length vector */
  t = test_node_new("Constant");
  test_attr_ints(&t, "value_ints", 0, iv);
  CHECK_OK(test_run(&t, 13, 0, NULL, &out));
  CHECK(out.rank == 1 && out.dims[0] == 0);
  nnp_tensor_free(&out);
  test_node_free(&t);

  /* errors */
  t = test_node_new("Constant");
  test_attr_string(&t, "value_string", "hi");
  CHECK(test_run(&t, 13, 0, NULL, &out) == NNP_ERR_UNSUPPORTED);
  test_node_free(&t);
  t = test_node_new("Constant");
  CHECK(test_run(&t, 13, 0, NULL, &out) == NNP_ERR_FORMAT);
  test_node_free(&t);
  t = test_node_new("Constant");
  test_attr_int(&t, "value_int", 1);
  test_attr_float(&t, "value_float", 1);
  CHECK(test_run(&t, 13, 0, NULL, &out) == NNP_ERR_FORMAT);
  test_node_free(&t);
  t = test_node_new("Constant");
  test_attr_int(&t, "value_floats", 1); /* wrong attribute type */
  CHECK(test_run(&t, 13, 0, NULL, &out) == NNP_ERR_FORMAT);
  test_node_free(&t);
}

/* ---- ConstantOfShape ------------------------------------------------------------------ */

static void test_constant_of_shape(void) {
  const int64_t sv[2] = {2, 3};
  nnp_tensor shp = i64_vec(2, sv), out;
  const nnp_tensor *ins[1] = {&shp};

  test_node t = test_node_new("ConstantOfShape");
  CHECK_OK(test_run(&t, 9, 1, ins, &out));
  const float zeros[6] = {0};
  CHECK(out.dtype == NNP_F32 && test_shape_is(&out, 2, sv) && test_max_abs_diff(&out, zeros, 6) == 0);
  nnp_tensor_free(&out);
  test_node_free(&t);

  const int64_t one[1] = {1};
  const int32_t seven = 7;
  t = test_node_new("ConstantOfShape");
  test_attr_tensor(&t, "value", test_tensor(NNP_I32, 1, one, &seven));
  CHECK_OK(test_run(&t, 9, 1, ins, &out));
  CHECK(out.dtype == NNP_I32 && test_shape_is(&out, 2, sv));
  bool ok = true;
  for (int i = 0; i < 6; i++) ok = ok && ((int32_t *)out.data)[i] == 7;
  CHECK(ok);
  nnp_tensor_free(&out);
  nnp_tensor_free(&shp);

  /* shape [] gives a scalar; shape [0] an empty vector */
  shp = i64_vec(0, NULL);
  CHECK_OK(test_run(&t, 9, 1, ins, &out));
  CHECK(out.rank == 0 && ((int32_t *)out.data)[0] == 7);
  nnp_tensor_free(&out);
  nnp_tensor_free(&shp);
  const int64_t z[1] = {0};
  shp = i64_vec(1, z);
  CHECK_OK(test_run(&t, 9, 1, ins, &out));
  CHECK(out.rank == 1 && out.dims[0] == 0);
  nnp_tensor_free(&out);
  nnp_tensor_free(&shp);

  /* errors: negative dim, huge, runtime shape */
  const int64_t neg[2] = {2, -1};
  shp = i64_vec(2, neg);
  CHECK(test_run(&t, 9, 1, ins, &out) == NNP_ERR_SHAPE);
  nnp_tensor_free(&shp);
  const int64_t huge[3] = {1 << 30, 1 << 30, 1 << 30};
  shp = i64_vec(3, huge);
  CHECK(test_run(&t, 9, 1, ins, &out) == NNP_ERR_LIMIT);
  nnp_tensor_free(&shp);
  nnp_tensor rt = {.dtype = NNP_I64, .rank = 1, .dims = {2}};
  ins[0] = &rt;
  CHECK(nnp_op_infer(t.n, 9, 1, ins, 1, &out, NULL) == NNP_ERR_UNSUPPORTED);
  test_node_free(&t);

  /* value with two elements */
  const float two[2] = {1, 2};
  const int64_t d2[1] = {2};
  shp = i64_vec(2, sv);
  ins[0] = &shp;
  t = test_node_new("ConstantOfShape");
  test_attr_tensor(&t, "value", test_tensor(NNP_F32, 1, d2, two));
  CHECK(test_run(&t, 9, 1, ins, &out) == NNP_ERR_SHAPE);
  test_node_free(&t);
  nnp_tensor_free(&shp);
}

/* ---- Reshape -------------------------------------------------------------------------- */

/* Reshapes a [2,3,4] float tensor to `shape`; returns the status and checks data on OK. */
static nnp_status reshape_to(int n, const int64_t *shape, int allowzero, int rank_want, const int64_t *want) {
  float x[24];
  for (int i = 0; i < 24; i++) x[i] = (float)i;
  const int64_t d[3] = {2, 3, 4};
  nnp_tensor in = test_tensor(NNP_F32, 3, d, x), shp = i64_vec(n, shape), out;
  const nnp_tensor *ins[2] = {&in, &shp};
  test_node t = test_node_new("Reshape");
  if (allowzero >= 0) test_attr_int(&t, "allowzero", allowzero);
  nnp_status st = test_run(&t, 14, 2, ins, &out);
  if (st == NNP_OK) {
    CHECK(test_shape_is(&out, rank_want, want));
    CHECK(test_max_abs_diff(&out, x, 24) == 0);
    nnp_tensor_free(&out);
  }
  test_node_free(&t);
  nnp_tensor_free(&in);
  nnp_tensor_free(&shp);
  return st;
}

static void test_reshape(void) {
  const int64_t s1[2] = {4, -1}, w1[2] = {4, 6};
  CHECK_OK(reshape_to(2, s1, -1, 2, w1));
  const int64_t s2[3] = {0, 0, -1}, w2[3] = {2, 3, 4};
  CHECK_OK(reshape_to(3, s2, -1, 3, w2));
  const int64_t s3[4] = {2, 0, 2, -1}, w3[4] = {2, 3, 2, 2};
  CHECK_OK(reshape_to(4, s3, 0, 4, w3));
  const int64_t s4[1] = {-1}, w4[1] = {24};
  CHECK_OK(reshape_to(1, s4, -1, 1, w4));
  const int64_t s5[6] = {1, 2, 1, 3, 4, 1};
  CHECK_OK(reshape_to(6, s5, -1, 6, s5));
  /* errors */
  const int64_t e1[2] = {-1, -1};
  CHECK(reshape_to(2, e1, -1, 0, NULL) == NNP_ERR_SHAPE);
  const int64_t e2[2] = {5, -1};
  CHECK(reshape_to(2, e2, -1, 0, NULL) == NNP_ERR_SHAPE);
  const int64_t e3[2] = {4, 5};
  CHECK(reshape_to(2, e3, -1, 0, NULL) == NNP_ERR_SHAPE);
  const int64_t e4[2] = {-2, 12};
  CHECK(reshape_to(2, e4, -1, 0, NULL) == NNP_ERR_SHAPE);
  const int64_t e5[4] = {0, 0, 0, 0}; /* index 3 has no input dim to copy */
  CHECK(reshape_to(4, e5, -1, 0, NULL) == NNP_ERR_SHAPE);
  const int64_t e6[3] = {0, 4, -1}; /* allowzero=1: literal 0 with -1 */
  CHECK(reshape_to(3, e6, 1, 0, NULL) == NNP_ERR_SHAPE);
  const int64_t e7[3] = {0, 4, 6}; /* allowzero=1: 0 elements != 24 */
  CHECK(reshape_to(3, e7, 1, 0, NULL) == NNP_ERR_SHAPE);
  const int64_t e8[3] = {INT64_MAX, 4, 4};
  CHECK(reshape_to(3, e8, -1, 0, NULL) == NNP_ERR_LIMIT);
  const int64_t e9[9] = {1, 1, 1, 1, 1, 1, 2, 3, 4};
  CHECK(reshape_to(9, e9, -1, 0, NULL) == NNP_ERR_LIMIT);

  /* allowzero=1 with an empty input: [0,3] -> [3,0] */
  const int64_t d03[2] = {0, 3}, s30[2] = {3, 0};
  nnp_tensor in = test_tensor(NNP_U8, 2, d03, NULL), shp = i64_vec(2, s30), out;
  const nnp_tensor *ins[2] = {&in, &shp};
  test_node t = test_node_new("Reshape");
  test_attr_int(&t, "allowzero", 1);
  CHECK_OK(test_run(&t, 14, 2, ins, &out));
  CHECK(test_shape_is(&out, 2, s30) && out.dtype == NNP_U8);
  nnp_tensor_free(&out);
  test_node_free(&t);
  nnp_tensor_free(&in);
  nnp_tensor_free(&shp);

  /* generic dtype (f16 bytes) and the opset < 5 attribute form */
  const uint16_t h[4] = {1, 2, 3, 0xffff};
  const int64_t d4[1] = {4}, s22[2] = {2, 2};
  in = test_tensor(NNP_F16, 1, d4, h);
  t = test_node_new("Reshape");
  test_attr_ints(&t, "shape", 2, s22);
  CHECK_OK(test_run(&t, 4, 1, ins, &out));
  CHECK(out.dtype == NNP_F16 && test_shape_is(&out, 2, s22) && !memcmp(out.data, h, sizeof h));
  nnp_tensor_free(&out);
  CHECK(test_run(&t, 14, 1, ins, &out) == NNP_ERR_FORMAT); /* shape input missing */
  test_node_free(&t);
  nnp_tensor_free(&in);

  /* a runtime shape input is rejected */
  const int64_t d24[1] = {24};
  in = test_tensor(NNP_F32, 1, d24, NULL);
  nnp_tensor rt = {.dtype = NNP_I64, .rank = 1, .dims = {2}};
  ins[1] = &rt;
  t = test_node_new("Reshape");
  CHECK(nnp_op_infer(t.n, 14, 2, ins, 1, &out, NULL) == NNP_ERR_UNSUPPORTED);
  test_node_free(&t);
  nnp_tensor_free(&in);
}

/* ---- Flatten -------------------------------------------------------------------------- */

static void test_flatten(void) {
  const int64_t d[4] = {2, 3, 4, 5};
  nnp_tensor in = test_tensor(NNP_I64, 4, d, NULL), out;
  for (int i = 0; i < 120; i++) ((int64_t *)in.data)[i] = i * 3;
  const nnp_tensor *ins[1] = {&in};
  struct { int64_t axis; bool has; int64_t a, b; } c[] = {
      {0, false, 2, 60}, {0, true, 1, 120}, {2, true, 6, 20}, {4, true, 120, 1},
      {-1, true, 24, 5}, {-4, true, 1, 120}};
  for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
    test_node t = test_node_new("Flatten");
    if (c[i].has) test_attr_int(&t, "axis", c[i].axis);
    CHECK_OK(test_run(&t, 13, 1, ins, &out));
    const int64_t w[2] = {c[i].a, c[i].b};
    CHECK_MSG(test_shape_is(&out, 2, w) && !memcmp(out.data, in.data, 120 * 8), "axis %lld", (long long)c[i].axis);
    nnp_tensor_free(&out);
    test_node_free(&t);
  }
  test_node t = test_node_new("Flatten");
  test_attr_int(&t, "axis", 5);
  CHECK(test_run(&t, 13, 1, ins, &out) == NNP_ERR_SHAPE);
  test_node_free(&t);
  t = test_node_new("Flatten");
  test_attr_int(&t, "axis", -5);
  CHECK(test_run(&t, 13, 1, ins, &out) == NNP_ERR_SHAPE);
  test_node_free(&t);
  nnp_tensor_free(&in);
}

/* ---- Squeeze / Unsqueeze -------------------------------------------------------------- */

static void test_squeeze(void) {
  const int64_t d[4] = {1, 3, 1, 2};
  nnp_tensor in = test_tensor(NNP_BOOL, 4, d, NULL), out;
  for (int i = 0; i < 6; i++) ((uint8_t *)in.data)[i] = (uint8_t)(i & 1);
  const nnp_tensor *ins[2] = {&in, NULL};

  test_node t = test_node_new("Squeeze");
  CHECK_OK(test_run(&t, 13, 1, ins, &out)); /* no axes: all 1-dims */
  const int64_t w1[2] = {3, 2};
  CHECK(test_shape_is(&out, 2, w1) && out.dtype == NNP_BOOL && !memcmp(out.data, in.data, 6));
  nnp_tensor_free(&out);
  const int64_t am2[1] = {-2};
  nnp_tensor ax = i64_vec(1, am2);
  ins[1] = &ax;
  CHECK_OK(test_run(&t, 13, 2, ins, &out));
  const int64_t w2[3] = {1, 3, 2};
  CHECK(test_shape_is(&out, 3, w2));
  nnp_tensor_free(&out);
  nnp_tensor_free(&ax);
  const int64_t bad[1] = {1};
  ax = i64_vec(1, bad);
  CHECK(test_run(&t, 13, 2, ins, &out) == NNP_ERR_SHAPE); /* dim 1 is 3 */
  nnp_tensor_free(&ax);
  const int64_t dup[2] = {0, -4};
  ax = i64_vec(2, dup);
  CHECK(test_run(&t, 13, 2, ins, &out) == NNP_ERR_SHAPE);
  CHECK(test_run(&t, 11, 2, ins, &out) == NNP_ERR_FORMAT); /* input before opset 13 */
  nnp_tensor_free(&ax);
  test_node_free(&t);

  /* attribute form (opset 11) */
  t = test_node_new("Squeeze");
  const int64_t a0[2] = {0, 2};
  test_attr_ints(&t, "axes", 2, a0);
  CHECK_OK(test_run(&t, 11, 1, ins, &out));
  CHECK(test_shape_is(&out, 2, w1));
  nnp_tensor_free(&out);
  CHECK(test_run(&t, 13, 1, ins, &out) == NNP_ERR_FORMAT); /* attribute at opset 13 */
  test_node_free(&t);
  nnp_tensor_free(&in);
}

static void test_unsqueeze(void) {
  const int64_t d[2] = {3, 4};
  nnp_tensor in = test_tensor(NNP_F32, 2, d, NULL), out;
  for (int i = 0; i < 12; i++) ((float *)in.data)[i] = (float)i;
  const int64_t a1[2] = {2, 0};
  nnp_tensor ax = i64_vec(2, a1);
  const nnp_tensor *ins[2] = {&in, &ax};

  test_node t = test_node_new("Unsqueeze");
  CHECK_OK(test_run(&t, 13, 2, ins, &out));
  const int64_t w1[4] = {1, 3, 1, 4};
  CHECK(test_shape_is(&out, 4, w1) && !memcmp(out.data, in.data, 48));
  nnp_tensor_free(&out);
  nnp_tensor_free(&ax);
  const int64_t a2[2] = {0, -1};
  ax = i64_vec(2, a2);
  CHECK_OK(test_run(&t, 13, 2, ins, &out));
  const int64_t w2[4] = {1, 3, 4, 1};
  CHECK(test_shape_is(&out, 4, w2));
  nnp_tensor_free(&out);
  nnp_tensor_free(&ax);
  const int64_t dup[2] = {1, -3};
  ax = i64_vec(2, dup);
  CHECK(test_run(&t, 13, 2, ins, &out) == NNP_ERR_SHAPE);
  nnp_tensor_free(&ax);
  const int64_t oor[1] = {3};
  ax = i64_vec(1, oor);
  CHECK(test_run(&t, 13, 2, ins, &out) == NNP_ERR_SHAPE);
  nnp_tensor_free(&ax);
  const int64_t many[7] = {0, 1, 2, 3, 4, 5, 6};
  ax = i64_vec(7, many);
  CHECK(test_run(&t, 13, 2, ins, &out) == NNP_ERR_LIMIT);
  nnp_tensor_free(&ax);
  CHECK(test_run(&t, 13, 1, ins, &out) == NNP_ERR_FORMAT); /* axes required */
  test_node_free(&t);

  /* opset 11 attribute */
  t = test_node_new("Unsqueeze");
  const int64_t a3[1] = {2};
  test_attr_ints(&t, "axes", 1, a3);
  CHECK_OK(test_run(&t, 11, 1, ins, &out));
  const int64_t w3[3] = {3, 4, 1};
  CHECK(test_shape_is(&out, 3, w3));
  nnp_tensor_free(&out);
  test_node_free(&t);
  nnp_tensor_free(&in);

  /* scalar -> [1] */
  const double s = 1.5;
  in = test_tensor(NNP_F64, 0, NULL, &s);
  const int64_t z[1] = {0};
  ax = i64_vec(1, z);
  ins[0] = &in;
  ins[1] = &ax;
  t = test_node_new("Unsqueeze");
  CHECK_OK(test_run(&t, 13, 2, ins, &out));
  CHECK(out.rank == 1 && out.dims[0] == 1 && ((double *)out.data)[0] == 1.5);
  nnp_tensor_free(&out);
  test_node_free(&t);
  nnp_tensor_free(&in);
  nnp_tensor_free(&ax);
}

/* ---- Range ---------------------------------------------------------------------------- */

static void test_range(void) {
  nnp_tensor out;
  /* int32 negative delta: 10, 7 */
  const int32_t s = 10, l = 4, dl = -3;
  nnp_tensor ts = test_tensor(NNP_I32, 0, NULL, &s), tl = test_tensor(NNP_I32, 0, NULL, &l),
             td = test_tensor(NNP_I32, 0, NULL, &dl);
  const nnp_tensor *ins[3] = {&ts, &tl, &td};
  test_node t = test_node_new("Range");
  CHECK_OK(test_run(&t, 11, 3, ins, &out));
  CHECK(out.dtype == NNP_I32 && out.rank == 1 && out.dims[0] == 2);
  CHECK(((int32_t *)out.data)[0] == 10 && ((int32_t *)out.data)[1] == 7);
  nnp_tensor_free(&out);
  nnp_tensor_free(&ts);
  nnp_tensor_free(&tl);
  nnp_tensor_free(&td);

  /* float: 3, 6 (limit excluded); empty when limit is behind */
  const float fs = 3, fl = 9, fd = 3, fd_neg = -1;
  ts = test_tensor(NNP_F32, 0, NULL, &fs);
  tl = test_tensor(NNP_F32, 0, NULL, &fl);
  td = test_tensor(NNP_F32, 0, NULL, &fd);
  CHECK_OK(test_run(&t, 11, 3, ins, &out));
  const float w[2] = {3, 6};
  CHECK(out.dims[0] == 2 && test_max_abs_diff(&out, w, 2) == 0);
  nnp_tensor_free(&out);
  nnp_tensor_free(&td);
  td = test_tensor(NNP_F32, 0, NULL, &fd_neg);
  CHECK_OK(test_run(&t, 11, 3, ins, &out));
  CHECK(out.rank == 1 && out.dims[0] == 0);
  nnp_tensor_free(&out);

  /* a runtime value is unsupported: the output length would depend on it */
  nnp_tensor rt = {.dtype = NNP_F32, .rank = 0};
  ins[1] = &rt;
  CHECK(nnp_op_infer(t.n, 11, 3, ins, 1, &out, NULL) == NNP_ERR_UNSUPPORTED);
  ins[1] = &tl;
  nnp_tensor_free(&td);

  /* delta 0, mixed types */
  const float zero = 0;
  td = test_tensor(NNP_F32, 0, NULL, &zero);
  CHECK(test_run(&t, 11, 3, ins, &out) == NNP_ERR_SHAPE);
  nnp_tensor_free(&td);
  const int32_t one = 1;
  td = test_tensor(NNP_I32, 0, NULL, &one);
  CHECK(test_run(&t, 11, 3, ins, &out) == NNP_ERR_SHAPE);
  nnp_tensor_free(&td);
  nnp_tensor_free(&ts);
  nnp_tensor_free(&tl);

  /* int64 extremes: the length overflows the tensor limit, not int64 */
  const int64_t smin = INT64_MIN, smax = INT64_MAX, d1 = 1, dbig = INT64_MAX;
  ts = test_tensor(NNP_I64, 0, NULL, &smin);
  tl = test_tensor(NNP_I64, 0, NULL, &smax);
  td = test_tensor(NNP_I64, 0, NULL, &d1);
  CHECK(test_run(&t, 11, 3, ins, &out) == NNP_ERR_LIMIT);
  nnp_tensor_free(&td);
  td = test_tensor(NNP_I64, 0, NULL, &dbig);
  CHECK_OK(test_run(&t, 11, 3, ins, &out)); /* MIN, -1, MAX-1 */
  CHECK(out.dims[0] == 3);
  if (out.dims[0] == 3) {
    const int64_t *y = out.data;
    CHECK(y[0] == INT64_MIN && y[1] == -1 && y[2] == INT64_MAX - 1);
  }
  nnp_tensor_free(&out);
  nnp_tensor_free(&ts);
  nnp_tensor_free(&tl);
  nnp_tensor_free(&td);
  test_node_free(&t);
}

int main(void) {
  test_shape_size();
  test_constant();
  test_constant_of_shape();
  test_reshape();
  test_flatten();
  test_squeeze();
  test_unsqueeze();
  test_range();
  TEST_MAIN_END();
}
