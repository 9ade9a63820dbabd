/* The model zoo: every architecture builds with torchvision's parameter count and
 * readable names, survives nnp_onnx_save + nnp_onnx_load, and the built and reloaded
 * graphs compute bit-identical, finite, sanely scaled logits; the symbolic batch binds.
 * The ImageNet models run at small image sizes (their parameters do not depend on it) to
 * keep this test fast under the sanitizers. */
#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nnperf/alloc.h"
#include "nnperf/engine.h"
#include "nnperf/onnx.h"
#include "nnperf/zoo.h"
#include "test.h"

static char tmp_dir[] = "/tmp/nnp_zoo_XXXXXX";

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

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

typedef struct zoo_case {
  const char *name;
  int64_t image_size; /* 0: the model's default */
  int64_t params;     /* torchvision's sum(p.numel() for p in model.parameters()) */
  int64_t classes;
  bool run_batch2;    /* also run at batch 2 (cheap models only) */
  const char *names[4]; /* values that must exist, torchvision-style */
} zoo_case;

static const zoo_case cases[] = {
    {"tiny", 0, 8058, 10, true, {"conv1.weight", "bn1.running_var", "cat", "logits"}},
    {"resnet18", 48, 11689512, 1000, false,
     {"layer1.0.conv1", "layer2.0.downsample.0.weight", "layer4.1.bn2.running_mean", "fc.weight"}},
    {"resnet50", 32, 25557032, 1000, false,
     {"layer1.0.conv3.weight", "layer3.5.bn3", "layer4.0.downsample.1.weight", "fc.bias"}},
    {"mobilenet_v2", 64, 3504872, 1000, false,
     {"features.0.0.weight", "features.3.conv.0.0", "features.17.conv.3.running_var", "classifier.1.weight"}},
    /* timm's efficientnet_lite0 has 4,652,008 parameters */
    {"efficientnet_lite0", 64, 4652008, 1000, false,
     {"conv_stem.weight", "blocks.0.0.conv_dw", "blocks.5.3.conv_pwl.weight", "classifier.weight"}},
    {"squeezenet1_1", 64, 1235496, 1000, false,
     {"features.3.squeeze.weight", "features.12.cat", "classifier.1.weight", "logits"}},
};

static void remove_tmp_dir(void) {
  DIR *d = opendir(tmp_dir);
  if (!d) return;
  struct dirent *e;
  char p[512];
  while ((e = readdir(d)))
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
      snprintf(p, sizeof p, "%s/%s", tmp_dir, e->d_name);
      unlink(p);
    }
  closedir(d);
  rmdir(tmp_dir);
}

static void check_io_decl(const nnp_graph *g, const zoo_case *c, int64_t size) {
  CHECK(g->n_inputs == 1 && g->n_outputs == 1);
  if (g->n_inputs != 1 || g->n_outputs != 1) return;
  const nnp_value *in = &g->values[g->inputs[0]], *out = &g->values[g->outputs[0]];
  CHECK(strcmp(in->name, "input") == 0 && in->dtype == NNP_F32 && in->rank == 4);
  CHECK(in->dims[0].value < 0 && in->dims[0].symbol && strcmp(in->dims[0].symbol, "N") == 0);
  CHECK(in->dims[1].value == 3 && in->dims[2].value == size && in->dims[3].value == size);
  CHECK(strcmp(out->name, "logits") == 0 && out->dtype == NNP_F32 && out->rank == 2);
  CHECK(out->dims[0].symbol && strcmp(out->dims[0].symbol, "N") == 0 && out->dims[1].value == c->classes);
  CHECK(g->opset == 13);
}

/* Output statistics: all finite, standard deviation (over all logits) in range. */
static void check_logits(const char *model, const nnp_tensor *t) {
  const float *p = t->data;
  int64_t n = nnp_tensor_numel(t);
  double sum = 0, sq = 0;
  bool finite = true;
  for (int64_t i = 0; i < n; i++) {
    finite = finite && isfinite(p[i]);
    sum += p[i];
    sq += (double)p[i] * p[i];
  }
  double mean = sum / (double)n, sd = sqrt(fmax(0.0, sq / (double)n - mean * mean));
  CHECK_MSG(finite, "%s: non-finite logits", model);
  CHECK_MSG(sd > 1e-3 && sd < 1e3, "%s: logits std %g out of range", model, sd);
  printf("  logits mean %.4g std %.4g\n", mean, sd);
}

