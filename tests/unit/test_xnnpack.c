/* The xnnpack backend: on every zoo architecture it translates, its outputs agree with
 * the native engine within 1e-4 relative (max |diff| / max |native|, the measure bench's
 * accuracy column uses) at 1 and 2 threads; a model with ops it cannot translate fails
 * to load with NNP_ERR_UNSUPPORTED naming every such op, and does not crash; reshaping
 * an input (dynamic-shape scenarios) gives native's outputs for each shape.
 * Skips (exit 77) when nnperf was built without XNNPACK. */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "nnperf/alloc.h"
#include "nnperf/backend.h"
#include "nnperf/onnx.h"
#include "nnperf/zoo.h"
#include "test.h"

static char tmp_dir[] = "/tmp/nnp_xnn_XXXXXX";

static void fill_uniform(nnp_tensor *t, uint64_t seed) {
  float *p = t->data;
  int64_t n = nnp_tensor_numel(t);
  uint64_t s = seed;
  for (int64_t i = 0; i < n; i++) {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    p[i] = (float)((double)(z >> 40) / (double)(1 << 23) - 1.0); /* [-1, 1) */
  }
}

/* Loads path on backend vt, feeds the seeded input, runs once; *out receives a copy. */
static nnp_status run_once(const nnp_backend_vtable *vt, const char *path, int threads, nnp_tensor *out) {
  nnp_backend_config cfg = {.model_path = path, .threads = threads, .precision = NNP_FP32, .options = ""};
  nnp_load_report rep = {0};
  void *st = NULL;
  NNP_TRY(vt->load(&cfg, &st, &rep));
  nnp_status s = NNP_OK;
  for (int i = 0; i < vt->num_inputs(st); i++) fill_uniform(vt->input(st, i), 7 + (uint64_t)i);
  for (int r = 0; r < 2 && s == NNP_OK; r++) s = vt->run(st); /* twice: a rerun must not change outputs */
  if (s == NNP_OK) s = nnp_tensor_clone(vt->output(st, 0), out);
  vt->unload(st);
  return s;
}

static double max_rel(const nnp_tensor *got, const nnp_tensor *ref) {
  const float *a = got->data, *b = ref->data;
  double err = 0, scale = 0;
  for (int64_t i = 0; i < nnp_tensor_numel(ref); i++) {
    double d = fabs((double)a[i] - (double)b[i]);
    if (!(d <= err)) err = d;
    if (fabs(b[i]) > scale) scale = fabs(b[i]);
  }
  return scale > 0 ? err / scale : err;
}

static void check_zoo(const char *name) {
  extern const nnp_backend_vtable nnp_backend_native, nnp_backend_xnnpack;
  nnp_zoo_options zo;
  nnp_zoo_options_default(&zo);
  zo.batch = 1;
  nnp_graph *g = NULL;
  char path[256];
  snprintf(path, sizeof path, "%s/%s.onnx", tmp_dir, name);
  CHECK_OK(nnp_zoo_build(name, &zo, &g));
  if (!g) return;
  CHECK_OK(nnp_onnx_save(g, path));
  nnp_graph_destroy(g);
  nnp_tensor ref = {0}, got1 = {0}, got2 = {0};
  CHECK_OK(run_once(&nnp_backend_native, path, 1, &ref));
  CHECK_OK(run_once(&nnp_backend_xnnpack, path, 1, &got1));
  CHECK_OK(run_once(&nnp_backend_xnnpack, path, 2, &got2));
  if (ref.data && got1.data && got2.data) {
    CHECK_MSG(nnp_tensor_same_shape(&ref, &got1), "%s: output shapes differ", name);
    double r1 = max_rel(&got1, &ref), r2 = max_rel(&got2, &ref);
    printf("%-20s max relative error vs native: %.2e (1 thread), %.2e (2 threads)\n", name, r1, r2);
    CHECK_MSG(r1 <= 1e-4, "%s: xnnpack 1 thread differs from native by %.3g relative", name, r1);
    CHECK_MSG(r2 <= 1e-4, "%s: xnnpack 2 threads differs from native by %.3g relative", name, r2);
  }
  nnp_tensor_free(&ref);
  nnp_tensor_free(&got1);
  nnp_tensor_free(&got2);
  unlink(path);
}

/* Dynamic shapes: tiny with a symbolic batch, reshaped to batch 2, then back to
 * batch 1 and 2 again (cached runtimes), agrees with native each time. */
