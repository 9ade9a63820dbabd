/* MaxPool, AveragePool, GlobalMaxPool, GlobalAveragePool: hand-computed cases (several
 * from the ONNX operator docs), Indices, types, and the attribute validation paths. */
#include "ops/op_test_util.h"

static nnp_status run(test_node *t, int n_in, const nnp_tensor *const *in, int n_out, nnp_tensor *out) {
  return nnp_op_eval(t->n, 13, n_in, in, n_out, out);
}

static void check_f32(const nnp_tensor *y, int rank, const int64_t *dims, const float *want, double tol,
                      const char *what) {
  bool ok = y->rank == rank && y->dtype == NNP_F32;
  for (int i = 0; ok && i < rank; i++) ok = y->dims[i] == dims[i];
  CHECK_MSG(ok, "%s: wrong output shape/type", what);
  if (!ok) return;
  double d = test_max_abs_diff(y, want, nnp_tensor_numel(y));
  CHECK_MSG(d <= tol, "%s: max abs diff %g", what, d);
}

/* Pools x (f32, shape dims) with op/attrs already on t; checks output 0. */
static void pool_case(test_node *t, int rank, const int64_t *xdims, const float *x, int yrank,
                      const int64_t *ydims, const float *want, const char *what) {
  nnp_tensor X = test_tensor(NNP_F32, rank, xdims, x), Y;
  const nnp_tensor *in[1] = {&X};
  nnp_status s = run(t, 1, in, 1, &Y);
  CHECK_MSG(s == NNP_OK, "%s: %s", what, nnp_last_error());
  if (s == NNP_OK) {
    check_f32(&Y, yrank, ydims, want, 1e-6, what);
    nnp_tensor_free(&Y);
  }
  nnp_tensor_free(&X);
}

static float x16[16];

