/* Quantization ops vs the ONNX spec formulas: rounding half to even, saturation at both
 * ends for uint8 and int8, per-axis scales, DequantizeLinear of int32, QLinearConv and
 * QLinearMatMul against a naive integer loop with the spec's requantize (incl. per-channel
 * weights, bias and saturating outputs), ConvInteger/MatMulInteger with per-row/column
 * zero points, and the validation paths. */
#include <stdarg.h>

#include "ops/op_test_util.h"

/* Frees the n test tensors (test_tensor copies its data). */
static void test_free(int n, ...) {
  va_list ap;
  va_start(ap, n);
  for (int i = 0; i < n; i++) nnp_tensor_free(va_arg(ap, nnp_tensor *));
  va_end(ap);
}

static void test_quantize_rounding_saturation(void) {
  /* x / 1 with halves: rint rounds half to even (0.5 -> 0, 1.5 -> 2, 2.5 -> 2, -0.5 -> -0,
   * -1.5 -> -2), then + zp and clamp. */
  static const float x[10] = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 300.0f, -300.0f, 127.5f, 126.5f, -128.5f};
  int64_t d[1] = {10}, sd[1] = {0};
  float one = 1.0f;
  nnp_tensor X = test_tensor(NNP_F32, 1, d, x), S = test_tensor(NNP_F32, 0, sd, &one);
  int8_t zi = 0;
  uint8_t zu = 10;
  nnp_tensor Zi = test_tensor(NNP_I8, 0, sd, &zi), Zu = test_tensor(NNP_U8, 0, sd, &zu), Y;
  test_node t = test_node_new("QuantizeLinear");
  const nnp_tensor *in[3] = {&X, &S, &Zi};
  CHECK_OK(nnp_op_eval(t.n, 13, 3, in, 1, &Y));
  static const int8_t wi[10] = {0, 2, 2, 0, -2, 127, -128, 127, 126, -128};
  CHECK(Y.dtype == NNP_I8 && Y.data && memcmp(Y.data, wi, 10) == 0);
  nnp_tensor_free(&Y);
  in[2] = &Zu;
  CHECK_OK(nnp_op_eval(t.n, 13, 3, in, 1, &Y));
  static const uint8_t wu[10] = {10, 12, 12, 10, 8, 255, 0, 138, 136, 0};
  CHECK(Y.dtype == NNP_U8 && Y.data && memcmp(Y.data, wu, 10) == 0);
  if (Y.data)
    for (int i = 0; i < 10; i++) CHECK_MSG(((uint8_t *)Y.data)[i] == wu[i], "u8[%d] = %d want %d", i, ((uint8_t *)Y.data)[i], wu[i]);
  nnp_tensor_free(&Y);
  /* no zero point: uint8 output, zp 0 */
  CHECK_OK(nnp_op_eval(t.n, 13, 2, in, 1, &Y));
  CHECK(Y.dtype == NNP_U8 && ((uint8_t *)Y.data)[1] == 2 && ((uint8_t *)Y.data)[6] == 0);
  nnp_tensor_free(&Y);
  test_node_free(&t);
  test_free(4, &X, &S, &Zi, &Zu);
}