static void run_case(const zoo_case *c) {
  double t0 = now();
  nnp_zoo_options o;
  nnp_zoo_options_default(&o);
  o.image_size = c->image_size;
  nnp_graph *g = NULL;
  CHECK_OK(nnp_zoo_build(c->name, &o, &g));
  if (!g) return;
  const int64_t size = c->image_size ? c->image_size : 32;
  check_io_decl(g, c, size);
  int64_t params = nnp_zoo_param_count(g);
  printf("%s: %d nodes, %lld parameters (expected %lld)\n", c->name, g->n_nodes, (long long)params,
         (long long)c->params);
  CHECK_MSG(params == c->params, "%s: %lld parameters, torchvision has %lld", c->name, (long long)params,
            (long long)c->params);
  for (int k = 0; k < 4 && c->names[k]; k++)
    CHECK_MSG(nnp_graph_find_value(g, c->names[k]) >= 0, "%s: no value '%s'", c->name, c->names[k]);
  double t_build = now();

  char path[512];
  snprintf(path, sizeof path, "%s/%s.onnx", tmp_dir, c->name);
  CHECK_OK(nnp_onnx_save(g, path));
  nnp_graph *back = NULL;
  CHECK_OK(nnp_onnx_load(path, NULL, &back));
  unlink(path);
  double t_io = now();
  if (!back) {
    nnp_graph_destroy(g);
    return;
  }
  check_io_decl(back, c, size);
  CHECK(back->n_nodes == g->n_nodes && back->n_values == g->n_values);
  CHECK(nnp_zoo_param_count(back) == params);

  nnp_plan *p1 = NULL, *p2 = NULL;
  CHECK_OK(nnp_plan_compile(g, NULL, &p1));
  CHECK_OK(nnp_plan_compile(back, NULL, &p2));
  if (p1 && p2) {
    nnp_tensor *in = nnp_plan_input(p1, 0);
    CHECK(in->rank == 4 && in->dims[0] == 1 && in->dims[2] == size);
    fill_uniform(in, 42);
    CHECK_OK(nnp_plan_set_input(p2, 0, in));
    CHECK_OK(nnp_plan_run(p1));
    CHECK_OK(nnp_plan_run(p2));
    const nnp_tensor *y1 = nnp_plan_output(p1, 0), *y2 = nnp_plan_output(p2, 0);
    CHECK(y1->rank == 2 && y1->dims[0] == 1 && y1->dims[1] == c->classes);
    CHECK_MSG(nnp_tensor_same_shape(y1, y2) && memcmp(y1->data, y2->data, nnp_tensor_nbytes(y1)) == 0,
              "%s: built and reloaded graphs compute different logits", c->name);
    check_logits(c->name, y1);
  }
  double t_run = now();

  /* The symbolic batch binds through the plan options. */
  nnp_plan_options po;
  nnp_plan_options_default(&po);
  po.n_dims = 1;
  po.dims[0].symbol = "N";
  po.dims[0].value = 2;
  nnp_plan *pb = NULL;
  CHECK_OK(nnp_plan_compile(back, &po, &pb));
  if (pb) {
    const nnp_tensor *yb = nnp_plan_output(pb, 0);
    CHECK_MSG(yb->rank == 2 && yb->dims[0] == 2 && yb->dims[1] == c->classes, "%s: batch-2 output shape", c->name);
    CHECK(nnp_plan_input(pb, 0)->dims[0] == 2);
    if (c->run_batch2 && p1) {
      /* both rows fed the batch-1 input: each row must give the batch-1 logits */
      nnp_tensor *in = nnp_plan_input(pb, 0), *in1 = nnp_plan_input(p1, 0);
      size_t row = nnp_tensor_nbytes(in1);
      memcpy(in->data, in1->data, row);
      memcpy((char *)in->data + row, in1->data, row);
      CHECK_OK(nnp_plan_run(pb));
      const float *a = nnp_plan_output(p1, 0)->data, *b = yb->data;
      double worst = 0;
      for (int r = 0; r < 2; r++)
        for (int64_t k = 0; k < c->classes; k++)
          worst = fmax(worst, fabs((double)b[r * c->classes + k] - a[k]) / (1.0 + fabs((double)a[k])));
      CHECK_MSG(worst < 1e-5, "%s: batch-2 rows differ from batch 1 by %g", c->name, worst);
    }
  }
  nnp_plan_destroy(pb);
  nnp_plan_destroy(p1);
  nnp_plan_destroy(p2);
  nnp_graph_destroy(back);
  nnp_graph_destroy(g);
  double t_end = now();
  printf("  time: build %.2fs, save+load %.2fs, compile+run x2 %.2fs, batch-2 %.2fs, total %.2fs\n",
         t_build - t0, t_io - t_build, t_run - t_io, t_end - t_run, t_end - t0);
}

static const float *init_data(const nnp_graph *g, const char *name) {
  int v = nnp_graph_find_value(g, name);
  return v >= 0 && g->values[v].init ? g->values[v].init->data : NULL;
}