static void test_max_pool(void) {
  int64_t xd[4] = {1, 1, 4, 4};
  { /* kernel 2 stride 2 */
    test_node t = test_node_new("MaxPool");
    int64_t k[2] = {2, 2}, s[2] = {2, 2};
    test_attr_ints(&t, "kernel_shape", 2, k);
    test_attr_ints(&t, "strides", 2, s);
    int64_t yd[4] = {1, 1, 2, 2};
    static const float want[4] = {6, 8, 14, 16};
    pool_case(&t, 4, xd, x16, 4, yd, want, "maxpool 2x2/2");
    test_node_free(&t);
  }
  { /* ceil_mode (ONNX test_maxpool_2d_ceil) */
    test_node t = test_node_new("MaxPool");
    int64_t k[2] = {3, 3}, s[2] = {2, 2};
    test_attr_ints(&t, "kernel_shape", 2, k);
    test_attr_ints(&t, "strides", 2, s);
    test_attr_int(&t, "ceil_mode", 1);
    int64_t yd[4] = {1, 1, 2, 2};
    static const float want[4] = {11, 12, 15, 16};
    pool_case(&t, 4, xd, x16, 4, yd, want, "maxpool ceil");
    test_node_free(&t);
  }
  { /* dilations (ONNX test_maxpool_2d_dilations) */
    test_node t = test_node_new("MaxPool");
    int64_t k[2] = {2, 2}, d[2] = {2, 2};
    test_attr_ints(&t, "kernel_shape", 2, k);
    test_attr_ints(&t, "dilations", 2, d);
    int64_t yd[4] = {1, 1, 2, 2};
    static const float want[4] = {11, 12, 15, 16};
    pool_case(&t, 4, xd, x16, 4, yd, want, "maxpool dilations");
    test_node_free(&t);
  }
  { /* 1D SAME_UPPER / SAME_LOWER: the odd pad goes to the end / the start */
    static const float x[4] = {1, 2, 3, 4};
    int64_t xd1[3] = {1, 1, 4}, yd1[3] = {1, 1, 4}, k[1] = {2};
    test_node t = test_node_new("MaxPool");
    test_attr_ints(&t, "kernel_shape", 1, k);
    test_attr_string(&t, "auto_pad", "SAME_UPPER");
    static const float want_u[4] = {2, 3, 4, 4};
    pool_case(&t, 3, xd1, x, 3, yd1, want_u, "maxpool SAME_UPPER");
    test_node_free(&t);
    t = test_node_new("MaxPool");
    test_attr_ints(&t, "kernel_shape", 1, k);
    test_attr_string(&t, "auto_pad", "SAME_LOWER");
    static const float want_l[4] = {1, 2, 3, 4};
    pool_case(&t, 3, xd1, x, 3, yd1, want_l, "maxpool SAME_LOWER");
    test_node_free(&t);
  }
  { /* padding never wins, even against negative values */
    static const float x[3] = {-5, -2, -9};
    int64_t xd1[3] = {1, 1, 3}, yd1[3] = {1, 1, 3}, k[1] = {3}, p[2] = {1, 1};
    test_node t = test_node_new("MaxPool");
    test_attr_ints(&t, "kernel_shape", 1, k);
    test_attr_ints(&t, "pads", 2, p);
    static const float want[3] = {-2, -2, -2};
    pool_case(&t, 3, xd1, x, 3, yd1, want, "maxpool negative with pads");
    test_node_free(&t);
  }
  { /* ceil_mode drops a last window that would start in the end padding:
     * in 5, k 2, s 2, pads 1+1: ceil((7-2)/2)+1 = 4, but window 3 starts at 6 = in + pb */
    static const float x[5] = {1, 2, 3, 4, 5};
    int64_t xd1[3] = {1, 1, 5}, yd1[3] = {1, 1, 3}, k[1] = {2}, s[1] = {2}, p[2] = {1, 1};
    test_node t = test_node_new("MaxPool");
    test_attr_ints(&t, "kernel_shape", 1, k);
    test_attr_ints(&t, "strides", 1, s);
    test_attr_ints(&t, "pads", 2, p);
    test_attr_int(&t, "ceil_mode", 1);
    static const float want[3] = {1, 3, 5};
    pool_case(&t, 3, xd1, x, 3, yd1, want, "maxpool ceil drop");
    test_node_free(&t);
  }
  { /* 3D */
    float x[27];
    for (int i = 0; i < 27; i++) x[i] = (float)((i * 7) % 27);
    int64_t xd3[5] = {1, 1, 3, 3, 3}, yd3[5] = {1, 1, 1, 1, 1}, k[3] = {3, 3, 3};
    test_node t = test_node_new("MaxPool");
    test_attr_ints(&t, "kernel_shape", 3, k);
    static const float want[1] = {26};
    pool_case(&t, 5, xd3, x, 5, yd3, want, "maxpool 3D");
    test_node_free(&t);
  }
}

static void test_max_pool_indices(void) {
  /* N=1, C=2, 2x3 planes; kernel 2x2, stride 1 -> 1x2 outputs per plane. */
  static const float x[12] = {1, 9, 2, 3, 4, 8, /* plane 0 */ 7, 1, 1, 1, 1, 6};
  int64_t xd[4] = {1, 2, 2, 3}, k[2] = {2, 2};
  nnp_tensor X = test_tensor(NNP_F32, 4, xd, x), out[2];
  const nnp_tensor *in[1] = {&X};
  for (int order = 0; order < 2; order++) {
    test_node t = test_node_new("MaxPool");
    test_attr_ints(&t, "kernel_shape", 2, k);
    if (order) test_attr_int(&t, "storage_order", 1);
    CHECK_OK(run(&t, 1, in, 2, out));
    CHECK(out[1].dtype == NNP_I64 && out[1].rank == 4 && out[1].dims[3] == 2);
    if (out[1].dtype == NNP_I64) {
      const float *y = out[0].data;
      const int64_t *ind = out[1].data;
      CHECK(y[0] == 9 && y[1] == 9 && y[2] == 7 && y[3] == 6);
      /* row-major: (0,1) -> 1; plane 1 (0,0) -> 6 + 0, (1,2) -> 6 + 5.
       * column-major over the spatial axes: (h, w) -> h + w*H. */
      if (!order) CHECK(ind[0] == 1 && ind[1] == 1 && ind[2] == 6 && ind[3] == 11);
      else CHECK(ind[0] == 2 && ind[1] == 2 && ind[2] == 6 && ind[3] == 6 + 1 + 2 * 2);
    }
    nnp_tensor_free(&out[0]);
    nnp_tensor_free(&out[1]);
    test_node_free(&t);
  }
  nnp_tensor_free(&X);
}