static void test_per_axis(void) {
  /* x 2x3x2, axis 1: scale {1, 2, 4}, zp {0, 1, -1} (int8) */
  float x[12];
  for (int i = 0; i < 12; i++) x[i] = (float)(i * 3 - 10);
  int64_t xd[3] = {2, 3, 2}, sd[1] = {3};
  static const float s[3] = {1, 2, 4};
  static const int8_t z[3] = {0, 1, -1};
  nnp_tensor X = test_tensor(NNP_F32, 3, xd, x), S = test_tensor(NNP_F32, 1, sd, s), Z = test_tensor(NNP_I8, 1, sd, z), Y, D;
  test_node q = test_node_new("QuantizeLinear"), dq = test_node_new("DequantizeLinear");
  const nnp_tensor *in[3] = {&X, &S, &Z};
  CHECK_OK(nnp_op_eval(q.n, 13, 3, in, 1, &Y));
  for (int i = 0; Y.data && i < 12; i++) {
    int c = (i / 2) % 3;
    float want = rintf(x[i] / s[c]) + z[c];
    CHECK_MSG(((int8_t *)Y.data)[i] == (int8_t)want, "q[%d] = %d want %g", i, ((int8_t *)Y.data)[i], (double)want);
  }
  const nnp_tensor *din[3] = {&Y, &S, &Z};
  CHECK_OK(nnp_op_eval(dq.n, 13, 3, din, 1, &D));
  for (int i = 0; D.data && i < 12; i++) {
    int c = (i / 2) % 3;
    CHECK_NEAR(((float *)D.data)[i], (((int8_t *)Y.data)[i] - z[c]) * s[c], 0);
    CHECK(fabsf(((float *)D.data)[i] - x[i]) <= s[c] / 2); /* round trip within half a step */
  }
  nnp_tensor_free(&D);
  nnp_tensor_free(&Y);
  /* axis mismatch: scale of 3 values on axis 2 (size 2) */
  test_attr_int(&q, "axis", 2);
  nnp_tensor out[1];
  CHECK(nnp_op_infer(q.n, 13, 3, in, 1, out, NULL) == NNP_ERR_SHAPE);
  test_node_free(&q);
  test_node_free(&dq);
  test_free(3, &X, &S, &Z);
}

static void test_dequantize_int32(void) {
  static const int32_t x[3] = {-1000000, 0, 1 << 30};
  int64_t d[1] = {3}, sd[1] = {0};
  float s = 0.5f;
  nnp_tensor X = test_tensor(NNP_I32, 1, d, x), S = test_tensor(NNP_F32, 0, sd, &s), Y;
  test_node t = test_node_new("DequantizeLinear");
  const nnp_tensor *in[2] = {&X, &S};
  CHECK_OK(nnp_op_eval(t.n, 13, 2, in, 1, &Y));
  CHECK(Y.data && ((float *)Y.data)[0] == -500000.0f && ((float *)Y.data)[2] == (float)(1 << 29));
  nnp_tensor_free(&Y);
  /* zero point of another type is refused */
  uint8_t zu = 0;
  nnp_tensor Z = test_tensor(NNP_U8, 0, sd, &zu);
  const nnp_tensor *in3[3] = {&X, &S, &Z};
  nnp_tensor o[1];
  CHECK(nnp_op_infer(t.n, 13, 3, in3, 1, o, NULL) == NNP_ERR_SHAPE);
  test_node_free(&t);
  test_free(3, &X, &S, &Z);
}

static uint32_t lcg(uint32_t *s) {
  *s = *s * 1664525u + 1013904223u;
  return *s >> 8;
}

/* QLinearConv 1x4x5x5 (uint8, zp 7) * 3x4x3x3 (int8 per-channel scales, zp 0), pad 1,
 * stride 2, bias, vs a naive loop. The y scale is small so some outputs saturate. */
