/* Tests of Resize and Upsample (src/ops/resize.c): hand-computed small cases for every
 * coordinate and nearest mode, N-D linear and cubic cases against a direct per-element
 * evaluation, and the load-time rejections. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "op_test_util.h"

static nnp_tensor f32(int rank, const int64_t *dims, const float *v) {
  return test_tensor(NNP_F32, rank, dims, v);
}
static nnp_tensor i64v(int n, const int64_t *v) { return test_tensor(NNP_I64, 1, (int64_t[]){n}, v); }
static nnp_tensor f32v(int n, const float *v) { return test_tensor(NNP_F32, 1, (int64_t[]){n}, v); }

static int near_f32(const nnp_tensor *t, const float *want, int rank, const int64_t *dims, double tol) {
  if (t->dtype != NNP_F32 || t->rank != rank) return 0;
  for (int i = 0; i < rank; i++)
    if (t->dims[i] != dims[i]) return 0;
  return test_max_abs_diff(t, want, nnp_tensor_numel(t)) <= tol;
}

/* Resize-13+ with roi/scales/sizes (NULL = omitted). */
static nnp_status resize(test_node *t, int64_t opset, const nnp_tensor *x, const nnp_tensor *roi,
                         const nnp_tensor *scales, const nnp_tensor *sizes, nnp_tensor *y) {
  const nnp_tensor *in[] = {x, roi, scales, sizes};
  return nnp_op_eval(t->n, opset, sizes ? 4 : 3, in, 1, y);
}

static const float q2[4] = {1, 2, 3, 4}; /* [[1,2],[3,4]] */

static void test_nearest(void) {
  nnp_tensor x = f32(4, (int64_t[]){1, 1, 2, 2}, q2), y;
  nnp_tensor s = f32v(4, (float[]){1, 1, 2, 2});
  {
    test_node t = test_node_new("Resize");
    test_attr_string(&t, "mode", "nearest");
    CHECK_OK(resize(&t, 13, &x, NULL, &s, NULL, &y));
    CHECK(near_f32(&y, (float[]){1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}, 4, (int64_t[]){1, 1, 4, 4}, 0));
    nnp_tensor_free(&y);
    test_node_free(&t);
  }
  /* 1-D, sizes 8 from 4, each nearest_mode / coordinate mode */
  static const struct {
    const char *ct, *nm;
    float want[8];
  } cases[] = {
      {"asymmetric", "round_prefer_ceil", {1, 2, 2, 3, 3, 4, 4, 4}},
      {"asymmetric", "floor", {1, 1, 2, 2, 3, 3, 4, 4}},
      {"asymmetric", "round_prefer_floor", {1, 1, 2, 2, 3, 3, 4, 4}},
      {"half_pixel", "ceil", {1, 2, 2, 3, 3, 4, 4, 4}},
      {"half_pixel", "round_prefer_floor", {1, 1, 2, 2, 3, 3, 4, 4}},
      {"align_corners", "round_prefer_floor", {1, 1, 2, 2, 3, 3, 4, 4}},  /* x = 3o/7 */
      {"tf_half_pixel_for_nn", "round_prefer_floor", {1, 2, 2, 3, 3, 4, 4, 4}}, /* (o+.5)/2 */
  };
  nnp_tensor v = f32(1, (int64_t[]){4}, q2), sz = i64v(1, (int64_t[]){8});
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    test_node t = test_node_new("Resize");
    test_attr_string(&t, "coordinate_transformation_mode", cases[i].ct);
    test_attr_string(&t, "nearest_mode", cases[i].nm);
    CHECK_OK(resize(&t, cases[i].ct[0] == 't' ? 11 : 13, &v, NULL, NULL, &sz, &y));
    CHECK_MSG(near_f32(&y, cases[i].want, 1, (int64_t[]){8}, 0), "%s / %s", cases[i].ct, cases[i].nm);
    nnp_tensor_free(&y);
    test_node_free(&t);
  }
  { /* int8 and int64 nearest, downsampling */
    int8_t b[6] = {10, 20, 30, 40, 50, 60};
    nnp_tensor xb = test_tensor(NNP_I8, 1, (int64_t[]){6}, b), s3 = i64v(1, (int64_t[]){3});
    test_node t = test_node_new("Resize");
    CHECK_OK(resize(&t, 13, &xb, NULL, NULL, &s3, &y)); /* x = 2o + 0.5 -> floor-preferring */
    const int8_t want[3] = {10, 30, 50};
    CHECK(y.dtype == NNP_I8 && y.dims[0] == 3 && memcmp(y.data, want, 3) == 0);
    nnp_tensor_free(&y);
    nnp_tensor_free(&xb);
    nnp_tensor_free(&s3);
    test_node_free(&t);
  }
  { /* Resize-10 downsampling: asymmetric, rounds up (the ONNX opset-10 test) */
    nnp_tensor x2 = f32(4, (int64_t[]){1, 1, 2, 4}, (float[]){1, 2, 3, 4, 5, 6, 7, 8});
    nnp_tensor s6 = f32v(4, (float[]){1, 1, 0.6f, 0.6f});
    test_node t = test_node_new("Resize");
    const nnp_tensor *in[] = {&x2, &s6};
    CHECK_OK(nnp_op_eval(t.n, 10, 2, in, 1, &y));
    CHECK(near_f32(&y, (float[]){1, 3}, 4, (int64_t[]){1, 1, 1, 2}, 0));
    nnp_tensor_free(&y);
    test_node_free(&t);
    nnp_tensor_free(&x2);
    nnp_tensor_free(&s6);
  }
  { /* opset 18 axes + keep_aspect_ratio_policy */
    nnp_tensor x2 = f32(4, (int64_t[]){1, 1, 2, 4}, (float[]){1, 2, 3, 4, 5, 6, 7, 8});
    nnp_tensor s33 = i64v(2, (int64_t[]){3, 3});
    test_node t = test_node_new("Resize");
    test_attr_ints(&t, "axes", 2, (int64_t[]){2, -1});
    test_attr_string(&t, "keep_aspect_ratio_policy", "not_larger");
    CHECK_OK(resize(&t, 18, &x2, NULL, NULL, &s33, &y)); /* scale 0.75 -> 2x3 */
    CHECK(near_f32(&y, (float[]){1, 2, 4, 5, 6, 8}, 4, (int64_t[]){1, 1, 2, 3}, 0));
    nnp_tensor_free(&y);
    test_node_free(&t);
    t = test_node_new("Resize");
    test_attr_ints(&t, "axes", 2, (int64_t[]){2, 3});
    test_attr_string(&t, "keep_aspect_ratio_policy", "not_smaller");
    CHECK_OK(resize(&t, 18, &x2, NULL, NULL, &s33, &y)); /* scale 1.5 -> 3x6 */
    CHECK(y.dims[2] == 3 && y.dims[3] == 6);
    nnp_tensor_free(&y);
    test_node_free(&t);
    t = test_node_new("Resize");
    test_attr_ints(&t, "axes", 2, (int64_t[]){3, 3});
    CHECK(resize(&t, 18, &x2, NULL, NULL, &s33, &y) == NNP_ERR_SHAPE);
    test_node_free(&t);
    nnp_tensor_free(&x2);
    nnp_tensor_free(&s33);
  }
  nnp_tensor_free(&v);
  nnp_tensor_free(&sz);
  nnp_tensor_free(&s);
  nnp_tensor_free(&x);
}