static void test_max_pool_types(void) {
  int64_t xd[3] = {1, 1, 4}, k[1] = {2}, s[1] = {2};
  test_node t = test_node_new("MaxPool");
  test_attr_ints(&t, "kernel_shape", 1, k);
  test_attr_ints(&t, "strides", 1, s);
  nnp_tensor Y;
  { /* uint8 */
    static const uint8_t x[4] = {3, 250, 0, 7};
    nnp_tensor X = test_tensor(NNP_U8, 3, xd, x);
    const nnp_tensor *in[1] = {&X};
    CHECK_OK(run(&t, 1, in, 1, &Y));
    CHECK(Y.dtype == NNP_U8 && ((uint8_t *)Y.data)[0] == 250 && ((uint8_t *)Y.data)[1] == 7);
    nnp_tensor_free(&Y);
    nnp_tensor_free(&X);
  }
  { /* int8 */
    static const int8_t x[4] = {-128, -100, -3, -7};
    nnp_tensor X = test_tensor(NNP_I8, 3, xd, x);
    const nnp_tensor *in[1] = {&X};
    CHECK_OK(run(&t, 1, in, 1, &Y));
    CHECK(Y.dtype == NNP_I8 && ((int8_t *)Y.data)[0] == -100 && ((int8_t *)Y.data)[1] == -3);
    nnp_tensor_free(&Y);
    nnp_tensor_free(&X);
  }
  { /* float16 */
    uint16_t x[4] = {nnp_f32_to_f16(1.5f), nnp_f32_to_f16(-2), nnp_f32_to_f16(0.25f), nnp_f32_to_f16(4)};
    nnp_tensor X = test_tensor(NNP_F16, 3, xd, x);
    const nnp_tensor *in[1] = {&X};
    CHECK_OK(run(&t, 1, in, 1, &Y));
    CHECK(Y.dtype == NNP_F16 && nnp_f16_to_f32(((uint16_t *)Y.data)[0]) == 1.5f &&
          nnp_f16_to_f32(((uint16_t *)Y.data)[1]) == 4);
    nnp_tensor_free(&Y);
    nnp_tensor_free(&X);
  }
  { /* float64 */
    static const double x[4] = {1, 2, -3, -4};
    nnp_tensor X = test_tensor(NNP_F64, 3, xd, x);
    const nnp_tensor *in[1] = {&X};
    CHECK_OK(run(&t, 1, in, 1, &Y));
    CHECK(Y.dtype == NNP_F64 && ((double *)Y.data)[0] == 2 && ((double *)Y.data)[1] == -3);
    nnp_tensor_free(&Y);
    nnp_tensor_free(&X);
  }
  { /* int32 is not a MaxPool type */
    nnp_tensor X = {.dtype = NNP_I32, .rank = 3, .dims = {1, 1, 4}};
    const nnp_tensor *in[1] = {&X};
    nnp_tensor out[1];
    CHECK(nnp_op_infer(t.n, 13, 1, in, 1, out, NULL) == NNP_ERR_UNSUPPORTED);
  }
  test_node_free(&t);
}

