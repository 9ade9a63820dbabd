/* Calibrators: histogram growth keeps every count, percentile of a uniform
 * distribution, the entropy threshold of a Gaussian with far outliers (clips them, keeps
 * the body), of a uniform and a ReLU'd Gaussian, calibration
 * tables round-trip bit-exactly and hostile tables are refused, per-channel weight
 * scales, and a calibration run over a small Conv-Relu-Conv graph. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "nnperf/alloc.h"
#include "nnperf/npy.h"
#include "ops/op.h"
#include "quant/calibrate.h"
#include "test.h"

static uint64_t rng_state = 12345;
static double urand(void) { /* [0, 1) */
  rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(rng_state >> 11) * 0x1.0p-53;
}
static float gauss(void) {
  double u = urand(), v = urand();
  return (float)(sqrt(-2.0 * log(u + 1e-300)) * cos(2 * M_PI * v));
}

static nnp_hist h; /* 16 KiB: not on the stack */

static void test_hist_growth(void) {
  nnp_hist_init(&h);
  float x[5] = {0.1f, -0.2f, 3.0f, NAN, 1000.0f};
  nnp_hist_add(&h, x, 3);
  CHECK(h.count == 3 && h.range > 0.2);
  nnp_hist_add(&h, x + 3, 2); /* forces many doublings */
  CHECK(h.count == 4 && h.nonfinite == 1);
  CHECK(h.range > 1000.0);
  uint64_t sum = 0;
  for (int i = 0; i < NNP_HIST_BINS; i++) sum += h.bins[i];
  CHECK(sum == 4);
  CHECK(h.min == -0.2f && h.max == 1000.0);
  CHECK(h.bins[NNP_HIST_BINS - 1] == 0 || h.range >= 1000.0);
}

static void test_percentile_uniform(void) {
  nnp_hist_init(&h);
  enum { N = 400000 };
  static float x[N];
  for (int i = 0; i < N; i++) x[i] = (float)urand();
  nnp_hist_add(&h, x, N);
  double bw = h.range / NNP_HIST_BINS;
  CHECK_NEAR(nnp_hist_percentile(&h, 50.0), 0.5, 2 * bw + 0.005);
  CHECK_NEAR(nnp_hist_percentile(&h, 99.99), 0.9999, 2 * bw + 0.001);
  float lo, hi;
  nnp_calib_range(&h, NNP_CALIBRATOR_PERCENTILE, 90.0, &lo, &hi);
  CHECK(lo >= 0 && fabs(hi - 0.9) < 0.01);
  nnp_calib_range(&h, NNP_CALIBRATOR_MINMAX, 0, &lo, &hi);
  CHECK(lo == h.min && hi == h.max);
}

static void test_entropy(void) {
  /* N(0, 1) with a handful of outliers at +-40: min-max would spend 8 bits on [-40, 40]
   * (a step of 0.3: the body gets ~20 levels). The KL threshold must clip the outliers
   * and keep the body (published TensorRT thresholds for Gaussian-like activations lie
   * around 3-5 sigma). */
  nnp_hist_init(&h);
  enum { N = 300000 };
  static float x[N];
  for (int i = 0; i < N; i++) x[i] = gauss();
  for (int i = 0; i < 8; i++) x[i * 1000] = i % 2 ? 40.0f : -40.0f;
  nnp_hist_add(&h, x, N);
  double t = nnp_hist_entropy_threshold(&h, NNP_ENTROPY_LEVELS);
  CHECK_MSG(t > 2.0 && t < 8.0, "entropy threshold %g for N(0,1) + outliers at 40", t);
  float lo, hi;
  nnp_calib_range(&h, NNP_CALIBRATOR_ENTROPY, 0, &lo, &hi);
  CHECK(fabsf(hi - (float)t) < 1e-5 && fabsf(lo + (float)t) < 1e-5);
  nnp_calib_range(&h, NNP_CALIBRATOR_MINMAX, 0, &lo, &hi);
  CHECK(hi == 40.0f && lo == -40.0f);
  printf("entropy threshold of N(0,1)+outliers: %.3f (percentile 99.99: %.3f)\n", t, nnp_hist_percentile(&h, 99.99));
  /* uniform |x|: every level is used, clipping only loses -> threshold near the max */
  nnp_hist_init(&h);
  for (int i = 0; i < N; i++) x[i] = (float)(2 * urand() - 1);
  nnp_hist_add(&h, x, N);
  t = nnp_hist_entropy_threshold(&h, NNP_ENTROPY_LEVELS);
  CHECK_MSG(t > 0.85 && t <= h.range + 1e-9, "entropy threshold %g for U(-1, 1)", t);
  /* ReLU(N(0, 1)): one-sided, the same body to keep */
  nnp_hist_init(&h);
  for (int i = 0; i < N; i++) x[i] = fmaxf(0.0f, gauss());
  x[17] = 25.0f;
  nnp_hist_add(&h, x, N);
  t = nnp_hist_entropy_threshold(&h, NNP_ENTROPY_LEVELS);
  CHECK_MSG(t > 2.0 && t < 8.0, "entropy threshold %g for ReLU(N(0,1)) + an outlier at 25", t);
  nnp_calib_range(&h, NNP_CALIBRATOR_ENTROPY, 0, &lo, &hi);
  CHECK(lo == 0.0f && hi < 8.0f);
  /* The spike of exact zeros a ReLU leaves must not drag the threshold down: the same
   * heavy-tailed positive values (|N|^2, as products of activations give) with and
   * without 3x as many zeros get about the same threshold. */
  nnp_hist_init(&h);
  int nz = 0;
  for (int i = 0; i < N / 4; i++) {
    float g = gauss();
    x[nz++] = g * g;
  }
  nnp_hist_add(&h, x, nz);
  double t_nonzero = nnp_hist_entropy_threshold(&h, NNP_ENTROPY_LEVELS);
  for (int i = 0; i < 3 * (N / 4); i++) x[i] = 0.0f;
  nnp_hist_add(&h, x, 3 * (N / 4));
  double t_zeros = nnp_hist_entropy_threshold(&h, NNP_ENTROPY_LEVELS);
  printf("entropy threshold of |N|^2: %.3f, with 75%% zeros: %.3f\n", t_nonzero, t_zeros);
  CHECK_MSG(t_zeros > 0.75 * t_nonzero, "zeros moved the threshold from %g to %g", t_nonzero, t_zeros);
}

