/* Conv and ConvTranspose: hand-computed cases from the ONNX operator docs, random
 * configurations cross-checked against a naive direct convolution, and the attribute
 * validation paths. */
#include "ops/op_test_util.h"

/* Runs node on inputs (NULL entries: omitted) and returns the status; on success
 * *y holds output 0 (caller frees). */
static nnp_status run1(test_node *t, int64_t opset, int n_in, const nnp_tensor *const *in, nnp_tensor *y) {
  nnp_tensor out[1];
  nnp_status s = nnp_op_eval(t->n, opset, n_in, in, 1, out);
  if (s == NNP_OK) *y = out[0];
  return s;
}

static void check_f32(const nnp_tensor *y, int rank, const int64_t *dims, const float *want, double tol,
                      const char *what) {
  bool shape_ok = y->rank == rank && y->dtype == NNP_F32;
  for (int i = 0; shape_ok && i < rank; i++) shape_ok = y->dims[i] == dims[i];
  CHECK_MSG(shape_ok, "%s: wrong output shape/type", what);
  if (!shape_ok) return;
  int64_t n = nnp_tensor_numel(y);
  double d = test_max_abs_diff(y, want, n);
  CHECK_MSG(d <= tol, "%s: max abs diff %g", what, d);
}

static void iota(float *x, int n) {
  for (int i = 0; i < n; i++) x[i] = (float)i;
}

/* ---------------------------------------------------------------------------------
 * Naive references (double accumulation, 3 spatial axes, leading ones for 1D/2D). */

typedef struct geom {
  int nsp;
  int64_t n, c, m, group;
  int64_t in[3], out[3], k[3], s[3], d[3], pb[3], pe[3];
} geom;

static void naive_conv(const geom *g, const float *x, const float *w, const float *b, float *y) {
  int64_t cg = g->c / g->group, mg = g->m / g->group;
  for (int64_t n = 0; n < g->n; n++)
    for (int64_t oc = 0; oc < g->m; oc++)
      for (int64_t od = 0; od < g->out[0]; od++)
        for (int64_t oh = 0; oh < g->out[1]; oh++)
          for (int64_t ow = 0; ow < g->out[2]; ow++) {
            double acc = b ? b[oc] : 0;
            int64_t gi = oc / mg;
            for (int64_t ic = 0; ic < cg; ic++)
              for (int64_t kd = 0; kd < g->k[0]; kd++)
                for (int64_t kh = 0; kh < g->k[1]; kh++)
                  for (int64_t kw = 0; kw < g->k[2]; kw++) {
                    int64_t id = od * g->s[0] - g->pb[0] + kd * g->d[0];
                    int64_t ih = oh * g->s[1] - g->pb[1] + kh * g->d[1];
                    int64_t iw = ow * g->s[2] - g->pb[2] + kw * g->d[2];
                    if (id < 0 || id >= g->in[0] || ih < 0 || ih >= g->in[1] || iw < 0 || iw >= g->in[2])
                      continue;
                    double xv = x[(((n * g->c + gi * cg + ic) * g->in[0] + id) * g->in[1] + ih) * g->in[2] + iw];
                    double wv = w[(((oc * cg + ic) * g->k[0] + kd) * g->k[1] + kh) * g->k[2] + kw];
                    acc += xv * wv;
                  }
            y[(((n * g->m + oc) * g->out[0] + od) * g->out[1] + oh) * g->out[2] + ow] = (float)acc;
          }
}

