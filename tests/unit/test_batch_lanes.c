/* Batch lanes (engine/batch_lanes.h): a batch > 1 run image by image on batch-1 plans
 * must give bit-identical outputs to the layer-at-a-time plan, at every thread count
 * (1..4, so lanes take 1, 2 or 3 images each, some lanes more than others), on the zoo
 * CNNs with the fast and the reference kernels; graphs that mix images must keep the
 * layer-at-a-time plan; a compile with lanes fails cleanly on every allocation. */
#include <stdint.h>
#include <string.h>

#include "nnperf/alloc.h"
#include "nnperf/bench.h"
#include "nnperf/engine.h"
#include "nnperf/onnx.h"
#include "nnperf/zoo.h"
#include "onnx/onnx.pb-c.h"
#include "test.h"

#define F32 ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT

#include "model_builder.h"

/* Compiles g at `batch` with `threads`, lanes on, off or auto, runs seeded inputs and returns a
 * copy of output 0 (nnp_free), its element count and the lane count. */
static float *run(const nnp_graph *g, int64_t batch, int threads, int lanes, bool fast, int64_t *n, int *n_lanes) {
  nnp_plan_options o;
  nnp_plan_options_default(&o);
  o.default_dim = batch;
  o.threads = threads;
  o.batch_lanes = lanes;
  o.fast_kernels = fast;
  nnp_plan *p = NULL;
  nnp_status s = nnp_plan_compile(g, &o, &p);
  CHECK_MSG(s == NNP_OK, "compile: %s", nnp_last_error());
  if (s != NNP_OK) return NULL;
  *n_lanes = nnp_plan_batch_lanes(p);
  for (int i = 0; i < nnp_plan_num_inputs(p); i++) nnp_fill_seeded(nnp_plan_input(p, i), 11 + (uint64_t)i);
  float *out = NULL;
  for (int rep = 0; rep < 2; rep++) { /* twice: a second run must not depend on the first */
    CHECK_OK(nnp_plan_run(p));
    const nnp_tensor *y = nnp_plan_output(p, 0);
    *n = nnp_tensor_numel(y);
    if (rep == 1) {
      out = nnp_malloc((size_t)*n * sizeof(float));
      if (out) memcpy(out, y->data, (size_t)*n * sizeof(float));
    }
  }
  nnp_plan_destroy(p);
  return out;
}

/* Lanes on vs off at batch 3 and threads 1..4: identical outputs, min(threads, batch) lanes. */
static void check_model(const char *name, int64_t image_size, bool fast) {
  nnp_zoo_options zo;
  nnp_zoo_options_default(&zo);
  zo.image_size = image_size;
  nnp_graph *g = NULL;
  CHECK_OK(nnp_zoo_build(name, &zo, &g));
  if (!g) return;
  const int64_t batch = 3;
  int64_t n0 = 0, n1 = 0;
  int l0 = -1, l1 = -1;
  float *ref = run(g, batch, 1, false, fast, &n0, &l0);
  CHECK(l0 == 0);
  for (int t = 1; t <= 4 && ref; t++) {
    float *got = run(g, batch, t, true, fast, &n1, &l1);
    CHECK_MSG(l1 == (t < batch ? t : batch), "%s threads %d: %d lanes", name, t, l1);
    CHECK_MSG(got && n1 == n0 && !memcmp(got, ref, (size_t)n0 * sizeof(float)),
              "%s (%s kernels) threads %d: lanes differ from the layer-at-a-time plan", name, fast ? "fast" : "reference", t);
    nnp_free(got);
    got = run(g, batch, t, false, fast, &n1, &l1); /* layer at a time split across t threads */
    CHECK(l1 == 0);
    CHECK_MSG(got && n1 == n0 && !memcmp(got, ref, (size_t)n0 * sizeof(float)),
              "%s threads %d: the threaded batch plan differs from one thread", name, t);
    nnp_free(got);
  }
  float *one = run(g, 1, 2, true, fast, &n1, &l1);
  CHECK_MSG(l1 == 0, "batch 1 has no lanes (%d)", l1);
  /* image 0 of the batch is the batch-1 result only when the seeded inputs agree, which
   * they do not (the fill is over the whole tensor): only the lane count is checked */
  nnp_free(one);
  nnp_free(ref);
  nnp_graph_destroy(g);
  printf("%s (%s kernels): lanes match the layer-at-a-time plan at threads 1..4\n", name, fast ? "fast" : "reference");
}