static void test_average_pool(void) {
  int64_t xd[4] = {1, 1, 4, 4};
  { /* ceil_mode (ONNX test_averagepool_2d_ceil) */
    test_node t = test_node_new("AveragePool");
    int64_t k[2] = {3, 3}, s[2] = {2, 2};
    test_attr_ints(&t, "kernel_shape", 2, k);
    test_attr_ints(&t, "strides", 2, s);
    test_attr_int(&t, "ceil_mode", 1);
    int64_t yd[4] = {1, 1, 2, 2};
    static const float want[4] = {6, 7.5f, 12, 13.5f};
    pool_case(&t, 4, xd, x16, 4, yd, want, "avgpool ceil");
    test_node_free(&t);
  }
  { /* count_include_pad 0 / 1 */
    static const float x[3] = {1, 2, 3};
    int64_t xd1[3] = {1, 1, 3}, yd1[3] = {1, 1, 3}, k[1] = {3}, p[2] = {1, 1};
    test_node t = test_node_new("AveragePool");
    test_attr_ints(&t, "kernel_shape", 1, k);
    test_attr_ints(&t, "pads", 2, p);
    static const float want_ex[3] = {1.5f, 2, 2.5f};
    pool_case(&t, 3, xd1, x, 3, yd1, want_ex, "avgpool exclude pad");
    test_node_free(&t);
    t = test_node_new("AveragePool");
    test_attr_ints(&t, "kernel_shape", 1, k);
    test_attr_ints(&t, "pads", 2, p);
    test_attr_int(&t, "count_include_pad", 1);
    static const float want_in[3] = {1, 2, 5.0f / 3};
    pool_case(&t, 3, xd1, x, 3, yd1, want_in, "avgpool include pad");
    test_node_free(&t);
  }
  { /* SAME_UPPER excludes the implicit padding from the count */
    static const float x[4] = {1, 2, 3, 4};
    int64_t xd1[3] = {1, 1, 4}, yd1[3] = {1, 1, 4}, k[1] = {2};
    test_node t = test_node_new("AveragePool");
    test_attr_ints(&t, "kernel_shape", 1, k);
    test_attr_string(&t, "auto_pad", "SAME_UPPER");
    static const float want[4] = {1.5f, 2.5f, 3.5f, 4};
    pool_case(&t, 3, xd1, x, 3, yd1, want, "avgpool SAME_UPPER");
    test_node_free(&t);
  }
  { /* dilations (opset 19 attribute) */
    static const float x[5] = {1, 2, 3, 4, 5};
    int64_t xd1[3] = {1, 1, 5}, yd1[3] = {1, 1, 3}, k[1] = {2}, d[1] = {2};
    test_node t = test_node_new("AveragePool");
    test_attr_ints(&t, "kernel_shape", 1, k);
    test_attr_ints(&t, "dilations", 1, d);
    static const float want[3] = {2, 3, 4};
    pool_case(&t, 3, xd1, x, 3, yd1, want, "avgpool dilations");
    test_node_free(&t);
  }
  { /* 3D, N=2, C=2: every plane averaged separately */
    float x[2 * 2 * 8];
    for (int i = 0; i < 32; i++) x[i] = (float)i;
    int64_t xd3[5] = {2, 2, 2, 2, 2}, yd3[5] = {2, 2, 1, 1, 1}, k[3] = {2, 2, 2};
    test_node t = test_node_new("AveragePool");
    test_attr_ints(&t, "kernel_shape", 3, k);
    static const float want[4] = {3.5f, 11.5f, 19.5f, 27.5f};
    pool_case(&t, 5, xd3, x, 5, yd3, want, "avgpool 3D");
    test_node_free(&t);
  }
  { /* float16 and float64 */
    int64_t xd1[3] = {1, 1, 2}, k[1] = {2};
    test_node t = test_node_new("AveragePool");
    test_attr_ints(&t, "kernel_shape", 1, k);
    uint16_t xh[2] = {nnp_f32_to_f16(1), nnp_f32_to_f16(2)};
    nnp_tensor X = test_tensor(NNP_F16, 3, xd1, xh), Y;
    const nnp_tensor *in[1] = {&X};
    CHECK_OK(run(&t, 1, in, 1, &Y));
    CHECK(Y.dtype == NNP_F16 && nnp_f16_to_f32(((uint16_t *)Y.data)[0]) == 1.5f);
    nnp_tensor_free(&Y);
    nnp_tensor_free(&X);
    static const double xd_[2] = {1, 4};
    X = test_tensor(NNP_F64, 3, xd1, xd_);
    CHECK_OK(run(&t, 1, in, 1, &Y));
    CHECK(Y.dtype == NNP_F64 && ((double *)Y.data)[0] == 2.5);
    nnp_tensor_free(&Y);
    nnp_tensor_free(&X);
    nnp_tensor Xu = {.dtype = NNP_U8, .rank = 3, .dims = {1, 1, 2}};
    const nnp_tensor *inu[1] = {&Xu};
    nnp_tensor out[1];
    CHECK(nnp_op_infer(t.n, 13, 1, inu, 1, out, NULL) == NNP_ERR_UNSUPPORTED);
    test_node_free(&t);
  }
}