static void test_linear(void) {
  nnp_tensor x = f32(4, (int64_t[]){1, 1, 2, 2}, q2), y;
  nnp_tensor s = f32v(4, (float[]){1, 1, 2, 2});
  {
    test_node t = test_node_new("Resize");
    test_attr_string(&t, "mode", "linear");
    CHECK_OK(resize(&t, 13, &x, NULL, &s, NULL, &y));
    CHECK(near_f32(&y, (float[]){1, 1.25f, 1.75f, 2, 1.5f, 1.75f, 2.25f, 2.5f, 2.5f, 2.75f, 3.25f, 3.5f, 3, 3.25f,
                                 3.75f, 4},
                   4, (int64_t[]){1, 1, 4, 4}, 1e-6));
    nnp_tensor_free(&y);
    test_node_free(&t);
  }
  {
    test_node t = test_node_new("Resize");
    test_attr_string(&t, "mode", "linear");
    test_attr_string(&t, "coordinate_transformation_mode", "align_corners");
    CHECK_OK(resize(&t, 13, &x, NULL, &s, NULL, &y));
    const float a = 1.0f / 3, b = 2.0f / 3;
    CHECK(near_f32(&y, (float[]){1, 1 + a, 1 + b, 2, 1 + b, 2, 2 + a, 2 + b, 2 + a, 2 + b, 3, 3 + a, 3, 3 + a,
                                 3 + b, 4},
                   4, (int64_t[]){1, 1, 4, 4}, 1e-5));
    nnp_tensor_free(&y);
    test_node_free(&t);
  }
  { /* align_corners with a scale whose output length is not whole (ONNX reference) */
    nnp_tensor x2 = f32(4, (int64_t[]){1, 1, 2, 4}, (float[]){1, 2, 3, 4, 5, 6, 7, 8});
    nnp_tensor s6 = f32v(4, (float[]){1, 1, 0.6f, 0.6f});
    test_node t = test_node_new("Resize");
    test_attr_string(&t, "mode", "linear");
    test_attr_string(&t, "coordinate_transformation_mode", "align_corners");
    CHECK_OK(resize(&t, 13, &x2, NULL, &s6, NULL, &y));
    CHECK(near_f32(&y, (float[]){1, 3.142857f}, 4, (int64_t[]){1, 1, 1, 2}, 1e-5));
    nnp_tensor_free(&y);
    test_node_free(&t);
    nnp_tensor_free(&x2);
    nnp_tensor_free(&s6);
  }
  { /* tf_crop_and_resize with extrapolation (the ONNX test) */
    float v[16];
    for (int i = 0; i < 16; i++) v[i] = (float)(i + 1);
    nnp_tensor x4 = f32(4, (int64_t[]){1, 1, 4, 4}, v);
    nnp_tensor roi = f32v(8, (float[]){0, 0, 0.4f, 0.6f, 1, 1, 1.2f, 1.7f}), sz = i64v(4, (int64_t[]){1, 1, 3, 3});
    test_node t = test_node_new("Resize");
    test_attr_string(&t, "mode", "linear");
    test_attr_string(&t, "coordinate_transformation_mode", "tf_crop_and_resize");
    test_attr_float(&t, "extrapolation_value", 10);
    CHECK_OK(resize(&t, 13, &x4, &roi, NULL, &sz, &y));
    CHECK(near_f32(&y, (float[]){7.6f, 10, 10, 12.4f, 10, 10, 10, 10, 10}, 4, (int64_t[]){1, 1, 3, 3}, 1e-5));
    nnp_tensor_free(&y);
    nnp_tensor short_roi = f32v(4, (float[]){0, 0, 1, 1});
    CHECK(resize(&t, 13, &x4, &short_roi, NULL, &sz, &y) == NNP_ERR_SHAPE);
    nnp_tensor_free(&short_roi);
    test_node_free(&t);
    nnp_tensor_free(&x4);
    nnp_tensor_free(&roi);
    nnp_tensor_free(&sz);
  }
  { /* float64 and float16 */
    nnp_tensor sz = i64v(1, (int64_t[]){4});
    double dv[2] = {0, 1};
    nnp_tensor xd = test_tensor(NNP_F64, 1, (int64_t[]){2}, dv);
    test_node t = test_node_new("Resize");
    test_attr_string(&t, "mode", "linear");
    CHECK_OK(resize(&t, 13, &xd, NULL, NULL, &sz, &y));
    const double wd[4] = {0, 0.25, 0.75, 1};
    CHECK(y.dtype == NNP_F64 && y.dims[0] == 4 && memcmp(y.data, wd, sizeof wd) == 0);
    nnp_tensor_free(&y);
    uint16_t hv[2] = {nnp_f32_to_f16(0), nnp_f32_to_f16(1)};
    nnp_tensor xh = test_tensor(NNP_F16, 1, (int64_t[]){2}, hv);
    CHECK_OK(resize(&t, 13, &xh, NULL, NULL, &sz, &y));
    CHECK(y.dtype == NNP_F16 && y.dims[0] == 4 && nnp_f16_to_f32(((uint16_t *)y.data)[1]) == 0.25f &&
          nnp_f16_to_f32(((uint16_t *)y.data)[2]) == 0.75f);
    nnp_tensor_free(&y);
    test_node_free(&t);
    nnp_tensor_free(&xd);
    nnp_tensor_free(&xh);
    nnp_tensor_free(&sz);
  }
  nnp_tensor_free(&s);
  nnp_tensor_free(&x);
}