static nnp_graph *load(Onnx__ModelProto *m) {
  size_t n;
  uint8_t *buf = mb_pack(m, &n);
  nnp_graph *g = NULL;
  nnp_status s = nnp_onnx_load_buffer(buf, n, NULL, NULL, &g);
  CHECK_MSG(s == NNP_OK, "load: %s", nnp_last_error());
  return g;
}

static float *ramp(size_t n) {
  float *w = mb_alloc(n * sizeof *w);
  for (size_t i = 0; i < n; i++) w[i] = (float)((int)(i % 7) - 3) * 0.25f;
  return w;
}

/* Graphs whose steps mix images, or whose constants carry the batch, keep the
 * layer-at-a-time plan; a per-sample Gemm + Softmax graph gets lanes. Batch 4, so a
 * constant can have the batch's size. A batch fixed in the model (not symbolic) keeps
 * the layer-at-a-time plan too: the batch-1 lane plan does not compile. */
static void test_not_per_sample(void) {
  const int64_t xd[] = {-1, 4}, fixed[] = {4, 4}, cd[] = {4, 4};
  const int64_t vd[] = {4}; /* a constant without the batch axis: broadcast to every image */
  struct {
    const char *what, *op, *ins;
    int trans_a; /* Gemm only */
    bool fixed, lanes, vec;
  } cases[] = {
      {"Add of a constant that has the batch's shape", "Add", "x,c", 0, false, false, false},
      {"Sub of a constant first that has the batch's shape", "Sub", "c,x", 0, false, false, false},
      {"Mul of a per-column constant first (a layer scale)", "Mul", "c,x", 0, false, true, true},
      {"Gemm with transA (the batch is the reduced axis)", "Gemm", "x,c", 1, false, false, false},
      {"Gemm (rows are images)", "Gemm", "x,c", 0, false, true, false},
      {"Gemm, batch fixed in the model", "Gemm", "x,c", 0, true, false, false},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    Onnx__ModelProto *m = mb_model(13);
    mb_input(m, "x", F32, 2, cases[c].fixed ? fixed : xd);
    if (cases[c].vec) mb_init_f32(m, "c", 1, vd, ramp(4));
    else mb_init_f32(m, "c", 2, cd, ramp(16));
    Onnx__NodeProto *nd = mb_node(m, cases[c].op, "op", cases[c].ins, "h");
    if (!strcmp(cases[c].op, "Gemm")) mb_attr_int(nd, "transA", cases[c].trans_a);
    mb_node(m, "Softmax", "sm", "h", "y");
    mb_output(m, "y", F32);
    nnp_graph *g = load(m);
    if (!g) continue;
    int64_t n0 = 0, n1 = 0;
    int l0 = -1, l1 = -1;
    float *ref = run(g, 4, 1, false, true, &n0, &l0);
    float *got = run(g, 4, 2, true, true, &n1, &l1);
    CHECK_MSG((l1 > 0) == cases[c].lanes, "%s: %d lanes", cases[c].what, l1);
    CHECK_MSG(ref && got && n0 == n1 && !memcmp(ref, got, (size_t)n0 * sizeof(float)), "%s: outputs differ",
              cases[c].what);
    nnp_free(ref);
    nnp_free(got);
    nnp_graph_destroy(g);
    mb_reset();
  }
}

/* A batch baked into a Reshape's constant shape ([4, -1]) is per-sample at batch 4 but
 * turns a batch-1 image [1, 4] into [4, 1]: the lane plan would compile, yet its output is
 * not one image of the batch's. The graph's batch-1 shape inference must refuse lanes
 * (were the lanes taken, each would copy 4 floats where an image has 4 rows of 4). */