/* ConvTranspose by scattering; W is (C, M/group, k...). */
static void naive_convt(const geom *g, const float *x, const float *w, const float *b, float *y) {
  int64_t cg = g->c / g->group, mg = g->m / g->group;
  int64_t out_n = g->n * g->m * g->out[0] * g->out[1] * g->out[2];
  double *acc = calloc((size_t)out_n, sizeof(double));
  for (int64_t n = 0; n < g->n; n++)
    for (int64_t ic = 0; ic < g->c; ic++)
      for (int64_t id = 0; id < g->in[0]; id++)
        for (int64_t ih = 0; ih < g->in[1]; ih++)
          for (int64_t iw = 0; iw < g->in[2]; iw++) {
            double xv = x[(((n * g->c + ic) * g->in[0] + id) * g->in[1] + ih) * g->in[2] + iw];
            int64_t gi = ic / cg;
            for (int64_t ocg = 0; ocg < mg; ocg++)
              for (int64_t kd = 0; kd < g->k[0]; kd++)
                for (int64_t kh = 0; kh < g->k[1]; kh++)
                  for (int64_t kw = 0; kw < g->k[2]; kw++) {
                    int64_t od = id * g->s[0] - g->pb[0] + kd * g->d[0];
                    int64_t oh = ih * g->s[1] - g->pb[1] + kh * g->d[1];
                    int64_t ow = iw * g->s[2] - g->pb[2] + kw * g->d[2];
                    if (od < 0 || od >= g->out[0] || oh < 0 || oh >= g->out[1] || ow < 0 || ow >= g->out[2])
                      continue;
                    double wv = w[(((ic * mg + ocg) * g->k[0] + kd) * g->k[1] + kh) * g->k[2] + kw];
                    int64_t oc = gi * mg + ocg;
                    acc[(((n * g->m + oc) * g->out[0] + od) * g->out[1] + oh) * g->out[2] + ow] += xv * wv;
                  }
          }
  int64_t plane = g->out[0] * g->out[1] * g->out[2];
  for (int64_t i = 0; i < out_n; i++) y[i] = (float)(acc[i] + (b ? b[(i / plane) % g->m] : 0));
  free(acc);
}

/* ---------------------------------------------------------------------------------
 * Hand-computed Conv cases (ONNX operator documentation). */

static void test_conv_basic(void) {
  float x[25], w[9];
  iota(x, 25);
  for (int i = 0; i < 9; i++) w[i] = 1;
  int64_t xd[4] = {1, 1, 5, 5}, wd[4] = {1, 1, 3, 3};
  nnp_tensor X = test_tensor(NNP_F32, 4, xd, x), W = test_tensor(NNP_F32, 4, wd, w), Y;
  const nnp_tensor *in[2] = {&X, &W};

  { /* pads 1: same size */
    test_node t = test_node_new("Conv");
    int64_t ks[2] = {3, 3}, pads[4] = {1, 1, 1, 1};
    test_attr_ints(&t, "kernel_shape", 2, ks);
    test_attr_ints(&t, "pads", 4, pads);
    static const float want[25] = {12, 21, 27, 33, 24, 33, 54, 63, 72, 51, 63, 99, 108, 117, 81,
                                   93, 144, 153, 162, 111, 72, 111, 117, 123, 84};
    CHECK_OK(run1(&t, 11, 2, in, &Y));
    int64_t yd[4] = {1, 1, 5, 5};
    check_f32(&Y, 4, yd, want, 0, "conv pads 1");
    nnp_tensor_free(&Y);
    test_node_free(&t);
  }
  { /* no padding, kernel_shape absent (taken from W) */
    test_node t = test_node_new("Conv");
    static const float want[9] = {54, 63, 72, 99, 108, 117, 144, 153, 162};
    CHECK_OK(run1(&t, 11, 2, in, &Y));
    int64_t yd[4] = {1, 1, 3, 3};
    check_f32(&Y, 4, yd, want, 0, "conv no pads");
    nnp_tensor_free(&Y);
    test_node_free(&t);
  }
  { /* SAME_LOWER, stride 2 */
    test_node t = test_node_new("Conv");
    int64_t st[2] = {2, 2};
    test_attr_string(&t, "auto_pad", "SAME_LOWER");
    test_attr_ints(&t, "strides", 2, st);
    static const float want[9] = {12, 27, 24, 63, 108, 81, 72, 117, 84};
    CHECK_OK(run1(&t, 11, 2, in, &Y));
    int64_t yd[4] = {1, 1, 3, 3};
    check_f32(&Y, 4, yd, want, 0, "conv SAME_LOWER");
    nnp_tensor_free(&Y);
    test_node_free(&t);
  }
  { /* VALID ignores pads */
    test_node t = test_node_new("Conv");
    int64_t pads[4] = {1, 1, 1, 1};
    test_attr_string(&t, "auto_pad", "VALID");
    test_attr_ints(&t, "pads", 4, pads);
    CHECK_OK(run1(&t, 11, 2, in, &Y));
    CHECK(Y.dims[2] == 3 && Y.dims[3] == 3);
    nnp_tensor_free(&Y);
    test_node_free(&t);
  }
  nnp_tensor_free(&X);
  nnp_tensor_free(&W);

  { /* strides 2 with asymmetric padding on a 7x5 input */
    float x2[35];
    iota(x2, 35);
    int64_t xd2[4] = {1, 1, 7, 5};
    nnp_tensor X2 = test_tensor(NNP_F32, 4, xd2, x2), W2 = test_tensor(NNP_F32, 4, wd, w);
    const nnp_tensor *in2[2] = {&X2, &W2};
    test_node t = test_node_new("Conv");
    int64_t pads[4] = {1, 0, 1, 0}, st[2] = {2, 2};
    test_attr_ints(&t, "pads", 4, pads);
    test_attr_ints(&t, "strides", 2, st);
    static const float want[8] = {21, 33, 99, 117, 189, 207, 171, 183};
    CHECK_OK(run1(&t, 11, 2, in2, &Y));
    int64_t yd[4] = {1, 1, 4, 2};
    check_f32(&Y, 4, yd, want, 0, "conv asymmetric pads");
    nnp_tensor_free(&Y);
    test_node_free(&t);
    nnp_tensor_free(&X2);
    nnp_tensor_free(&W2);
  }
}