static void test_table_roundtrip(void) {
  nnp_calib_table t = {NNP_CALIBRATOR_ENTROPY, 7, 0, NULL}, r;
  t.entries = nnp_calloc(2, sizeof *t.entries);
  t.n = 2;
  t.entries[0] = (nnp_calib_entry){nnp_strdup("conv1.out"), -1.0f / 3.0f, 7.123456789f};
  t.entries[1] = (nnp_calib_entry){nnp_strdup("name with spaces"), 0.0f, 1e-30f};
  char path[] = "/tmp/nnp_calib_table_XXXXXX";
  int fd = mkstemp(path);
  close(fd);
  CHECK_OK(nnp_calib_table_save(&t, path));
  CHECK_OK(nnp_calib_table_load(path, &r));
  CHECK(r.n == 2 && r.samples == 7 && r.calibrator == NNP_CALIBRATOR_ENTROPY);
  const nnp_calib_entry *e = nnp_calib_table_find(&r, "name with spaces");
  CHECK(e && e->hi == 1e-30f && e->lo == 0.0f);
  e = nnp_calib_table_find(&r, "conv1.out");
  CHECK(e && e->lo == -1.0f / 3.0f && e->hi == 7.123456789f);
  CHECK(nnp_calib_table_find(&r, "conv1") == NULL);
  nnp_calib_table_free(&r);
  nnp_calib_table_free(&t);
  static const char *const bad[] = {
      "",
      "something else\n",
      "nnperf-calibration-table 99\n",
      "nnperf-calibration-table 1\nrange 1 0 x\n",
      "nnperf-calibration-table 1\nrange 0 1\n",
      "nnperf-calibration-table 1\nrange 0 nan x\n",
      "nnperf-calibration-table 1\ncalibrator kmeans\n",
      "nnperf-calibration-table 1\nbogus line\n",
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    FILE *f = fopen(path, "w");
    fputs(bad[i], f);
    fclose(f);
    nnp_status s = nnp_calib_table_load(path, &r);
    CHECK_MSG(s != NNP_OK, "bad table %zu accepted", i);
  }
  unlink(path);
  CHECK(nnp_calib_table_load("/nonexistent/table", &r) == NNP_ERR_IO);
}

static void test_weight_scales(void) {
  float w[2 * 3] = {1, -4, 2, 0, 0, 0};
  nnp_tensor t = {NNP_F32, 2, {2, 3}, w};
  float s[3];
  CHECK_OK(nnp_weight_scales(&t, 0, s));
  CHECK(s[0] == 4.0f / 127.0f && s[1] == 1.0f);
  CHECK_OK(nnp_weight_scales(&t, 1, s));
  CHECK(s[0] == 1.0f / 127.0f && s[1] == 4.0f / 127.0f && s[2] == 2.0f / 127.0f);
  CHECK(nnp_weight_scales(&t, 2, s) == NNP_ERR_INVALID);
}