static void check_reshape(void) {
  extern const nnp_backend_vtable nnp_backend_native, nnp_backend_xnnpack;
  nnp_graph *g = NULL;
  char path[256];
  snprintf(path, sizeof path, "%s/tiny_dyn.onnx", tmp_dir);
  CHECK_OK(nnp_zoo_build("tiny", NULL, &g));
  if (!g) return;
  CHECK_OK(nnp_onnx_save(g, path));
  nnp_graph_destroy(g);
  nnp_backend_config cfg = {.model_path = path, .threads = 1, .precision = NNP_FP32, .options = ""};
  nnp_load_report rep = {0};
  void *nat = NULL, *xnn = NULL;
  CHECK_OK(nnp_backend_native.load(&cfg, &nat, &rep));
  CHECK_OK(nnp_backend_xnnpack.load(&cfg, &xnn, &rep));
  const int64_t shapes[3][4] = {{2, 3, 32, 32}, {1, 3, 32, 32}, {2, 3, 32, 32}};
  for (int k = 0; nat && xnn && k < 3; k++) {
    CHECK_OK(nnp_backend_native.reshape(nat, 0, 4, shapes[k]));
    CHECK_OK(nnp_backend_xnnpack.reshape(xnn, 0, 4, shapes[k]));
    nnp_tensor *a = nnp_backend_native.input(nat, 0), *b = nnp_backend_xnnpack.input(xnn, 0);
    CHECK(nnp_tensor_same_shape(a, b) && a->dims[0] == shapes[k][0] && a->dims[2] == shapes[k][2]);
    fill_uniform(a, 11 + (uint64_t)k);
    fill_uniform(b, 11 + (uint64_t)k);
    CHECK_OK(nnp_backend_native.run(nat));
    CHECK_OK(nnp_backend_xnnpack.run(xnn));
    const nnp_tensor *ya = nnp_backend_native.output(nat, 0), *yb = nnp_backend_xnnpack.output(xnn, 0);
    CHECK(nnp_tensor_same_shape(ya, yb) && yb->dims[0] == shapes[k][0]);
    double r = max_rel(yb, ya);
    printf("tiny reshaped to %lldx3x%lldx%lld: max relative error %.2e\n", (long long)shapes[k][0],
           (long long)shapes[k][2], (long long)shapes[k][3], r);
    CHECK_MSG(r <= 1e-4, "reshape %d: xnnpack differs from native by %.3g relative", k, r);
  }
  if (nat) nnp_backend_native.unload(nat);
  if (xnn) nnp_backend_xnnpack.unload(xnn);
  unlink(path);
}

/* x[1,8] -> Relu -> Erf -> Softplus -> Erf -> y: the load fails, naming Erf (once) and
 * Softplus, and not the Relu it translates. */
static void check_unsupported(void) {
  extern const nnp_backend_vtable nnp_backend_xnnpack;
  nnp_graph *g = NULL;
  CHECK_OK(nnp_graph_create(&g));
  if (!g) return;
  int v[5];
  const char *names[5] = {"x", "r", "e", "s", "y"};
  for (int k = 0; k < 5; k++) CHECK_OK(nnp_graph_value(g, names[k], &v[k]));
  g->opset = 17;
  g->values[v[0]].dtype = NNP_F32;
  g->values[v[0]].rank = 2;
  g->values[v[0]].dims[0].value = 1;
  g->values[v[0]].dims[1].value = 8;
  g->values[v[0]].kind = NNP_VALUE_INPUT;
  CHECK_OK(nnp_graph_add_input(g, v[0]));
  CHECK_OK(nnp_graph_add_output(g, v[4]));
  const char *ops[4] = {"Relu", "Erf", "Softplus", "Erf"};
  const char *node_names[4] = {"relu", "erf1", "softplus", "erf2"};
  for (int k = 0; k < 4; k++) {
    int idx;
    CHECK_OK(nnp_graph_add_node(g, node_names[k], ops[k], "", 1, &v[k], 1, &v[k + 1], &idx));
  }
  CHECK_OK(nnp_graph_toposort(g));
  char path[256];
  snprintf(path, sizeof path, "%s/unsupported.onnx", tmp_dir);
  CHECK_OK(nnp_onnx_save(g, path));
  nnp_graph_destroy(g);
  nnp_backend_config cfg = {.model_path = path, .threads = 1, .precision = NNP_FP32, .options = ""};
  nnp_load_report rep = {0};
  void *st = NULL;
  nnp_status s = nnp_backend_xnnpack.load(&cfg, &st, &rep);
  CHECK_MSG(s == NNP_ERR_UNSUPPORTED, "load -> %s", nnp_status_name(s));
  CHECK(st == NULL);
  const char *msg = nnp_last_error();
  printf("unsupported model: %s\n", msg);
  CHECK_MSG(strstr(msg, "Erf") && strstr(msg, "Softplus"), "message does not name both ops: %s", msg);
  CHECK_MSG(!strstr(msg, "Relu"), "message names a supported op: %s", msg);
  CHECK_MSG(strstr(msg, "Erf") == strrchr(msg, 'E'), "Erf named twice: %s", msg);
  unlink(path);
}

int main(void) {
  extern const nnp_backend_vtable nnp_backend_xnnpack;
  char version[256];
  if (nnp_backend_xnnpack.probe(version, sizeof version) != NNP_OK) {
    printf("SKIP: xnnpack backend unavailable: %s\n", nnp_last_error());
    return 77;
  }
  if (!mkdtemp(tmp_dir)) {
    fprintf(stderr, "cannot create a temporary folder\n");
    return 1;
  }
  const char *models[] = {"tiny", "mobilenet_v2", "resnet18", "efficientnet_lite0", "squeezenet1_1"};
  for (size_t i = 0; i < sizeof models / sizeof *models; i++) check_zoo(models[i]);
  check_reshape();
  check_unsupported();
  rmdir(tmp_dir);
  TEST_MAIN_END();
}