/* Direct evaluation of N-D half_pixel / pytorch_half_pixel linear resize: for every
 * output element, sum the 2^rank corner values with product weights. */
static void naive_linear(const float *x, int rank, const int64_t *in, const int64_t *out, int pytorch, float *y) {
  int64_t n = 1, xs[8], c[8];
  for (int a = 0; a < rank; a++) n *= out[a];
  xs[rank - 1] = 1;
  for (int a = rank - 2; a >= 0; a--) xs[a] = xs[a + 1] * in[a + 1];
  for (int64_t i = 0; i < n; i++) {
    int64_t r = i;
    for (int a = rank - 1; a >= 0; a--) c[a] = r % out[a], r /= out[a];
    int64_t i0[8], i1[8];
    double w[8];
    for (int a = 0; a < rank; a++) {
      double s = (double)out[a] / (double)in[a];
      double v = pytorch && out[a] == 1 ? 0 : (c[a] + 0.5) / s - 0.5;
      double f = floor(v);
      w[a] = v - f;
      i0[a] = f < 0 ? 0 : f > in[a] - 1 ? in[a] - 1 : (int64_t)f;
      i1[a] = f + 1 < 0 ? 0 : f + 1 > in[a] - 1 ? in[a] - 1 : (int64_t)f + 1;
    }
    double acc = 0;
    for (int m = 0; m < (1 << rank); m++) {
      double wt = 1;
      int64_t off = 0;
      for (int a = 0; a < rank; a++) {
        int bit = (m >> a) & 1;
        wt *= bit ? w[a] : 1 - w[a];
        off += (bit ? i1[a] : i0[a]) * xs[a];
      }
      acc += wt * x[off];
    }
    y[i] = (float)acc;
  }
}