static void check_api(void) {
  CHECK(nnp_zoo_count() == (int)(sizeof cases / sizeof cases[0]));
  for (int i = 0; i < nnp_zoo_count(); i++) CHECK(nnp_zoo_name(i) && nnp_zoo_description(i));
  CHECK(nnp_zoo_name(-1) == NULL && nnp_zoo_name(nnp_zoo_count()) == NULL);
  CHECK(nnp_zoo_description(nnp_zoo_count()) == NULL);

  nnp_graph *g = (nnp_graph *)1;
  CHECK(nnp_zoo_build("resnet19", NULL, &g) == NNP_ERR_INVALID && g == NULL);
  CHECK_MSG(strstr(nnp_last_error(), "resnet19") && strstr(nnp_last_error(), "mobilenet_v2"), "message: %s",
            nnp_last_error());
  CHECK(nnp_zoo_build(NULL, NULL, &g) == NNP_ERR_INVALID);
  nnp_zoo_options o;
  nnp_zoo_options_default(&o);
  CHECK(o.seed == 1 && o.image_size == 0 && o.batch == 0 && o.num_classes == 0);
  o.image_size = 16;
  CHECK(nnp_zoo_build("resnet18", &o, &g) == NNP_ERR_SHAPE);
  nnp_zoo_options_default(&o);
  o.batch = -1;
  CHECK(nnp_zoo_build("tiny", &o, &g) == NNP_ERR_INVALID);

  /* weights: deterministic, seed-dependent, independent of the image size */
  nnp_graph *a = NULL, *b = NULL, *c = NULL, *d = NULL;
  nnp_zoo_options_default(&o);
  CHECK_OK(nnp_zoo_build("tiny", &o, &a));
  CHECK_OK(nnp_zoo_build("tiny", &o, &b));
  o.image_size = 48;
  CHECK_OK(nnp_zoo_build("tiny", &o, &c));
  nnp_zoo_options_default(&o);
  o.seed = 2;
  CHECK_OK(nnp_zoo_build("tiny", &o, &d));
  if (a && b && c && d) {
    const size_t n = 16 * 3 * 3 * 3 * sizeof(float);
    CHECK(memcmp(init_data(a, "conv1.weight"), init_data(b, "conv1.weight"), n) == 0);
    CHECK(memcmp(init_data(a, "conv1.weight"), init_data(c, "conv1.weight"), n) == 0);
    CHECK(memcmp(init_data(a, "conv1.weight"), init_data(d, "conv1.weight"), n) != 0);
    CHECK(c->values[c->inputs[0]].dims[2].value == 48);
    /* BatchNormalization statistics are non-trivial and plausible */
    const float *var = init_data(a, "bn1.running_var"), *gamma = init_data(a, "bn1.weight");
    bool sane = true, trivial = true;
    for (int k = 0; k < 16; k++) {
      sane = sane && var[k] > 0.2f && var[k] < 3.0f && gamma[k] > 0.5f && gamma[k] < 1.5f;
      trivial = trivial && var[k] == 1.0f;
    }
    CHECK(sane && !trivial);
  }
  nnp_graph_destroy(a);
  nnp_graph_destroy(b);
  nnp_graph_destroy(c);
  nnp_graph_destroy(d);

  /* fixed batch and class count */
  nnp_zoo_options_default(&o);
  o.batch = 3;
  o.num_classes = 7;
  CHECK_OK(nnp_zoo_build("squeezenet1_1", &o, &a));
  if (a) {
    const nnp_value *in = &a->values[a->inputs[0]], *out = &a->values[a->outputs[0]];
    CHECK(in->dims[0].value == 3 && in->dims[0].symbol == NULL && in->dims[2].value == 224);
    CHECK(out->dims[0].value == 3 && out->dims[1].value == 7);
    nnp_graph_destroy(a);
  }

  /* allocation failure anywhere while building: NNP_ERR_NOMEM and nothing leaked */
  int failures = 0;
  for (long k = 1; k < 100000; k++) {
    nnp_alloc_fail_after(k);
    nnp_graph *t = NULL;
    nnp_status s = nnp_zoo_build("tiny", NULL, &t);
    nnp_alloc_fail_after(0);
    if (s == NNP_OK) {
      nnp_graph_destroy(t);
      break;
    }
    failures++;
    CHECK_MSG(s == NNP_ERR_NOMEM && t == NULL, "allocation %ld: %s: %s", k, nnp_status_name(s), nnp_last_error());
  }
  CHECK(failures > 50);
}

int main(void) {
  CHECK(mkdtemp(tmp_dir) != NULL);
  check_api();
  double t0 = now();
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(&cases[i]);
  printf("all models: %.2fs\n", now() - t0);
  remove_tmp_dir();
  TEST_MAIN_END();
}