/* Conv(X, W1) -> Y, Relu(Y) -> Z, Conv(Z, W2) -> O. */
static nnp_graph *small_graph(void) {
  nnp_graph *g;
  if (nnp_graph_create(&g) != NNP_OK) return NULL;
  g->opset = 13;
  int x, w1, y, z, w2, o;
  nnp_graph_value(g, "X", &x);
  nnp_graph_value(g, "W1", &w1);
  nnp_graph_value(g, "Y", &y);
  nnp_graph_value(g, "Z", &z);
  nnp_graph_value(g, "W2", &w2);
  nnp_graph_value(g, "O", &o);
  nnp_value *vx = &g->values[x];
  vx->kind = NNP_VALUE_INPUT;
  vx->dtype = NNP_F32;
  vx->rank = 4;
  int64_t xd[4] = {1, 2, 3, 3};
  for (int i = 0; i < 4; i++) vx->dims[i].value = xd[i];
  nnp_graph_add_input(g, x);
  static const float w1v[4] = {1, -1, 0.5f, 2}, w2v[4] = {1, 1, -1, 0.25f};
  int ws[2] = {w1, w2};
  const float *wv[2] = {w1v, w2v};
  for (int k = 0; k < 2; k++) {
    nnp_value *v = &g->values[ws[k]];
    v->kind = NNP_VALUE_INITIALIZER;
    v->dtype = NNP_F32;
    v->rank = 4;
    int64_t wd[4] = {2, 2, 1, 1};
    for (int i = 0; i < 4; i++) v->dims[i].value = wd[i];
    v->init = nnp_calloc(1, sizeof *v->init);
    *v->init = (nnp_tensor){NNP_F32, 4, {2, 2, 1, 1}, NULL};
    nnp_tensor_alloc(v->init);
    memcpy(v->init->data, wv[k], sizeof w1v);
  }
  int in1[2] = {x, w1}, in2[1] = {y}, in3[2] = {z, w2};
  nnp_graph_add_node(g, "c1", "Conv", "", 2, in1, 1, &y, NULL);
  nnp_graph_add_node(g, "r1", "Relu", "", 1, in2, 1, &z, NULL);
  nnp_graph_add_node(g, "c2", "Conv", "", 2, in3, 1, &o, NULL);
  g->values[o].is_output = true;
  nnp_graph_add_output(g, o);
  if (nnp_graph_toposort(g) != NNP_OK) return NULL;
  for (int i = 0; i < g->n_nodes; i++) g->nodes[i].op = nnp_op_lookup("", g->nodes[i].op_type);
  return g;
}

static void test_calibrate_run(void) {
  nnp_graph *g = small_graph();
  CHECK(g != NULL);
  if (!g) return;
  char dir[] = "/tmp/nnp_calib_run_XXXXXX", path[256];
  CHECK(mkdtemp(dir) != NULL);
  float x[18], xmin = INFINITY, xmax = -INFINITY;
  for (int k = 0; k < 3; k++) {
    for (int i = 0; i < 18; i++) {
      x[i] = (float)(urand() * 4 - 2) * (float)(k + 1);
      if (x[i] < xmin) xmin = x[i];
      if (x[i] > xmax) xmax = x[i];
    }
    nnp_tensor t = {NNP_F32, 4, {1, 2, 3, 3}, x};
    snprintf(path, sizeof path, "%s/s%d.npy", dir, k);
    CHECK_OK(nnp_npy_write(path, &t));
  }
  nnp_calib_options o;
  nnp_calib_options_default(&o);
  nnp_calib_set set;
  CHECK_OK(nnp_calib_open(dir, &o, &set));
  nnp_calib_table t;
  CHECK_OK(nnp_calibrate(g, &set, NNP_CALIBRATOR_MINMAX, 0, &t));
  CHECK(t.n == 4 && t.samples == 3);
  const nnp_calib_entry *ex = nnp_calib_table_find(&t, "X"), *ey = nnp_calib_table_find(&t, "Y");
  const nnp_calib_entry *ez = nnp_calib_table_find(&t, "Z"), *eo = nnp_calib_table_find(&t, "O");
  CHECK(ex && ex->lo == xmin && ex->hi == xmax);
  CHECK(ey && ez && eo && ey->lo < 0 && ez->lo == 0 && ez->hi == ey->hi);
  CHECK(nnp_calib_table_find(&t, "W1") == NULL);
  nnp_calib_table_free(&t);
  CHECK_OK(nnp_calibrate(g, &set, NNP_CALIBRATOR_ENTROPY, 0, &t));
  CHECK(t.n == 4 && t.calibrator == NNP_CALIBRATOR_ENTROPY);
  ex = nnp_calib_table_find(&t, "X");
  CHECK(ex && ex->lo >= xmin && ex->hi <= xmax);
  nnp_calib_table_free(&t);
  CHECK(nnp_calibrate(g, &set, NNP_CALIBRATOR_PERCENTILE, 0, &t) == NNP_ERR_INVALID);
  nnp_calib_close(&set);
  for (int k = 0; k < 3; k++) {
    snprintf(path, sizeof path, "%s/s%d.npy", dir, k);
    unlink(path);
  }
  rmdir(dir);
  nnp_graph_destroy(g);
}

int main(void) {
  test_calibrate_run();
  test_hist_growth();
  test_percentile_uniform();
  test_entropy();
  test_table_roundtrip();
  test_weight_scales();
  TEST_MAIN_END();
}