static void test_conv_groups_bias_dilation(void) {
  { /* 1D, group 2, bias */
    static const float x[6] = {1, 2, 3, 4, 5, 6}, w[4] = {1, 1, 1, -1}, b[2] = {10, 20};
    int64_t xd[3] = {1, 2, 3}, wd[3] = {2, 1, 2}, bd[1] = {2};
    nnp_tensor X = test_tensor(NNP_F32, 3, xd, x), W = test_tensor(NNP_F32, 3, wd, w),
               B = test_tensor(NNP_F32, 1, bd, b), Y;
    const nnp_tensor *in[3] = {&X, &W, &B};
    test_node t = test_node_new("Conv");
    test_attr_int(&t, "group", 2);
    static const float want[4] = {13, 15, 19, 19};
    CHECK_OK(run1(&t, 11, 3, in, &Y));
    int64_t yd[3] = {1, 2, 2};
    check_f32(&Y, 3, yd, want, 0, "conv 1D group 2 bias");
    nnp_tensor_free(&Y);
    /* omitted optional bias (NULL entry) */
    const nnp_tensor *in_nob[3] = {&X, &W, NULL};
    static const float want_nob[4] = {3, 5, -1, -1};
    CHECK_OK(run1(&t, 11, 3, in_nob, &Y));
    check_f32(&Y, 3, yd, want_nob, 0, "conv omitted bias");
    nnp_tensor_free(&Y);
    test_node_free(&t);
    nnp_tensor_free(&X);
    nnp_tensor_free(&W);
    nnp_tensor_free(&B);
  }
  { /* 1D, dilation 2: y[i] = x[i] + 10 x[i+2] */
    static const float x[5] = {1, 2, 3, 4, 5}, w[2] = {1, 10};
    int64_t xd[3] = {1, 1, 5}, wd[3] = {1, 1, 2};
    nnp_tensor X = test_tensor(NNP_F32, 3, xd, x), W = test_tensor(NNP_F32, 3, wd, w), Y;
    const nnp_tensor *in[2] = {&X, &W};
    test_node t = test_node_new("Conv");
    int64_t dil[1] = {2};
    test_attr_ints(&t, "dilations", 1, dil);
    static const float want[3] = {31, 42, 53};
    CHECK_OK(run1(&t, 11, 2, in, &Y));
    int64_t yd[3] = {1, 1, 3};
    check_f32(&Y, 3, yd, want, 0, "conv 1D dilation");
    nnp_tensor_free(&Y);
    test_node_free(&t);
    nnp_tensor_free(&X);
    nnp_tensor_free(&W);
  }
  { /* float64 path */
    static const double x[4] = {1, 2, 3, 4}, w[2] = {0.5, -1};
    int64_t xd[3] = {1, 1, 4}, wd[3] = {1, 1, 2};
    nnp_tensor X = test_tensor(NNP_F64, 3, xd, x), W = test_tensor(NNP_F64, 3, wd, w), Y;
    const nnp_tensor *in[2] = {&X, &W};
    test_node t = test_node_new("Conv");
    CHECK_OK(run1(&t, 11, 2, in, &Y));
    CHECK(Y.dtype == NNP_F64 && Y.dims[2] == 3);
    if (Y.dtype == NNP_F64) {
      const double *y = Y.data;
      CHECK(y[0] == -1.5 && y[1] == -2 && y[2] == -2.5);
    }
    nnp_tensor_free(&Y);
    test_node_free(&t);
    nnp_tensor_free(&X);
    nnp_tensor_free(&W);
  }
}

