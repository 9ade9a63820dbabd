/* BatchNormalization, InstanceNormalization, LRN: hand-computed values, opset variants,
 * types, and the validation paths. */
#include "ops/op_test_util.h"

static void check_f32(const nnp_tensor *y, const float *want, int64_t n, double tol, const char *what) {
  CHECK_MSG(y->dtype == NNP_F32 && nnp_tensor_numel(y) == n, "%s: wrong output", what);
  if (y->dtype != NNP_F32) return;
  double d = test_max_abs_diff(y, want, n);
  CHECK_MSG(d <= tol, "%s: max abs diff %g", what, d);
}

static nnp_status infer(test_node *t, int64_t opset, int n_in, const nnp_tensor *const *in, int n_out) {
  nnp_tensor out[8];
  return nnp_op_infer(t->n, opset, n_in, in, n_out, out, NULL);
}

static void test_batch_norm(void) {
  static const float x[4] = {1, 2, 3, 5}, sc[2] = {1, 3}, bi[2] = {0, 1}, mu[2] = {0, 1}, va[2] = {1, 4};
  int64_t xd[4] = {1, 2, 1, 2}, pd[1] = {2};
  nnp_tensor X = test_tensor(NNP_F32, 4, xd, x), S = test_tensor(NNP_F32, 1, pd, sc),
             B = test_tensor(NNP_F32, 1, pd, bi), M = test_tensor(NNP_F32, 1, pd, mu),
             V = test_tensor(NNP_F32, 1, pd, va), out[5];
  const nnp_tensor *in[5] = {&X, &S, &B, &M, &V};
  {
    test_node t = test_node_new("BatchNormalization");
    test_attr_float(&t, "epsilon", 0);
    CHECK_OK(nnp_op_eval(t.n, 15, 5, in, 1, out));
    static const float want[4] = {1, 2, 4, 7};
    check_f32(&out[0], want, 4, 1e-6, "batchnorm");
    CHECK(out[0].rank == 4 && out[0].dims[1] == 2 && out[0].dims[3] == 2);
    nnp_tensor_free(&out[0]);
    /* opset 6 attributes (is_test, momentum, spatial) are accepted */
    test_attr_int(&t, "is_test", 1);
    test_attr_float(&t, "momentum", 0.9f);
    test_attr_int(&t, "spatial", 1);
    CHECK_OK(nnp_op_eval(t.n, 6, 5, in, 1, out));
    check_f32(&out[0], want, 4, 1e-6, "batchnorm opset 6");
    nnp_tensor_free(&out[0]);
    test_node_free(&t);
  }
  { /* default epsilon 1e-5 */
    test_node t = test_node_new("BatchNormalization");
    CHECK_OK(nnp_op_eval(t.n, 9, 5, in, 1, out));
    CHECK_NEAR(((float *)out[0].data)[0], 1 / sqrt(1 + 1e-5), 1e-7);
    nnp_tensor_free(&out[0]);
    test_node_free(&t);
  }
  { /* running mean/var outputs (1, 2) are the inputs in inference; saved stats rejected */
    test_node t = test_node_new("BatchNormalization");
    CHECK_OK(nnp_op_eval(t.n, 9, 5, in, 3, out));
    CHECK(out[1].rank == 1 && ((float *)out[1].data)[1] == 1 && ((float *)out[2].data)[1] == 4);
    for (int i = 0; i < 3; i++) nnp_tensor_free(&out[i]);
    CHECK(infer(&t, 9, 5, in, 5) == NNP_ERR_UNSUPPORTED);
    test_node_free(&t);
  }
  { /* training_mode (opset 14+) */
    test_node t = test_node_new("BatchNormalization");
    test_attr_int(&t, "training_mode", 1);
    CHECK(infer(&t, 15, 5, in, 1) == NNP_ERR_UNSUPPORTED);
    test_node_free(&t);
  }
  { /* rank 2 (N, C) input */
    int64_t xd2[2] = {2, 2};
    nnp_tensor X2 = test_tensor(NNP_F32, 2, xd2, x);
    const nnp_tensor *in2[5] = {&X2, &S, &B, &M, &V};
    test_node t = test_node_new("BatchNormalization");
    test_attr_float(&t, "epsilon", 0);
    CHECK_OK(nnp_op_eval(t.n, 15, 5, in2, 1, out));
    static const float want[4] = {1, 2.5f, 3, 7};
    check_f32(&out[0], want, 4, 1e-6, "batchnorm rank 2");
    nnp_tensor_free(&out[0]);
    nnp_tensor_free(&X2);
    test_node_free(&t);
  }
  { /* opset 7 spatial = 0: parameters per channel and position (C x S) */
    static const float sc4[4] = {1, 2, 3, 4}, z4[4] = {0, 0, 0, 0}, one4[4] = {1, 1, 1, 1};
    int64_t p2[2] = {2, 2};
    nnp_tensor S4 = test_tensor(NNP_F32, 2, p2, sc4), Z4 = test_tensor(NNP_F32, 2, p2, z4),
               O4 = test_tensor(NNP_F32, 2, p2, one4);
    const nnp_tensor *in4[5] = {&X, &S4, &Z4, &Z4, &O4};
    test_node t = test_node_new("BatchNormalization");
    test_attr_float(&t, "epsilon", 0);
    test_attr_int(&t, "spatial", 0);
    CHECK_OK(nnp_op_eval(t.n, 7, 5, in4, 1, out));
    static const float want[4] = {1, 4, 9, 20};
    check_f32(&out[0], want, 4, 1e-6, "batchnorm spatial=0");
    nnp_tensor_free(&out[0]);
    /* with spatial = 1 such parameters are the wrong size */
    test_node_free(&t);
    t = test_node_new("BatchNormalization");
    CHECK(infer(&t, 7, 5, in4, 1) == NNP_ERR_SHAPE);
    test_node_free(&t);
    nnp_tensor_free(&S4);
    nnp_tensor_free(&Z4);
    nnp_tensor_free(&O4);
  }
  { /* float64 X with float32 parameters (opset 15 allows distinct types), float16 X */
    static const double xd_[4] = {1, 2, 3, 5};
    nnp_tensor Xd = test_tensor(NNP_F64, 4, xd, xd_);
    const nnp_tensor *ind[5] = {&Xd, &S, &B, &M, &V};
    test_node t = test_node_new("BatchNormalization");
    test_attr_float(&t, "epsilon", 0);
    CHECK_OK(nnp_op_eval(t.n, 15, 5, ind, 1, out));
    CHECK(out[0].dtype == NNP_F64 && ((double *)out[0].data)[3] == 7);
    nnp_tensor_free(&out[0]);
    nnp_tensor_free(&Xd);
    uint16_t xh[4];
    for (int i = 0; i < 4; i++) xh[i] = nnp_f32_to_f16(x[i]);
    nnp_tensor Xh = test_tensor(NNP_F16, 4, xd, xh);
    const nnp_tensor *inh[5] = {&Xh, &S, &B, &M, &V};
    CHECK_OK(nnp_op_eval(t.n, 15, 5, inh, 1, out));
    CHECK(out[0].dtype == NNP_F16 && nnp_f16_to_f32(((uint16_t *)out[0].data)[2]) == 4);
    nnp_tensor_free(&out[0]);
    nnp_tensor_free(&Xh);
    test_node_free(&t);
  }
  { /* validation: parameter sizes and types, X type, rank, missing input */
    test_node t = test_node_new("BatchNormalization");
    int64_t p3[1] = {3};
    nnp_tensor S3 = {.dtype = NNP_F32, .rank = 1, .dims = {3}};
    nnp_tensor Si = {.dtype = NNP_I32, .rank = 1, .dims = {2}};
    const nnp_tensor *bad1[5] = {&X, &S3, &B, &M, &V}, *bad2[5] = {&X, &S, &B, &Si, &V},
                     *bad3[5] = {&X, &S, &B, &M, NULL};
    (void)p3;
    CHECK(infer(&t, 15, 5, bad1, 1) == NNP_ERR_SHAPE);
    CHECK(infer(&t, 15, 5, bad2, 1) == NNP_ERR_SHAPE);
    CHECK(infer(&t, 15, 5, bad3, 1) != NNP_OK); /* required input omitted */
    nnp_tensor Xi = {.dtype = NNP_I64, .rank = 4, .dims = {1, 2, 1, 2}};
    nnp_tensor X1 = {.dtype = NNP_F32, .rank = 1, .dims = {2}};
    const nnp_tensor *bad4[5] = {&Xi, &S, &B, &M, &V}, *bad5[5] = {&X1, &S, &B, &M, &V};
    CHECK(infer(&t, 15, 5, bad4, 1) == NNP_ERR_UNSUPPORTED);
    CHECK(infer(&t, 15, 5, bad5, 1) == NNP_ERR_SHAPE);
    test_node_free(&t);
    t = test_node_new("BatchNormalization");
    test_attr_int(&t, "spatial", 2);
    CHECK(infer(&t, 7, 5, in, 1) == NNP_ERR_SHAPE);
    test_node_free(&t);
  }
  nnp_tensor_free(&X);
  nnp_tensor_free(&S);
  nnp_tensor_free(&B);
  nnp_tensor_free(&M);
  nnp_tensor_free(&V);
}