static void test_linear_nd(void) {
  const int64_t in[5] = {2, 3, 4, 1, 5}, out[5] = {3, 3, 7, 2, 1};
  float xv[120], want[126];
  test_fill_uniform(xv, 120, -1, 1, 7);
  nnp_tensor x = f32(5, in, xv), sz = i64v(5, out), y;
  for (int pt = 0; pt < 2; pt++) {
    test_node t = test_node_new("Resize");
    test_attr_string(&t, "mode", "linear");
    test_attr_string(&t, "coordinate_transformation_mode", pt ? "pytorch_half_pixel" : "half_pixel");
    CHECK_OK(resize(&t, 13, &x, NULL, NULL, &sz, &y));
    naive_linear(xv, 5, in, out, pt, want);
    CHECK_MSG(near_f32(&y, want, 5, out, 1e-5), "pytorch=%d: max diff %g", pt, test_max_abs_diff(&y, want, 126));
    nnp_tensor_free(&y);
    test_node_free(&t);
  }
  nnp_tensor_free(&x);
  nnp_tensor_free(&sz);
}

/* 1-D cubic: [1, 2, 4, 8] through Resize-13 with the given attributes (a = NAN: default
 * cubic_coeff_a; exclude < 0: attribute absent) and scales or sizes. */
static nnp_status cubic_1d(const char *ct, float a, int exclude, const float *scale, const int64_t *size,
                           const float *roi, float extrapolation, nnp_tensor *y) {
  nnp_tensor x = f32(1, (int64_t[]){4}, (float[]){1, 2, 4, 8});
  nnp_tensor s = scale ? f32v(1, scale) : (nnp_tensor){0}, z = size ? i64v(1, size) : (nnp_tensor){0};
  nnp_tensor r = roi ? f32v(2, roi) : (nnp_tensor){0};
  test_node t = test_node_new("Resize");
  test_attr_string(&t, "mode", "cubic");
  if (ct) test_attr_string(&t, "coordinate_transformation_mode", ct);
  if (!isnan(a)) test_attr_float(&t, "cubic_coeff_a", a);
  if (exclude >= 0) test_attr_int(&t, "exclude_outside", exclude);
  if (roi) test_attr_float(&t, "extrapolation_value", extrapolation);
  nnp_status st = resize(&t, 13, &x, roi ? &r : NULL, scale ? &s : NULL, size ? &z : NULL, y);
  test_node_free(&t);
  nnp_tensor_free(&x);
  if (scale) nnp_tensor_free(&s);
  if (size) nnp_tensor_free(&z);
  if (roi) nnp_tensor_free(&r);
  return st;
}

/* Keys kernel with parameter A: W(t) = (A+2)|t|^3 - (A+3)|t|^2 + 1 on [0, 1],
 * A|t|^3 - 5A|t|^2 + 8A|t| - 4A on (1, 2). For A = -0.75:
 *   W(0.25) = 0.87890625  W(0.75) = 0.26171875  W(1.25) = -0.10546875  W(1.75) = -0.03515625
 *   W(0.5)  = 0.59375     W(1.5)  = -0.09375
 * and for A = -0.5: W(0.25) = 0.8671875, W(1.25) = -0.0703125. */