static void test_qlinear_conv(void) {
  enum { C = 4, H = 5, W = 5, M = 3, K = 3, OH = 3, OW = 3 };
  uint8_t x[C * H * W];
  int8_t w[M * C * K * K];
  uint32_t seed = 42;
  for (int i = 0; i < C * H * W; i++) x[i] = (uint8_t)(lcg(&seed) & 255);
  for (int i = 0; i < M * C * K * K; i++) w[i] = (int8_t)(lcg(&seed) & 255);
  w[0] = -128; /* the extreme weight */
  static const int32_t bias[M] = {1000, -2000, 0};
  float xs = 0.02f, ws[M] = {0.01f, 0.003f, 0.05f}, ys = 0.5f;
  uint8_t xz = 7, yz = 128;
  int8_t wz[M] = {0, 0, 0};
  int64_t xd[4] = {1, C, H, W}, wd[4] = {M, C, K, K}, md[1] = {M}, sd[1] = {0};
  nnp_tensor X = test_tensor(NNP_U8, 4, xd, x), Wt = test_tensor(NNP_I8, 4, wd, w);
  nnp_tensor XS = test_tensor(NNP_F32, 0, sd, &xs), XZ = test_tensor(NNP_U8, 0, sd, &xz);
  nnp_tensor WS = test_tensor(NNP_F32, 1, md, ws), WZ = test_tensor(NNP_I8, 1, md, wz);
  nnp_tensor YS = test_tensor(NNP_F32, 0, sd, &ys), YZ = test_tensor(NNP_U8, 0, sd, &yz);
  nnp_tensor B = test_tensor(NNP_I32, 1, md, bias), Y;
  test_node t = test_node_new("QLinearConv");
  static const int64_t pads[4] = {1, 1, 1, 1}, strides[2] = {2, 2};
  test_attr_ints(&t, "pads", 4, pads);
  test_attr_ints(&t, "strides", 2, strides);
  const nnp_tensor *in[9] = {&X, &XS, &XZ, &Wt, &WS, &WZ, &YS, &YZ, &B};
  CHECK_OK(nnp_op_eval(t.n, 10, 9, in, 1, &Y));
  int64_t yd[4] = {1, M, OH, OW};
  CHECK(test_shape_is(&Y, 4, yd) && Y.dtype == NNP_U8);
  int sat = 0;
  for (int m = 0; Y.data && m < M; m++)
    for (int oy = 0; oy < OH; oy++)
      for (int ox = 0; ox < OW; ox++) {
        int32_t acc = bias[m];
        for (int c = 0; c < C; c++)
          for (int ky = 0; ky < K; ky++)
            for (int kx = 0; kx < K; kx++) {
              int iy = oy * 2 - 1 + ky, ix = ox * 2 - 1 + kx;
              if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
              acc += (x[(c * H + iy) * W + ix] - xz) * w[((m * C + c) * K + ky) * K + kx];
            }
        float v = rintf((float)acc * (xs * ws[m] / ys)) + yz;
        if (v < 0 || v > 255) sat++;
        v = v < 0 ? 0 : v > 255 ? 255 : v;
        uint8_t got = ((uint8_t *)Y.data)[(m * OH + oy) * OW + ox];
        CHECK_MSG(got == (uint8_t)v, "y[%d,%d,%d] = %d want %g (acc %d)", m, oy, ox, got, (double)v, acc);
      }
  CHECK_MSG(sat > 0, "the case should hit saturation");
  nnp_tensor_free(&Y);
  /* a uint8 bias is refused; a per-channel x scale is refused */
  nnp_tensor Bbad = test_tensor(NNP_U8, 1, md, x), o[1];
  in[8] = &Bbad;
  CHECK(nnp_op_infer(t.n, 10, 9, in, 1, o, NULL) == NNP_ERR_SHAPE);
  in[8] = &B;
  in[1] = &WS;
  CHECK(nnp_op_infer(t.n, 10, 9, in, 1, o, NULL) != NNP_OK);
  test_node_free(&t);
  test_free(10, &X, &Wt, &XS, &XZ, &WS, &WZ, &YS, &YZ, &B, &Bbad);
}