/* One random Conv or ConvTranspose configuration against the naive reference. */
static void random_case(bool transpose, int nsp, int64_t n, int64_t c, int64_t m, int64_t group,
                        const int64_t *in, const int64_t *k, const int64_t *s, const int64_t *d,
                        const int64_t *pads, const int64_t *opad, bool bias, unsigned seed) {
  geom g = {.nsp = nsp, .n = n, .c = c, .m = m, .group = group};
  int off = 3 - nsp;
  for (int i = 0; i < 3; i++) {
    bool r = i >= off;
    g.in[i] = r ? in[i - off] : 1;
    g.k[i] = r ? k[i - off] : 1;
    g.s[i] = r ? s[i - off] : 1;
    g.d[i] = r ? d[i - off] : 1;
    g.pb[i] = r ? pads[i - off] : 0;
    g.pe[i] = r ? pads[i - off + nsp] : 0;
    int64_t ek = (g.k[i] - 1) * g.d[i] + 1;
    g.out[i] = transpose ? g.s[i] * (g.in[i] - 1) + (r ? opad[i - off] : 0) + ek - g.pb[i] - g.pe[i]
                         : (g.in[i] + g.pb[i] + g.pe[i] - ek) / g.s[i] + 1;
  }
  int64_t xd[5] = {n, c}, wd[5], yd[5] = {n, m}, bd[1] = {m};
  wd[0] = transpose ? c : m;
  wd[1] = transpose ? m / group : c / group;
  for (int i = 0; i < nsp; i++) {
    xd[2 + i] = in[i];
    wd[2 + i] = k[i];
    yd[2 + i] = g.out[off + i];
  }
  nnp_tensor X = test_tensor(NNP_F32, 2 + nsp, xd, NULL), W = test_tensor(NNP_F32, 2 + nsp, wd, NULL),
             B = test_tensor(NNP_F32, 1, bd, NULL), Y;
  test_fill_uniform(X.data, nnp_tensor_numel(&X), -1, 1, seed);
  test_fill_uniform(W.data, nnp_tensor_numel(&W), -1, 1, seed + 1);
  test_fill_uniform(B.data, m, -1, 1, seed + 2);
  test_node t = test_node_new(transpose ? "ConvTranspose" : "Conv");
  test_attr_ints(&t, "strides", nsp, s);
  test_attr_ints(&t, "dilations", nsp, d);
  test_attr_ints(&t, "pads", 2 * nsp, pads);
  test_attr_ints(&t, "kernel_shape", nsp, k);
  test_attr_int(&t, "group", group);
  if (transpose) test_attr_ints(&t, "output_padding", nsp, opad);
  const nnp_tensor *inp[3] = {&X, &W, bias ? &B : NULL};
  nnp_status st = run1(&t, 13, 3, inp, &Y);
  CHECK_MSG(st == NNP_OK, "%s random seed %u: %s", transpose ? "ConvTranspose" : "Conv", seed,
            nnp_last_error());
  if (st == NNP_OK) {
    int64_t cnt = n * m * g.out[0] * g.out[1] * g.out[2];
    float *want = malloc(sizeof(float) * (size_t)(cnt ? cnt : 1));
    if (transpose) naive_convt(&g, X.data, W.data, bias ? B.data : NULL, want);
    else naive_conv(&g, X.data, W.data, bias ? B.data : NULL, want);
    char what[64];
    snprintf(what, sizeof what, "%s random seed %u", transpose ? "ConvTranspose" : "Conv", seed);
    check_f32(&Y, 2 + nsp, yd, want, 1e-4, what);
    free(want);
    nnp_tensor_free(&Y);
  }
  test_node_free(&t);
  nnp_tensor_free(&X);
  nnp_tensor_free(&W);
  nnp_tensor_free(&B);
}