static void test_cubic(void) {
  nnp_tensor y;
  const float two = 2;
  { /* half_pixel x2, A = -0.75. o = 0: x = -0.25, taps -2..1 clamp to 0,0,0,1 with weights
     * W(1.75), W(0.75), W(0.25), W(1.25): 1.10546875 * 1 - 0.10546875 * 2 = 0.89453125. */
    CHECK_OK(cubic_1d(NULL, NAN, -1, &two, NULL, NULL, 0, &y));
    CHECK(near_f32(&y, (float[]){0.89453125f, 1.15625f, 1.5625f, 2.41796875f, 3.16015625f, 5.1171875f, 7.1640625f,
                                 8.421875f},
                   1, (int64_t[]){8}, 1e-6));
    nnp_tensor_free(&y);
    /* exclude_outside = 0 given explicitly changes nothing */
    CHECK_OK(cubic_1d("half_pixel", -0.75f, 0, &two, NULL, NULL, 0, &y));
    CHECK(near_f32(&y, (float[]){0.89453125f, 1.15625f, 1.5625f, 2.41796875f, 3.16015625f, 5.1171875f, 7.1640625f,
                                 8.421875f},
                   1, (int64_t[]){8}, 1e-6));
    nnp_tensor_free(&y);
  }
  { /* asymmetric x2: whole coordinates give the input exactly; x = 0.5 has weights
     * (-0.09375, 0.59375, 0.59375, -0.09375) on 1, 1, 2, 4 = 1.3125. */
    CHECK_OK(cubic_1d("asymmetric", NAN, -1, &two, NULL, NULL, 0, &y));
    CHECK(near_f32(&y, (float[]){1, 1.3125f, 2, 2.71875f, 4, 6.1875f, 8, 8.375f}, 1, (int64_t[]){8}, 1e-6));
    const float *v = y.data;
    CHECK(v[0] == 1 && v[2] == 2 && v[4] == 4 && v[6] == 8);
    nnp_tensor_free(&y);
  }
  { /* cubic_coeff_a = -0.5: o = 0 is (W(1.75) + W(0.75) + W(0.25)) * 1 + W(1.25) * 2
     * = 1.0703125 - 0.140625 = 0.9296875 */
    CHECK_OK(cubic_1d(NULL, -0.5f, -1, &two, NULL, NULL, 0, &y));
    CHECK(near_f32(&y, (float[]){0.9296875f, 1.15625f, 1.65625f, 2.3828125f, 3.3359375f, 4.953125f, 7.234375f,
                                 8.28125f},
                   1, (int64_t[]){8}, 1e-6));
    nnp_tensor_free(&y);
  }
  { /* A = -0.5 with exclude_outside: o = 0 keeps only taps 0 and 1,
     * (0.8671875 * 1 - 0.0703125 * 2) / (0.8671875 - 0.0703125) = 31/34. Interior outputs
     * (all four taps inside) equal the A = -0.5 ones above. */
    CHECK_OK(cubic_1d(NULL, -0.5f, 1, &two, NULL, NULL, 0, &y));
    CHECK(near_f32(&y, (float[]){31.0f / 34, 1.1459854f, 1.6412213f, 2.3828125f, 3.3359375f, 5.0229008f, 7.2846715f,
                                 8.3529412f},
                   1, (int64_t[]){8}, 1e-6));
    nnp_tensor_free(&y);
  }
  { /* downsampling, half_pixel x0.5 with exclude_outside: x = 0.5 and 2.5 */
    const float half = 0.5f;
    CHECK_OK(cubic_1d(NULL, NAN, 1, &half, NULL, NULL, 0, &y));
    CHECK(near_f32(&y, (float[]){1.2857143f, 6.3428571f}, 1, (int64_t[]){2}, 1e-6));
    nnp_tensor_free(&y);
  }
  { /* align_corners with scale 0.75 (output length 3): x = 0, 1.5, 3 */
    const float s = 0.75f;
    CHECK_OK(cubic_1d("align_corners", NAN, -1, &s, NULL, NULL, 0, &y));
    CHECK(near_f32(&y, (float[]){1, 2.71875f, 8}, 1, (int64_t[]){3}, 1e-6));
    nnp_tensor_free(&y);
  }
  { /* pytorch_half_pixel, sizes 5, A = -0.5, exclude_outside (ONNX reference values) */
    const int64_t five = 5;
    CHECK_OK(cubic_1d("pytorch_half_pixel", -0.5f, 1, NULL, &five, NULL, 0, &y));
    CHECK(near_f32(&y, (float[]){0.95673077f, 1.5768299f, 2.8125f, 5.2651478f, 8.1730769f}, 1, (int64_t[]){5}, 1e-6));
    nnp_tensor_free(&y);
  }
  { /* tf_crop_and_resize, roi [0.2, 1.2]: x = 0.6, 1.6, 2.6, 3.6 (> 3: extrapolated) */
    const int64_t four = 4;
    CHECK_OK(cubic_1d("tf_crop_and_resize", NAN, -1, NULL, &four, (float[]){0.2f, 1.2f}, 10, &y));
    CHECK(near_f32(&y, (float[]){1.396f, 2.864f, 6.592f, 10}, 1, (int64_t[]){4}, 1e-5));
    nnp_tensor_free(&y);
  }
  { /* float64, float16 and bfloat16 */
    nnp_tensor sz = i64v(1, (int64_t[]){8});
    const double want[8] = {0.89453125, 1.15625, 1.5625, 2.41796875, 3.16015625, 5.1171875, 7.1640625, 8.421875};
    test_node t = test_node_new("Resize");
    test_attr_string(&t, "mode", "cubic");
    nnp_tensor xd = test_tensor(NNP_F64, 1, (int64_t[]){4}, (double[]){1, 2, 4, 8});
    CHECK_OK(resize(&t, 13, &xd, NULL, NULL, &sz, &y));
    CHECK(y.dtype == NNP_F64 && y.dims[0] == 8);
    for (int i = 0; i < 8; i++) CHECK_MSG(fabs(((double *)y.data)[i] - want[i]) < 1e-12, "f64 [%d]", i);
    nnp_tensor_free(&y);
    uint16_t hv[4], bv[4];
    for (int i = 0; i < 4; i++) {
      hv[i] = nnp_f32_to_f16((float)(1 << i));
      bv[i] = nnp_f32_to_bf16((float)(1 << i));
    }
    nnp_tensor xh = test_tensor(NNP_F16, 1, (int64_t[]){4}, hv), xb = test_tensor(NNP_BF16, 1, (int64_t[]){4}, bv);
    CHECK_OK(resize(&t, 13, &xh, NULL, NULL, &sz, &y));
    CHECK(y.dtype == NNP_F16 && y.dims[0] == 8);
    for (int i = 0; i < 8; i++)
      CHECK_MSG(((uint16_t *)y.data)[i] == nnp_f32_to_f16((float)want[i]), "f16 [%d]", i);
    nnp_tensor_free(&y);
    CHECK_OK(resize(&t, 13, &xb, NULL, NULL, &sz, &y));
    CHECK(y.dtype == NNP_BF16 && y.dims[0] == 8);
    for (int i = 0; i < 8; i++)
      CHECK_MSG(((uint16_t *)y.data)[i] == nnp_f32_to_bf16((float)want[i]), "bf16 [%d]", i);
    nnp_tensor_free(&y);
    test_node_free(&t);
    nnp_tensor_free(&xd);
    nnp_tensor_free(&xh);
    nnp_tensor_free(&xb);
    nnp_tensor_free(&sz);
  }
}