static void test_global_pools(void) {
  float x[2 * 3 * 4];
  for (int i = 0; i < 24; i++) x[i] = (float)(i % 5) - (float)i / 8;
  int64_t ranks[3] = {3, 4, 5};
  int64_t dims3[3] = {2, 3, 4}, dims4[4] = {2, 3, 2, 2}, dims5[5] = {2, 3, 1, 2, 2};
  const int64_t *dims[3] = {dims3, dims4, dims5};
  for (int r = 0; r < 3; r++) {
    for (int op = 0; op < 2; op++) {
      test_node t = test_node_new(op ? "GlobalMaxPool" : "GlobalAveragePool");
      nnp_tensor X = test_tensor(NNP_F32, (int)ranks[r], dims[r], x), Y;
      const nnp_tensor *in[1] = {&X};
      CHECK_OK(run(&t, 1, in, 1, &Y));
      bool shape_ok = Y.rank == ranks[r] && Y.dims[0] == 2 && Y.dims[1] == 3;
      for (int i = 2; i < Y.rank; i++) shape_ok = shape_ok && Y.dims[i] == 1;
      CHECK(shape_ok);
      if (shape_ok)
        for (int p = 0; p < 6; p++) {
          double acc = op ? -INFINITY : 0;
          for (int i = 0; i < 4; i++) {
            double v = x[p * 4 + i];
            acc = op ? (v > acc ? v : acc) : acc + v / 4;
          }
          CHECK_NEAR(((float *)Y.data)[p], acc, 1e-6);
        }
      nnp_tensor_free(&Y);
      nnp_tensor_free(&X);
      test_node_free(&t);
    }
  }
  { /* rank 2 and int types are rejected */
    test_node t = test_node_new("GlobalAveragePool");
    nnp_tensor X2 = {.dtype = NNP_F32, .rank = 2, .dims = {2, 3}};
    nnp_tensor Xi = {.dtype = NNP_I64, .rank = 4, .dims = {2, 3, 1, 1}};
    const nnp_tensor *in2[1] = {&X2}, *ini[1] = {&Xi};
    nnp_tensor out[1];
    CHECK(nnp_op_infer(t.n, 13, 1, in2, 1, out, NULL) == NNP_ERR_SHAPE);
    CHECK(nnp_op_infer(t.n, 13, 1, ini, 1, out, NULL) == NNP_ERR_UNSUPPORTED);
    test_node_free(&t);
  }
}