static void test_batch_in_reshape(void) {
  const int64_t xd[] = {-1, 4}, sd[] = {2}, shape[] = {4, -1};
  Onnx__ModelProto *m = mb_model(13);
  mb_input(m, "x", F32, 2, xd);
  Onnx__TensorProto *t = mb_tensor("shape", ONNX__TENSOR_PROTO__DATA_TYPE__INT64, 1, sd);
  mb_raw_data(t, sizeof shape, shape);
  mb_init(m, t);
  mb_node(m, "Reshape", "rs", "x,shape", "h");
  mb_node(m, "Softmax", "sm", "h", "y");
  mb_output(m, "y", F32);
  nnp_graph *g = load(m);
  if (g) {
    int64_t n0 = 0, n1 = 0;
    int l0 = -1, l1 = -1;
    float *ref = run(g, 4, 1, false, true, &n0, &l0);
    float *got = run(g, 4, 2, true, true, &n1, &l1);
    CHECK_MSG(l1 == 0, "a batch in a Reshape constant: %d lanes", l1);
    CHECK(ref && got && n0 == 16 && n0 == n1 && !memcmp(ref, got, (size_t)n0 * sizeof(float)));
    nnp_free(ref);
    nnp_free(got);
    nnp_graph_destroy(g);
  }
  mb_reset();
}

/* Every allocation of a compile with lanes may fail: NNP_ERR_NOMEM, nothing leaked. */
static void test_alloc_failures(void) {
  nnp_zoo_options zo;
  nnp_zoo_options_default(&zo);
  nnp_graph *g = NULL;
  CHECK_OK(nnp_zoo_build("tiny", &zo, &g));
  if (!g) return;
  nnp_plan_options o;
  nnp_plan_options_default(&o);
  o.default_dim = 2;
  o.threads = 2;
  nnp_alloc_fail_after(0);
  nnp_plan *p = NULL;
  CHECK_OK(nnp_plan_compile(g, &o, &p));
  CHECK(p && nnp_plan_batch_lanes(p) == 2);
  nnp_plan_destroy(p);
  long total = nnp_alloc_count();
  int bad = 0;
  for (long k = 1; k <= total; k++) {
    nnp_alloc_fail_after(k);
    p = NULL;
    nnp_status s = nnp_plan_compile(g, &o, &p);
    nnp_alloc_fail_after(0);
    if (s != NNP_OK && s != NNP_ERR_NOMEM && bad++ < 3)
      fprintf(stderr, "allocation %ld failed: %s: %s\n", k, nnp_status_name(s), nnp_last_error());
    CHECK(s == NNP_OK || !p);
    nnp_plan_destroy(p);
  }
  CHECK_MSG(bad == 0, "%d failure points reported something other than out of memory", bad);
  printf("alloc failures: %ld allocation points of a batch-2 zoo:tiny compile with lanes handled\n", total);
  nnp_graph_destroy(g);
}

/* The default (NNP_LANES_AUTO) runs lanes where the weights are small beside an image's
 * activations (zoo:tiny) and layer at a time where they dominate (resnet18 at 48x48: 47 MB
 * of weights, a 0.2 MB arena); forced on, resnet18 runs lanes all the same. */
static void test_auto_policy(void) {
  nnp_plan_options d;
  nnp_plan_options_default(&d);
  CHECK(d.batch_lanes == NNP_LANES_AUTO);
  static const struct { const char *name; int64_t size; int lanes; int want; } cases[] = {
      {"tiny", 0, NNP_LANES_AUTO, 2}, {"resnet18", 48, NNP_LANES_AUTO, 0}, {"resnet18", 48, NNP_LANES_ON, 2}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    nnp_zoo_options zo;
    nnp_zoo_options_default(&zo);
    zo.image_size = cases[i].size;
    nnp_graph *g = NULL;
    CHECK_OK(nnp_zoo_build(cases[i].name, &zo, &g));
    if (!g) continue;
    int64_t n = 0;
    int lanes = -1;
    nnp_free(run(g, 3, 2, cases[i].lanes, true, &n, &lanes));
    CHECK_MSG(lanes == cases[i].want, "%s, lanes option %d: %d lanes, want %d", cases[i].name, cases[i].lanes, lanes,
              cases[i].want);
    nnp_graph_destroy(g);
  }
}

int main(void) {
  check_model("tiny", 0, true);
  check_model("tiny", 0, false);
  check_model("mobilenet_v2", 64, true);
  check_model("efficientnet_lite0", 64, true);
  check_model("resnet18", 48, true);
  test_not_per_sample();
  test_batch_in_reshape();
  test_auto_policy();
  test_alloc_failures();
  TEST_MAIN_END();
}