static int64_t rnd(uint64_t *s, int64_t lo, int64_t hi) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return lo + (int64_t)((*s >> 11) % (uint64_t)(hi - lo + 1));
}

static void test_random(void) {
  uint64_t st = 0x1234567;
  for (unsigned it = 0; it < 120; it++) {
    bool transpose = it % 3 == 2;
    int nsp = 1 + (int)(it % 3 == 0 ? 0 : rnd(&st, 0, 2));
    int64_t group = rnd(&st, 1, 3);
    int64_t c = group * rnd(&st, 1, 3), m = group * rnd(&st, 1, 3), n = rnd(&st, 1, 2);
    int64_t in[3], k[3], s[3], d[3], pads[6], opad[3];
    for (int i = 0; i < nsp; i++) {
      k[i] = rnd(&st, 1, 4);
      s[i] = rnd(&st, 1, 3);
      d[i] = rnd(&st, 1, 2);
      int64_t ek = (k[i] - 1) * d[i] + 1;
      in[i] = rnd(&st, transpose ? 1 : ek, ek + 8);
      pads[i] = rnd(&st, 0, k[i] - 1);
      pads[i + nsp] = rnd(&st, 0, k[i] - 1);
      opad[i] = rnd(&st, 0, s[i] - 1);
    }
    if (it % 11 == 0 && !transpose) /* 1x1, unit strides, no padding: the direct GEMM path */
      for (int i = 0; i < nsp; i++) k[i] = s[i] = 1, pads[i] = pads[i + nsp] = 0;
    random_case(transpose, nsp, n, c, m, group, in, k, s, d, pads, opad, it % 4 != 1, it);
  }
  { /* a large depthwise conv, and a conv whose column buffer needs several chunks of rows */
    int64_t in[2] = {120, 120}, k[2] = {3, 3}, s[2] = {1, 1}, d[2] = {1, 1}, pads[4] = {1, 1, 1, 1};
    random_case(false, 2, 1, 4, 4, 4, in, k, s, d, pads, NULL, true, 999);
    int64_t in2[2] = {40, 50};
    random_case(false, 2, 2, 64, 8, 1, in2, k, s, d, pads, NULL, true, 1000);
  }
}

/* ---------------------------------------------------------------------------------
 * ConvTranspose hand-computed cases */