/* Keys kernel, written piecewise (not in the nested form the kernel uses). */
static double keys(double t, double a) {
  t = fabs(t);
  if (t <= 1) return (a + 2) * t * t * t - (a + 3) * t * t + 1;
  if (t < 2) return a * t * t * t - 5 * a * t * t + 8 * a * t - 4 * a;
  return 0;
}

/* Direct evaluation of N-D cubic resize (half_pixel or tf_half_pixel_for_nn): for every
 * output element, sum the 4^rank taps around it with product weights. */
static void naive_cubic(const float *x, int rank, const int64_t *in, const int64_t *out, int tf, double a,
                        int exclude, float *y) {
  int64_t n = 1, xs[8], c[8];
  for (int d = 0; d < rank; d++) n *= out[d];
  xs[rank - 1] = 1;
  for (int d = rank - 2; d >= 0; d--) xs[d] = xs[d + 1] * in[d + 1];
  for (int64_t i = 0; i < n; i++) {
    int64_t r = i;
    for (int d = rank - 1; d >= 0; d--) c[d] = r % out[d], r /= out[d];
    int64_t base[8];
    double w[8][4];
    for (int d = 0; d < rank; d++) {
      const double s = (double)out[d] / (double)in[d];
      const double v = (c[d] + 0.5) / s - (tf ? 0 : 0.5), f = floor(v);
      base[d] = (int64_t)f - 1;
      double sum = 0;
      for (int j = 0; j < 4; j++) {
        const int64_t k = base[d] + j;
        w[d][j] = exclude && (k < 0 || k >= in[d]) ? 0 : keys(v - (double)k, a);
        sum += w[d][j];
      }
      if (exclude)
        for (int j = 0; j < 4; j++) w[d][j] /= sum;
    }
    double acc = 0;
    for (int m = 0; m < (1 << (2 * rank)); m++) {
      double wt = 1;
      int64_t off = 0;
      for (int d = 0; d < rank; d++) {
        const int j = (m >> (2 * d)) & 3;
        int64_t k = base[d] + j;
        k = k < 0 ? 0 : k >= in[d] ? in[d] - 1 : k;
        wt *= w[d][j];
        off += k * xs[d];
      }
      acc += wt * x[off];
    }
    y[i] = (float)acc;
  }
}