static void test_errors(void) {
  nnp_tensor X = {.dtype = NNP_F32, .rank = 4, .dims = {1, 2, 5, 5}};
  const nnp_tensor *in[1] = {&X};
  nnp_tensor out[2];
  struct {
    const char *attr;
    int n;
    int64_t v[6];
    nnp_status want;
  } cases[] = {
      {"strides", 2, {0, 1}, NNP_ERR_SHAPE},
      {"strides", 1, {1}, NNP_ERR_SHAPE},
      {"pads", 4, {1, 1, -1, 1}, NNP_ERR_SHAPE},
      {"pads", 3, {1, 1, 1}, NNP_ERR_SHAPE},
      {"dilations", 2, {0, 1}, NNP_ERR_SHAPE},
      {"dilations", 2, {4, 1}, NNP_ERR_SHAPE}, /* extent 5 (k 2) fits; see below */
      {"pads", 4, {0, 0, INT64_MAX, 0}, NNP_ERR_SHAPE},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    test_node t = test_node_new("MaxPool");
    int64_t k[2] = {2, 2};
    test_attr_ints(&t, "kernel_shape", 2, k);
    test_attr_ints(&t, cases[i].attr, cases[i].n, cases[i].v);
    nnp_status s = nnp_op_infer(t.n, 13, 1, in, 1, out, NULL);
    bool fits = !strcmp(cases[i].attr, "dilations") && cases[i].v[0] == 4;
    CHECK_MSG(fits ? s == NNP_OK : s == cases[i].want, "MaxPool %s case %zu -> %s", cases[i].attr, i,
              nnp_status_name(s));
    test_node_free(&t);
  }
  struct {
    const char *op;
    const char *attr;
    int64_t v;
    nnp_status want;
  } int_cases[] = {
      {"MaxPool", "storage_order", 2, NNP_ERR_UNSUPPORTED},
      {"MaxPool", "ceil_mode", -1, NNP_ERR_UNSUPPORTED},
      {"AveragePool", "count_include_pad", 3, NNP_ERR_UNSUPPORTED},
  };
  for (size_t i = 0; i < sizeof int_cases / sizeof int_cases[0]; i++) {
    test_node t = test_node_new(int_cases[i].op);
    int64_t k[2] = {2, 2};
    test_attr_ints(&t, "kernel_shape", 2, k);
    test_attr_int(&t, int_cases[i].attr, int_cases[i].v);
    CHECK(nnp_op_infer(t.n, 13, 1, in, 1, out, NULL) == int_cases[i].want);
    test_node_free(&t);
  }
  { /* kernel_shape: missing, wrong length, non-positive, larger than the input */
    test_node t = test_node_new("MaxPool");
    CHECK(nnp_op_infer(t.n, 13, 1, in, 1, out, NULL) == NNP_ERR_SHAPE);
    test_node_free(&t);
    int64_t bad[4][3] = {{2, 2, 2}, {0, 2}, {-1, 2}, {6, 2}};
    int nb[4] = {3, 2, 2, 2};
    for (int i = 0; i < 4; i++) {
      t = test_node_new("AveragePool");
      test_attr_ints(&t, "kernel_shape", nb[i], bad[i]);
      CHECK_MSG(nnp_op_infer(t.n, 13, 1, in, 1, out, NULL) == NNP_ERR_SHAPE, "kernel case %d", i);
      test_node_free(&t);
    }
  }
  { /* auto_pad, rank, output count */
    test_node t = test_node_new("MaxPool");
    int64_t k[2] = {2, 2};
    test_attr_ints(&t, "kernel_shape", 2, k);
    test_attr_string(&t, "auto_pad", "FULL");
    CHECK(nnp_op_infer(t.n, 13, 1, in, 1, out, NULL) == NNP_ERR_UNSUPPORTED);
    test_node_free(&t);
    t = test_node_new("MaxPool");
    test_attr_ints(&t, "kernel_shape", 2, k);
    nnp_tensor X2 = {.dtype = NNP_F32, .rank = 2, .dims = {5, 5}};
    const nnp_tensor *in2[1] = {&X2};
    CHECK(nnp_op_infer(t.n, 13, 1, in2, 1, out, NULL) == NNP_ERR_UNSUPPORTED);
    test_node_free(&t);
    t = test_node_new("AveragePool");
    test_attr_ints(&t, "kernel_shape", 2, k);
    CHECK(nnp_op_infer(t.n, 13, 1, in, 2, out, NULL) != NNP_OK);
    test_node_free(&t);
  }
  { /* SAME with a huge stride gives one output, not an overflow */
    test_node t = test_node_new("MaxPool");
    int64_t k[2] = {2, 2}, s[2] = {(int64_t)1 << 31, 1};
    test_attr_ints(&t, "kernel_shape", 2, k);
    test_attr_ints(&t, "strides", 2, s);
    test_attr_string(&t, "auto_pad", "SAME_UPPER");
    CHECK_OK(nnp_op_infer(t.n, 13, 1, in, 1, out, NULL));
    CHECK(out[0].dims[2] == 1 && out[0].dims[3] == 5);
    test_node_free(&t);
  }
}

int main(void) {
  for (int i = 0; i < 16; i++) x16[i] = (float)(i + 1);
  test_max_pool();
  test_max_pool_indices();
  test_max_pool_types();
  test_average_pool();
  test_global_pools();
  test_errors();
  TEST_MAIN_END();
}