static void test_convt_basic(void) {
  float x[9], w[18];
  iota(x, 9);
  for (int i = 0; i < 18; i++) w[i] = 1;
  int64_t xd[4] = {1, 1, 3, 3}, wd[4] = {1, 2, 3, 3};
  nnp_tensor X = test_tensor(NNP_F32, 4, xd, x), W = test_tensor(NNP_F32, 4, wd, w), Y;
  const nnp_tensor *in[2] = {&X, &W};
  {
    test_node t = test_node_new("ConvTranspose");
    static const float plane[25] = {0, 1, 3, 3, 2, 3, 8, 15, 12, 7, 9, 21, 36, 27, 15,
                                    9, 20, 33, 24, 13, 6, 13, 21, 15, 8};
    float want[50];
    memcpy(want, plane, sizeof plane);
    memcpy(want + 25, plane, sizeof plane);
    CHECK_OK(run1(&t, 11, 2, in, &Y));
    int64_t yd[4] = {1, 2, 5, 5};
    check_f32(&Y, 4, yd, want, 0, "convtranspose basic");
    nnp_tensor_free(&Y);
    test_node_free(&t);
  }
  { /* output_padding with strides: 3*(3-1)+1+3 = 10, 2*(3-1)+1+3 = 8 */
    test_node t = test_node_new("ConvTranspose");
    int64_t st[2] = {3, 2}, op[2] = {1, 1};
    test_attr_ints(&t, "strides", 2, st);
    test_attr_ints(&t, "output_padding", 2, op);
    CHECK_OK(run1(&t, 11, 2, in, &Y));
    CHECK(Y.rank == 4 && Y.dims[2] == 10 && Y.dims[3] == 8);
    nnp_tensor_free(&Y);
    test_node_free(&t);
  }
  { /* output_shape larger than the full result: zeros at the end */
    test_node t = test_node_new("ConvTranspose");
    int64_t st[2] = {3, 2}, os[2] = {10, 8};
    test_attr_ints(&t, "strides", 2, st);
    test_attr_ints(&t, "output_shape", 2, os);
    CHECK_OK(run1(&t, 11, 2, in, &Y));
    CHECK(Y.rank == 4 && Y.dims[2] == 10 && Y.dims[3] == 8);
    if (Y.rank == 4) {
      const float *y = Y.data;
      CHECK(y[9 * 8 + 0] == 0 && y[7] == 0); /* last row, last column */
      CHECK(y[0] == 0 && y[1] == 0 && y[8 * 1 + 0] == 0);
      CHECK(y[2 * 8 + 2] == 1); /* (2, 2) = x[0][0] (kw 2) + x[0][1] (kw 0) = 0 + 1 */
    }
    nnp_tensor_free(&Y);
    test_node_free(&t);
  }
  { /* pads: 3*2+3-2 = 7, 2*2+3-4 = 3 */
    test_node t = test_node_new("ConvTranspose");
    int64_t st[2] = {3, 2}, pads[4] = {1, 2, 1, 2};
    test_attr_ints(&t, "strides", 2, st);
    test_attr_ints(&t, "pads", 4, pads);
    CHECK_OK(run1(&t, 11, 2, in, &Y));
    CHECK(Y.rank == 4 && Y.dims[2] == 7 && Y.dims[3] == 3);
    nnp_tensor_free(&Y);
    test_node_free(&t);
  }
  { /* SAME_UPPER, stride 2: output in*s, total padding 1 goes to the end */
    test_node t = test_node_new("ConvTranspose");
    int64_t st[2] = {2, 2};
    test_attr_ints(&t, "strides", 2, st);
    test_attr_string(&t, "auto_pad", "SAME_UPPER");
    CHECK_OK(run1(&t, 11, 2, in, &Y));
    CHECK(Y.rank == 4 && Y.dims[2] == 6 && Y.dims[3] == 6);
    if (Y.rank == 4) CHECK(((const float *)Y.data)[0] == 0 && ((const float *)Y.data)[1] == 0 &&
                           ((const float *)Y.data)[2] == 1);
    nnp_tensor_free(&Y);
    test_node_free(&t);
  }
  { /* full N, C, H, W output_shape is accepted */
    test_node t = test_node_new("ConvTranspose");
    int64_t os[4] = {1, 2, 5, 5};
    test_attr_ints(&t, "output_shape", 4, os);
    CHECK_OK(run1(&t, 11, 2, in, &Y));
    CHECK(Y.rank == 4 && Y.dims[2] == 5 && Y.dims[3] == 5);
    nnp_tensor_free(&Y);
    test_node_free(&t);
  }
  nnp_tensor_free(&X);
  nnp_tensor_free(&W);

  { /* 1D */
    static const float x1[3] = {0, 1, 2}, w1[6] = {1, 1, 1, 1, 1, 1};
    int64_t xd1[3] = {1, 1, 3}, wd1[3] = {1, 2, 3};
    nnp_tensor X1 = test_tensor(NNP_F32, 3, xd1, x1), W1 = test_tensor(NNP_F32, 3, wd1, w1);
    const nnp_tensor *in1[2] = {&X1, &W1};
    test_node t = test_node_new("ConvTranspose");
    static const float want[10] = {0, 1, 3, 3, 2, 0, 1, 3, 3, 2};
    CHECK_OK(run1(&t, 11, 2, in1, &Y));
    int64_t yd[3] = {1, 2, 5};
    check_f32(&Y, 3, yd, want, 0, "convtranspose 1D");
    nnp_tensor_free(&Y);
    test_node_free(&t);
    nnp_tensor_free(&X1);
    nnp_tensor_free(&W1);
  }
}

/* ---------------------------------------------------------------------------------
 * Validation: every bad attribute fails at infer time with the right status. */

static nnp_status infer_status(test_node *t, int n_in, const nnp_tensor *const *in) {
  nnp_tensor out[1];
  return nnp_op_infer(t->n, 13, n_in, in, 1, out, NULL);
}