static void test_instance_norm(void) {
  /* ONNX operator doc example */
  static const float x[6] = {-1, 0, 1, 2, 3, 4}, sc[2] = {1, 1.5f}, bi[2] = {0, 1};
  int64_t xd[4] = {1, 2, 1, 3}, pd[1] = {2};
  nnp_tensor X = test_tensor(NNP_F32, 4, xd, x), S = test_tensor(NNP_F32, 1, pd, sc),
             B = test_tensor(NNP_F32, 1, pd, bi), out[1];
  const nnp_tensor *in[3] = {&X, &S, &B};
  test_node t = test_node_new("InstanceNormalization");
  CHECK_OK(nnp_op_eval(t.n, 6, 3, in, 1, out));
  static const float want[6] = {-1.22473562f, 0, 1.22473562f, -0.83710337f, 1, 2.83710337f};
  check_f32(&out[0], want, 6, 1e-5, "instancenorm");
  nnp_tensor_free(&out[0]);
  { /* N = 2: each (n, c) plane has its own statistics; epsilon attribute */
    static const float x2[4] = {0, 2, 10, 30};
    int64_t xd2[3] = {2, 1, 2}, pd1[1] = {1};
    static const float one[1] = {1}, zero[1] = {0};
    nnp_tensor X2 = test_tensor(NNP_F32, 3, xd2, x2), S1 = test_tensor(NNP_F32, 1, pd1, one),
               B1 = test_tensor(NNP_F32, 1, pd1, zero);
    const nnp_tensor *in2[3] = {&X2, &S1, &B1};
    test_node t2 = test_node_new("InstanceNormalization");
    test_attr_float(&t2, "epsilon", 0);
    CHECK_OK(nnp_op_eval(t2.n, 6, 3, in2, 1, out));
    static const float want2[4] = {-1, 1, -1, 1};
    check_f32(&out[0], want2, 4, 1e-6, "instancenorm per plane");
    nnp_tensor_free(&out[0]);
    nnp_tensor_free(&X2);
    nnp_tensor_free(&S1);
    nnp_tensor_free(&B1);
    test_node_free(&t2);
  }
  { /* validation */
    nnp_tensor S3 = {.dtype = NNP_F32, .rank = 1, .dims = {3}};
    nnp_tensor X2 = {.dtype = NNP_F32, .rank = 2, .dims = {1, 2}};
    nnp_tensor Xi = {.dtype = NNP_I32, .rank = 4, .dims = {1, 2, 1, 3}};
    const nnp_tensor *b1[3] = {&X, &S3, &B}, *b2[3] = {&X2, &S, &B}, *b3[3] = {&Xi, &S, &B},
                     *b4[3] = {&X, &S, NULL};
    CHECK(infer(&t, 6, 3, b1, 1) == NNP_ERR_SHAPE);
    CHECK(infer(&t, 6, 3, b2, 1) == NNP_ERR_SHAPE);
    CHECK(infer(&t, 6, 3, b3, 1) == NNP_ERR_UNSUPPORTED);
    CHECK(infer(&t, 6, 3, b4, 1) != NNP_OK); /* required input omitted */
  }
  test_node_free(&t);
  nnp_tensor_free(&X);
  nnp_tensor_free(&S);
  nnp_tensor_free(&B);
}