/* QLinearMatMul int8 x int8 -> int8 and MatMulInteger with per-row / per-column zps. */
static void test_qlinear_matmul(void) {
  enum { M = 3, K = 5, N = 4 };
  int8_t a[M * K], b[K * N];
  uint32_t seed = 9;
  for (int i = 0; i < M * K; i++) a[i] = (int8_t)(lcg(&seed) & 255);
  for (int i = 0; i < K * N; i++) b[i] = (int8_t)(lcg(&seed) & 255);
  a[0] = -128;
  b[0] = -128;
  float as = 0.1f, bs[N] = {0.01f, 0.02f, 0.002f, 0.05f}, ys = 0.3f;
  int8_t az = 3, bz[N] = {0, 0, 0, 0}, yz = -5;
  int64_t ad[2] = {M, K}, bd[2] = {K, N}, nd[1] = {N}, sd[1] = {0};
  nnp_tensor A = test_tensor(NNP_I8, 2, ad, a), Bt = test_tensor(NNP_I8, 2, bd, b);
  nnp_tensor AS = test_tensor(NNP_F32, 0, sd, &as), AZ = test_tensor(NNP_I8, 0, sd, &az);
  nnp_tensor BS = test_tensor(NNP_F32, 1, nd, bs), BZ = test_tensor(NNP_I8, 1, nd, bz);
  nnp_tensor YS = test_tensor(NNP_F32, 0, sd, &ys), YZ = test_tensor(NNP_I8, 0, sd, &yz), Y;
  test_node t = test_node_new("QLinearMatMul");
  const nnp_tensor *in[8] = {&A, &AS, &AZ, &Bt, &BS, &BZ, &YS, &YZ};
  CHECK_OK(nnp_op_eval(t.n, 10, 8, in, 1, &Y));
  for (int i = 0; Y.data && i < M; i++)
    for (int j = 0; j < N; j++) {
      int32_t acc = 0;
      for (int k = 0; k < K; k++) acc += (a[i * K + k] - az) * b[k * N + j];
      float v = rintf((float)acc * (as * bs[j] / ys)) + yz;
      v = v < -128 ? -128 : v > 127 ? 127 : v;
      CHECK_MSG(((int8_t *)Y.data)[i * N + j] == (int8_t)v, "y[%d,%d] = %d want %g", i, j, ((int8_t *)Y.data)[i * N + j], (double)v);
    }
  nnp_tensor_free(&Y);
  test_node_free(&t);
  /* MatMulInteger: uint8 A with per-row zp, int8 B with per-column zp -> exact int32 */
  uint8_t au[M * K], azr[M] = {0, 128, 255};
  int8_t bzc[N] = {-128, 0, 5, 127};
  for (int i = 0; i < M * K; i++) au[i] = (uint8_t)(lcg(&seed) & 255);
  int64_t md[1] = {M};
  nnp_tensor AU = test_tensor(NNP_U8, 2, ad, au), AZR = test_tensor(NNP_U8, 1, md, azr), BZC = test_tensor(NNP_I8, 1, nd, bzc);
  test_node mi = test_node_new("MatMulInteger");
  const nnp_tensor *min[4] = {&AU, &Bt, &AZR, &BZC};
  CHECK_OK(nnp_op_eval(mi.n, 10, 4, min, 1, &Y));
  CHECK(Y.dtype == NNP_I32);
  for (int i = 0; Y.data && i < M; i++)
    for (int j = 0; j < N; j++) {
      int32_t acc = 0;
      for (int k = 0; k < K; k++) acc += (au[i * K + k] - azr[i]) * (b[k * N + j] - bzc[j]);
      CHECK_MSG(((int32_t *)Y.data)[i * N + j] == acc, "mi[%d,%d] = %d want %d", i, j, ((int32_t *)Y.data)[i * N + j], acc);
    }
  nnp_tensor_free(&Y);
  /* a zero point of A's wrong type is refused */
  min[2] = &BZC;
  nnp_tensor o[1];
  CHECK(nnp_op_infer(mi.n, 10, 4, min, 1, o, NULL) != NNP_OK);
  test_node_free(&mi);
  test_free(11, &A, &Bt, &AS, &AZ, &BS, &BZ, &YS, &YZ, &AU, &AZR, &BZC);
}

static void test_dynamic_quantize(void) {
  static const float x[4] = {-1.0f, 0.0f, 2.0f, 0.5f};
  int64_t d[1] = {4};
  nnp_tensor X = test_tensor(NNP_F32, 1, d, x), Y[3];
  test_node t = test_node_new("DynamicQuantizeLinear");
  const nnp_tensor *in[1] = {&X};
  CHECK_OK(nnp_op_eval(t.n, 11, 1, in, 3, Y));
  float s = 3.0f / 255.0f;
  CHECK_NEAR(*(float *)Y[1].data, s, 1e-7);
  uint8_t zp = *(uint8_t *)Y[2].data;
  CHECK(zp == 85);
  CHECK(((uint8_t *)Y[0].data)[0] == 0 && ((uint8_t *)Y[0].data)[2] == 255 && ((uint8_t *)Y[0].data)[1] == 85);
  for (int i = 0; i < 3; i++) nnp_tensor_free(&Y[i]);
  test_node_free(&t);
  nnp_tensor_free(&X);
}

int main(void) {
  test_quantize_rounding_saturation();
  test_per_axis();
  test_dequantize_int32();
  test_qlinear_conv();
  test_qlinear_matmul();
  test_dynamic_quantize();
  TEST_MAIN_END();
}