static void test_cubic_nd(void) {
  /* axis 0 unresized, axis 1 upsampled from 1, axes 2 and 3 up and down */
  const int64_t in[4] = {3, 1, 5, 6}, out[4] = {3, 2, 8, 4};
  float xv[90], want[192];
  test_fill_uniform(xv, 90, -1, 1, 11);
  nnp_tensor x = f32(4, in, xv), sz = i64v(4, out), y;
  for (int tf = 0; tf < 2; tf++)
    for (int ex = 0; ex < 2; ex++) {
      const double a = ex ? -0.5 : -0.75;
      test_node t = test_node_new("Resize");
      test_attr_string(&t, "mode", "cubic");
      test_attr_string(&t, "coordinate_transformation_mode", tf ? "tf_half_pixel_for_nn" : "half_pixel");
      if (ex) {
        test_attr_float(&t, "cubic_coeff_a", (float)a);
        test_attr_int(&t, "exclude_outside", 1);
      }
      CHECK_OK(resize(&t, 13, &x, NULL, NULL, &sz, &y));
      naive_cubic(xv, 4, in, out, tf, a, ex, want);
      CHECK_MSG(near_f32(&y, want, 4, out, 1e-5), "tf=%d exclude=%d: max diff %g", tf, ex,
                test_max_abs_diff(&y, want, 192));
      nnp_tensor_free(&y);
      test_node_free(&t);
    }
  nnp_tensor_free(&x);
  nnp_tensor_free(&sz);
}

static void test_upsample(void) {
  nnp_tensor x = f32(4, (int64_t[]){1, 1, 2, 2}, q2), y;
  { /* opset 7: scales attribute */
    test_node t = test_node_new("Upsample");
    test_attr_floats(&t, "scales", 4, (float[]){1, 1, 2, 3});
    const nnp_tensor *in[] = {&x};
    CHECK_OK(nnp_op_eval(t.n, 7, 1, in, 1, &y));
    CHECK(near_f32(&y, (float[]){1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4}, 4,
                   (int64_t[]){1, 1, 4, 6}, 0));
    nnp_tensor_free(&y);
    test_node_free(&t);
    t = test_node_new("Upsample"); /* scales missing */
    CHECK(nnp_op_eval(t.n, 7, 1, in, 1, &y) == NNP_ERR_SHAPE);
    test_node_free(&t);
  }
  { /* opset 9: scales input, linear is asymmetric */
    test_node t = test_node_new("Upsample");
    test_attr_string(&t, "mode", "linear");
    nnp_tensor s = f32v(4, (float[]){1, 1, 2, 2});
    const nnp_tensor *in[] = {&x, &s};
    CHECK_OK(nnp_op_eval(t.n, 9, 2, in, 1, &y));
    CHECK(near_f32(&y, (float[]){1, 1.5f, 2, 2, 2, 2.5f, 3, 3, 3, 3.5f, 4, 4, 3, 3.5f, 4, 4}, 4,
                   (int64_t[]){1, 1, 4, 4}, 1e-6));
    nnp_tensor_free(&y);
    nnp_tensor rt = s; /* scales computed at run time */
    rt.data = NULL;
    const nnp_tensor *inr[] = {&x, &rt};
    size_t scratch;
    CHECK(nnp_op_infer(t.n, 9, 2, inr, 1, &y, &scratch) == NNP_ERR_UNSUPPORTED);
    nnp_tensor_free(&s);
    test_node_free(&t);
  }
  nnp_tensor_free(&x);
}