static void test_errors(void) {
  int64_t xd[4] = {1, 4, 5, 5}, wd[4] = {2, 4, 3, 3};
  nnp_tensor X = {.dtype = NNP_F32, .rank = 4, .dims = {1, 4, 5, 5}};
  nnp_tensor W = {.dtype = NNP_F32, .rank = 4, .dims = {2, 4, 3, 3}};
  (void)xd;
  (void)wd;
  const nnp_tensor *in[2] = {&X, &W};
  struct {
    const char *attr;
    int n;
    int64_t v[6];
    nnp_status want;
  } ints_cases[] = {
      {"strides", 2, {0, 1}, NNP_ERR_SHAPE},
      {"strides", 2, {-1, 1}, NNP_ERR_SHAPE},
      {"strides", 3, {1, 1, 1}, NNP_ERR_SHAPE},
      {"dilations", 2, {1, 0}, NNP_ERR_SHAPE},
      {"dilations", 2, {1, (int64_t)1 << 40}, NNP_ERR_SHAPE},
      {"pads", 2, {1, 1}, NNP_ERR_SHAPE},
      {"pads", 4, {1, -1, 1, 1}, NNP_ERR_SHAPE},
      {"pads", 4, {1, 1, 1, INT64_MAX}, NNP_ERR_SHAPE},
      {"kernel_shape", 2, {3, 2}, NNP_ERR_SHAPE},
      {"kernel_shape", 1, {3}, NNP_ERR_SHAPE},
      {"dilations", 2, {3, 3}, NNP_ERR_SHAPE}, /* extent 7 > 5 */
  };
  for (size_t i = 0; i < sizeof ints_cases / sizeof ints_cases[0]; i++) {
    test_node t = test_node_new("Conv");
    test_attr_ints(&t, ints_cases[i].attr, ints_cases[i].n, ints_cases[i].v);
    nnp_status s = infer_status(&t, 2, in);
    CHECK_MSG(s == ints_cases[i].want, "Conv %s case %zu -> %s", ints_cases[i].attr, i, nnp_status_name(s));
    test_node_free(&t);
  }
  {
    test_node t = test_node_new("Conv");
    test_attr_string(&t, "auto_pad", "SAME");
    CHECK(infer_status(&t, 2, in) == NNP_ERR_UNSUPPORTED);
    test_node_free(&t);
  }
  int64_t groups[] = {0, -1, 3, 8};
  for (int i = 0; i < 4; i++) {
    test_node t = test_node_new("Conv");
    test_attr_int(&t, "group", groups[i]);
    CHECK(infer_status(&t, 2, in) == NNP_ERR_SHAPE);
    test_node_free(&t);
  }
  { /* W channel mismatch, bias size, types, ranks */
    test_node t = test_node_new("Conv");
    nnp_tensor W2 = W;
    W2.dims[1] = 3;
    const nnp_tensor *in2[2] = {&X, &W2};
    CHECK(infer_status(&t, 2, in2) == NNP_ERR_SHAPE);
    nnp_tensor B = {.dtype = NNP_F32, .rank = 1, .dims = {3}};
    const nnp_tensor *in3[3] = {&X, &W, &B};
    CHECK(infer_status(&t, 3, in3) == NNP_ERR_SHAPE);
    nnp_tensor Xi = X;
    Xi.dtype = NNP_I32;
    const nnp_tensor *in4[2] = {&Xi, &W};
    CHECK(infer_status(&t, 2, in4) == NNP_ERR_UNSUPPORTED);
    nnp_tensor Wd = W;
    Wd.dtype = NNP_F64;
    const nnp_tensor *in5[2] = {&X, &Wd};
    CHECK(infer_status(&t, 2, in5) == NNP_ERR_SHAPE);
    nnp_tensor X6 = {.dtype = NNP_F32, .rank = 6, .dims = {1, 4, 2, 2, 2, 2}};
    nnp_tensor W6 = {.dtype = NNP_F32, .rank = 6, .dims = {2, 4, 1, 1, 1, 1}};
    const nnp_tensor *in6[2] = {&X6, &W6};
    CHECK(infer_status(&t, 2, in6) == NNP_ERR_UNSUPPORTED);
    nnp_tensor X2d = {.dtype = NNP_F32, .rank = 2, .dims = {1, 4}};
    const nnp_tensor *in7[2] = {&X2d, &W};
    CHECK(infer_status(&t, 2, in7) == NNP_ERR_UNSUPPORTED);
    nnp_tensor W3 = {.dtype = NNP_F32, .rank = 3, .dims = {2, 4, 3}};
    const nnp_tensor *in8[2] = {&X, &W3};
    CHECK(infer_status(&t, 2, in8) == NNP_ERR_SHAPE);
    nnp_tensor Wbig = W; /* kernel larger than the input */
    Wbig.dims[2] = 6;
    const nnp_tensor *in9[2] = {&X, &Wbig};
    CHECK(infer_status(&t, 2, in9) == NNP_ERR_SHAPE);
    nnp_tensor W0 = W;
    W0.dims[3] = 0;
    const nnp_tensor *in10[2] = {&X, &W0};
    CHECK(infer_status(&t, 2, in10) == NNP_ERR_SHAPE);
    const nnp_tensor *in11[2] = {&X, NULL};
    CHECK(infer_status(&t, 2, in11) != NNP_OK); /* required input omitted */
    test_node_free(&t);
  }
  { /* output shape and scratch from infer */
    test_node t = test_node_new("Conv");
    int64_t pads[4] = {1, 1, 1, 1};
    test_attr_ints(&t, "pads", 4, pads);
    nnp_tensor out[1];
    size_t scratch = 0;
    CHECK_OK(nnp_op_infer(t.n, 13, 2, in, 1, out, &scratch));
    CHECK(out[0].rank == 4 && out[0].dims[0] == 1 && out[0].dims[1] == 2 && out[0].dims[2] == 5 &&
          out[0].dims[3] == 5);
    CHECK(scratch > 0);
    test_node_free(&t);
  }
  /* ConvTranspose */
  {
    nnp_tensor Xt = {.dtype = NNP_F32, .rank = 4, .dims = {1, 4, 3, 3}};
    nnp_tensor Wt = {.dtype = NNP_F32, .rank = 4, .dims = {4, 2, 3, 3}};
    const nnp_tensor *int_[2] = {&Xt, &Wt};
    {
      test_node t = test_node_new("ConvTranspose");
      int64_t os[3] = {5, 5, 5};
      test_attr_ints(&t, "output_shape", 3, os);
      CHECK(infer_status(&t, 2, int_) == NNP_ERR_SHAPE);
      test_node_free(&t);
    }
    {
      test_node t = test_node_new("ConvTranspose");
      int64_t os[2] = {-5, 5};
      test_attr_ints(&t, "output_shape", 2, os);
      CHECK(infer_status(&t, 2, int_) == NNP_ERR_SHAPE);
      test_node_free(&t);
    }
    {
      test_node t = test_node_new("ConvTranspose");
      int64_t op[2] = {-1, 0};
      test_attr_ints(&t, "output_padding", 2, op);
      CHECK(infer_status(&t, 2, int_) == NNP_ERR_SHAPE);
      test_node_free(&t);
    }
    {
      test_node t = test_node_new("ConvTranspose");
      int64_t pads[4] = {3, 3, 3, 3}; /* full size 5, pads 6 */
      test_attr_ints(&t, "pads", 4, pads);
      CHECK(infer_status(&t, 2, int_) == NNP_ERR_SHAPE);
      test_node_free(&t);
    }
    {
      test_node t = test_node_new("ConvTranspose");
      test_attr_int(&t, "group", 3);
      CHECK(infer_status(&t, 2, int_) == NNP_ERR_SHAPE);
      test_node_free(&t);
    }
    {
      test_node t = test_node_new("ConvTranspose");
      int64_t st[2] = {(int64_t)1 << 31, 1};
      test_attr_ints(&t, "strides", 2, st);
      /* 2^32 + 3 rows: a valid shape, but far beyond the tensor size limit */
      CHECK(infer_status(&t, 2, int_) == NNP_ERR_LIMIT);
      test_node_free(&t);
    }
    {
      test_node t = test_node_new("ConvTranspose");
      nnp_tensor Wbad = Wt;
      Wbad.dims[0] = 3;
      const nnp_tensor *inb[2] = {&Xt, &Wbad};
      CHECK(infer_status(&t, 2, inb) == NNP_ERR_SHAPE);
      test_node_free(&t);
    }
  }
}

int main(void) {
  test_conv_basic();
  test_conv_groups_bias_dilation();
  test_convt_basic();
  test_random();
  test_errors();
  TEST_MAIN_END();
}