static void test_lrn(void) {
  static const float x[3] = {1, 2, 3};
  int64_t xd[4] = {1, 3, 1, 1};
  nnp_tensor X = test_tensor(NNP_F32, 4, xd, x), out[1];
  const nnp_tensor *in[1] = {&X};
  { /* size 3, alpha/size = 1, beta 1, bias 1: y = x / (1 + window sum of squares) */
    test_node t = test_node_new("LRN");
    test_attr_int(&t, "size", 3);
    test_attr_float(&t, "alpha", 3);
    test_attr_float(&t, "beta", 1);
    CHECK_OK(nnp_op_eval(t.n, 13, 1, in, 1, out));
    static const float want[3] = {1.0f / 6, 2.0f / 15, 3.0f / 14};
    check_f32(&out[0], want, 3, 1e-6, "lrn size 3");
    nnp_tensor_free(&out[0]);
    test_node_free(&t);
  }
  { /* even size: the window is [c - floor((size-1)/2), c + ceil((size-1)/2)] = [c, c+1] */
    test_node t = test_node_new("LRN");
    test_attr_int(&t, "size", 2);
    test_attr_float(&t, "alpha", 2);
    test_attr_float(&t, "beta", 1);
    CHECK_OK(nnp_op_eval(t.n, 13, 1, in, 1, out));
    static const float want[3] = {1.0f / 6, 2.0f / 14, 3.0f / 10};
    check_f32(&out[0], want, 3, 1e-6, "lrn size 2");
    nnp_tensor_free(&out[0]);
    test_node_free(&t);
  }
  { /* defaults: alpha 1e-4, beta 0.75, bias 1 */
    test_node t = test_node_new("LRN");
    test_attr_int(&t, "size", 1);
    CHECK_OK(nnp_op_eval(t.n, 13, 1, in, 1, out));
    CHECK_NEAR(((float *)out[0].data)[2], 3 / pow(1 + 1e-4 * 9, 0.75), 1e-6);
    nnp_tensor_free(&out[0]);
    test_node_free(&t);
  }
  { /* validation */
    test_node t = test_node_new("LRN");
    CHECK(infer(&t, 13, 1, in, 1) == NNP_ERR_SHAPE); /* size missing */
    test_node_free(&t);
    int64_t bad[2] = {0, -3};
    for (int i = 0; i < 2; i++) {
      t = test_node_new("LRN");
      test_attr_int(&t, "size", bad[i]);
      CHECK(infer(&t, 13, 1, in, 1) == NNP_ERR_SHAPE);
      test_node_free(&t);
    }
    t = test_node_new("LRN");
    test_attr_int(&t, "size", 3);
    nnp_tensor Xi = {.dtype = NNP_I8, .rank = 4, .dims = {1, 3, 1, 1}};
    const nnp_tensor *ini[1] = {&Xi};
    CHECK(infer(&t, 13, 1, ini, 1) == NNP_ERR_UNSUPPORTED);
    test_node_free(&t);
  }
  nnp_tensor_free(&X);
}

int main(void) {
  test_batch_norm();
  test_instance_norm();
  test_lrn();
  TEST_MAIN_END();
}