static void test_errors(void) {
  nnp_tensor x = f32(4, (int64_t[]){1, 1, 2, 2}, q2), y;
  nnp_tensor s = f32v(4, (float[]){1, 1, 2, 2}), sz = i64v(4, (int64_t[]){1, 1, 4, 4});
  struct {
    const char *attr, *val;
  } unsup[] = {{"mode", "area"}, {"mode", "bicubic"}, {"coordinate_transformation_mode", "bogus"},
               {"nearest_mode", "round_to_even"}};
  for (size_t i = 0; i < sizeof unsup / sizeof *unsup; i++) {
    test_node t = test_node_new("Resize");
    test_attr_string(&t, unsup[i].attr, unsup[i].val);
    CHECK_MSG(resize(&t, 13, &x, NULL, &s, NULL, &y) == NNP_ERR_UNSUPPORTED, "%s=%s", unsup[i].attr, unsup[i].val);
    test_node_free(&t);
  }
  {
    test_node t = test_node_new("Resize");
    CHECK(resize(&t, 13, &x, NULL, &s, &sz, &y) == NNP_ERR_SHAPE);   /* both */
    CHECK(resize(&t, 13, &x, NULL, NULL, NULL, &y) == NNP_ERR_SHAPE); /* neither */
    nnp_tensor bad = f32v(4, (float[]){1, 1, -2, 2});
    CHECK(resize(&t, 13, &x, NULL, &bad, NULL, &y) == NNP_ERR_SHAPE);
    nnp_tensor_free(&bad);
    bad = f32v(3, (float[]){1, 2, 2});
    CHECK(resize(&t, 13, &x, NULL, &bad, NULL, &y) == NNP_ERR_SHAPE);
    nnp_tensor_free(&bad);
    bad = f32v(4, (float[]){1, 1, 1e30f, 1e30f});
    CHECK(resize(&t, 13, &x, NULL, &bad, NULL, &y) == NNP_ERR_LIMIT);
    nnp_tensor_free(&bad);
    nnp_tensor nsz = i64v(4, (int64_t[]){1, 1, -4, 4});
    CHECK(resize(&t, 13, &x, NULL, NULL, &nsz, &y) == NNP_ERR_SHAPE);
    nnp_tensor_free(&nsz);
    test_node_free(&t);
  }
  { /* linear on integers, antialias when downsampling */
    test_node t = test_node_new("Resize");
    test_attr_string(&t, "mode", "linear");
    nnp_tensor xi = test_tensor(NNP_I32, 4, (int64_t[]){1, 1, 2, 2}, NULL);
    CHECK(resize(&t, 13, &xi, NULL, &s, NULL, &y) == NNP_ERR_UNSUPPORTED);
    nnp_tensor_free(&xi);
    test_node_free(&t);
    t = test_node_new("Resize");
    test_attr_string(&t, "mode", "linear");
    test_attr_int(&t, "antialias", 1);
    nnp_tensor down = f32v(4, (float[]){1, 1, 0.5f, 0.5f});
    CHECK(resize(&t, 18, &x, NULL, &down, NULL, &y) == NNP_ERR_UNSUPPORTED);
    CHECK_OK(resize(&t, 18, &x, NULL, &s, NULL, &y)); /* upsampling: antialias is a no-op */
    nnp_tensor_free(&y);
    nnp_tensor_free(&down);
    test_node_free(&t);
  }
  { /* cubic: only Resize-11+, floats only, antialias only when not downsampling */
    test_node t = test_node_new("Resize");
    test_attr_string(&t, "mode", "cubic");
    const nnp_tensor *in10[] = {&x, &s};
    CHECK(nnp_op_eval(t.n, 10, 2, in10, 1, &y) == NNP_ERR_UNSUPPORTED);
    CHECK_OK(resize(&t, 11, &x, NULL, &s, NULL, &y));
    nnp_tensor_free(&y);
    nnp_tensor xi = test_tensor(NNP_I32, 4, (int64_t[]){1, 1, 2, 2}, NULL);
    CHECK(resize(&t, 13, &xi, NULL, &s, NULL, &y) == NNP_ERR_UNSUPPORTED);
    nnp_tensor_free(&xi);
    test_attr_int(&t, "antialias", 1);
    nnp_tensor down = f32v(4, (float[]){1, 1, 0.5f, 1});
    CHECK(resize(&t, 18, &x, NULL, &down, NULL, &y) == NNP_ERR_UNSUPPORTED);
    CHECK_OK(resize(&t, 18, &x, NULL, &s, NULL, &y));
    nnp_tensor_free(&y);
    nnp_tensor_free(&down);
    test_node_free(&t);
    t = test_node_new("Upsample");
    test_attr_string(&t, "mode", "cubic");
    CHECK(nnp_op_eval(t.n, 9, 2, in10, 1, &y) == NNP_ERR_UNSUPPORTED);
    test_node_free(&t);
  }
  { /* empty scales from an exporter's placeholder Constant count as absent */
    test_node t = test_node_new("Resize");
    nnp_tensor empty = test_tensor(NNP_F32, 1, (int64_t[]){0}, NULL);
    CHECK_OK(resize(&t, 11, &x, &empty, &empty, &sz, &y));
    CHECK(y.dims[2] == 4 && y.dims[3] == 4);
    nnp_tensor_free(&y);
    nnp_tensor_free(&empty);
    test_node_free(&t);
  }
  nnp_tensor_free(&s);
  nnp_tensor_free(&sz);
  nnp_tensor_free(&x);
}

int main(void) {
  test_nearest();
  test_linear();
  test_linear_nd();
  test_cubic();
  test_cubic_nd();
  test_upsample();
  test_errors();
  TEST_MAIN_END();
}
