/* Allocation-failure injection, SQLite style: for N = 1, 2, ... the N-th allocation
 * (and every later one) fails; loading, compiling and running must then either succeed
 * (N is past the last allocation: done) or fail cleanly with NNP_ERR_NOMEM, leaking
 * nothing (under ASan, LeakSanitizer is asked after every N) and never crashing.
 * protobuf-c allocates through nnp_malloc too, so its failures are covered as well. */
#include <dirent.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nnperf/alloc.h"
#include "nnperf/engine.h"
#include "nnperf/onnx.h"
#include "onnx/onnx.pb-c.h"
#include "test.h"

#if defined(__SANITIZE_ADDRESS__)
#define NNP_HAVE_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NNP_HAVE_LSAN 1
#endif
#endif
#ifdef NNP_HAVE_LSAN
#include <sanitizer/lsan_interface.h>
#endif

#define F32 ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT

#include "model_builder.h"

#define MAX_STEPS 200000 /* more allocations than this means a loop is not converging */

/* True when LeakSanitizer finds leaked blocks now (false without ASan). */
static bool leaked_now(void) {
#ifdef NNP_HAVE_LSAN
  return __lsan_do_recoverable_leak_check() != 0;
#else
  return false;
#endif
}

typedef struct scenario {
  const char *name;
  /* Runs the operation under test; returns its status. Must release everything it made,
   * whatever happens. */
  nnp_status (*run)(void);
} scenario;

static bool nomem_message(const char *msg) {
  return strstr(msg, "memory") || strstr(msg, "allocat") || strstr(msg, "NOMEM");
}

/* Drives one scenario through every failure point. Returns the number of allocations
 * a full success needed (or -1). */
static long exhaust(const scenario *sc) {
  int bad = 0;
  for (long n = 1; n <= MAX_STEPS; n++) {
    nnp_clear_error();
    nnp_alloc_fail_after(n);
    nnp_status s = sc->run();
    long count = nnp_alloc_count();
    nnp_alloc_fail_after(0);
    bool leak = leaked_now();
    CHECK_MSG(!leak, "%s: leak when allocation %ld fails (see the LeakSanitizer report above)", sc->name, n);
    if (s == NNP_OK) {
      CHECK_MSG(count < n, "%s: succeeded although allocation %ld of %ld failed", sc->name, n, count);
      if (bad)
        printf("%s: %ld allocations; %d failure points gave the wrong status (first ones above)\n", sc->name,
               n - 1, bad);
      else
        printf("%s: %ld allocations, every failure point handled cleanly\n", sc->name, n - 1);
      return n - 1;
    }
    if (s != NNP_ERR_NOMEM || !nomem_message(nnp_last_error())) {
      if (bad++ < 3)
        fprintf(stderr, "%s: allocation %ld failed -> %s: %s (expected %s)\n", sc->name, n, nnp_status_name(s),
                nnp_last_error(), nnp_status_name(NNP_ERR_NOMEM));
      test_checks_failed++;
    } else {
      test_checks_passed++;
    }
    if (leak) return -1;
  }
  CHECK_MSG(false, "%s: still failing after %d allocation failure points", sc->name, MAX_STEPS);
  return -1;
}

/* ---- Scenarios -------------------------------------------------------------------- */

static const int64_t dims_2x4[] = {2, 4};
static const float b_vals[8] = {1, -2, 3, -4, 5, -6, 7, -8};
static uint8_t *model_buf;
static size_t model_size;

/* x[2,4] -> Relu -> Add(b) -> Softmax -> Identity -> y, with b an initializer; when
 * `simple`, only unary ops (x -> Relu -> Neg -> Identity -> y) plus an unused
 * initializer, for builds whose Add or Softmax is not there yet. */
static void build_model(bool simple) {
  Onnx__ModelProto *m = mb_model(13);
  mb_input(m, "x", F32, 2, dims_2x4);
  mb_init_f32(m, "b", 2, dims_2x4, b_vals);
  if (simple) {
    mb_node(m, "Relu", "relu1", "x", "r");
    mb_node(m, "Neg", "neg1", "r", "a");
  } else {
    mb_node(m, "Relu", "relu1", "x", "r");
    mb_node(m, "Add", "add1", "r,b", "s");
    mb_attr_int(mb_node(m, "Softmax", "softmax1", "s", "a"), "axis", -1);
  }
  mb_node(m, "Identity", "id1", "a", "y");
  mb_output(m, "y", F32);
  model_buf = mb_pack(m, &model_size);
}

static nnp_status run_load(void) {
  nnp_graph *g = NULL;
  nnp_status s = nnp_onnx_load_buffer(model_buf, model_size, NULL, NULL, &g);
  CHECK(s == NNP_OK || g == NULL);
  nnp_graph_destroy(g);
  return s;
}

static int compile_mode; /* 1: load + compile + run */

static nnp_status run_load_compile_run(void) {
  nnp_graph *g = NULL;
  nnp_status s = nnp_onnx_load_buffer(model_buf, model_size, NULL, NULL, &g);
  if (s != NNP_OK) return s;
  nnp_plan *p = NULL;
  s = nnp_plan_compile(g, NULL, &p);
  CHECK(s == NNP_OK || p == NULL);
  if (s == NNP_OK) {
    nnp_tensor *x = nnp_plan_input(p, 0);
    for (int i = 0; i < 8; i++) ((float *)x->data)[i] = (float)(i - 3);
    s = nnp_plan_run(p);
    nnp_plan_destroy(p);
  }
  nnp_graph_destroy(g);
  return s;
}

static uint8_t *tensor_buf;
static size_t tensor_size;

static nnp_status run_parse_tensor(void) {
  nnp_tensor t = {0};
  char *name = (char *)&name;
  nnp_status s = nnp_onnx_parse_tensor(tensor_buf, tensor_size, &t, &name);
  if (s == NNP_OK) {
    CHECK(strcmp(name, "b") == 0 && t.dtype == NNP_F32 && nnp_tensor_numel(&t) == 8);
    nnp_tensor_free(&t);
    nnp_free(name);
  }
  return s;
}

static char model_path[400];

static nnp_status run_load_file(void) {
  nnp_graph *g = NULL;
  nnp_status s = nnp_onnx_load(model_path, NULL, &g);
  CHECK(s == NNP_OK || g == NULL);
  nnp_graph_destroy(g);
  return s;
}

static nnp_status run_real_model(void) {
  nnp_graph *g = NULL;
  nnp_status s = nnp_onnx_load(model_path, NULL, &g);
  if (s != NNP_OK) return s;
  nnp_plan *p = NULL;
  if (compile_mode) {
    s = nnp_plan_compile(g, NULL, &p);
    CHECK(s == NNP_OK || p == NULL);
    if (s == NNP_OK) {
      s = nnp_plan_run(p);
      nnp_plan_destroy(p);
    }
  }
  nnp_graph_destroy(g);
  return s;
}

/* ---- Cases ------------------------------------------------------------------------ */

/* Which model the engine can compile today (ops land over time). */
static bool pick_model(void) {
  for (int simple = 0; simple <= 1; simple++) {
    build_model(simple != 0);
    nnp_graph *g = NULL;
    nnp_plan *p = NULL;
    nnp_status s = nnp_onnx_load_buffer(model_buf, model_size, NULL, NULL, &g);
    CHECK_OK(s);
    if (s == NNP_OK) s = nnp_plan_compile(g, NULL, &p);
    nnp_plan_destroy(p);
    nnp_graph_destroy(g);
    if (s == NNP_OK) {
      printf("model: %s\n", simple ? "Relu -> Neg -> Identity" : "Relu -> Add -> Softmax -> Identity");
      return true;
    }
    printf("note: %s model does not compile yet: %s\n", simple ? "unary" : "full", nnp_last_error());
  }
  return false;
}

static void case_load_compile_run(void) {
  if (!pick_model()) {
    printf("note: no op of the test model is implemented; testing loading only\n");
    scenario sc = {"load", run_load};
    exhaust(&sc);
    return;
  }
  scenario sc = {"load+compile+run", run_load_compile_run};
  CHECK(exhaust(&sc) > 0);
}

static void case_load_only(void) {
  build_model(false);
  scenario sc = {"load (full model)", run_load};
  CHECK(exhaust(&sc) > 0);
}

/* The engine's contract: nnp_plan_run allocates nothing. */
static void case_run_allocates_nothing(void) {
  if (!pick_model()) return;
  nnp_graph *g = NULL;
  nnp_plan *p = NULL;
  CHECK_OK(nnp_onnx_load_buffer(model_buf, model_size, NULL, NULL, &g));
  if (g) CHECK_OK(nnp_plan_compile(g, NULL, &p));
  if (p) {
    nnp_alloc_fail_after(1);
    CHECK_OK(nnp_plan_run(p));
    CHECK_OK(nnp_plan_run(p));
    CHECK_MSG(nnp_alloc_count() == 0, "nnp_plan_run made %ld allocations", nnp_alloc_count());
    nnp_alloc_fail_after(0);
  }
  nnp_plan_destroy(p);
  nnp_graph_destroy(g);
}

static void case_parse_tensor(void) {
  Onnx__TensorProto *t = mb_tensor("b", F32, 2, dims_2x4);
  mb_float_data(t, 8, b_vals);
  tensor_buf = mb_pack_tensor(t, &tensor_size);
  scenario sc = {"parse_tensor (float_data)", run_parse_tensor};
  CHECK(exhaust(&sc) > 0);
  t->n_float_data = 0;
  mb_raw_data(t, sizeof b_vals, b_vals);
  tensor_buf = mb_pack_tensor(t, &tensor_size);
  scenario sc2 = {"parse_tensor (raw_data)", run_parse_tensor};
  CHECK(exhaust(&sc2) > 0);
}

/* From a file, with an initializer in an external data file. */
static void case_load_file_external(void) {
  char dir[256], p[320];
  make_temp_dir(dir, sizeof dir);
  snprintf(p, sizeof p, "%s/b.bin", dir);
  mb_write_file(p, b_vals, sizeof b_vals);
  Onnx__ModelProto *m = mb_model(13);
  mb_input(m, "x", F32, 2, dims_2x4);
  mb_external(mb_init(m, mb_tensor("b", F32, 2, dims_2x4)), "b.bin", "0", "32");
  mb_node(m, "Add", "add1", "x,b", "y");
  mb_output(m, "y", F32);
  snprintf(model_path, sizeof model_path, "%s/model.onnx", dir);
  mb_write_model(model_path, m);
  scenario sc = {"load file with external data", run_load_file};
  CHECK(exhaust(&sc) > 0);
  rm_tree(dir);
}

/* Real models from the ONNX test data, when installed: every node type of the
 * conformance suite that this build can compile gets the same treatment. */
static void case_real_models(void) {
  static const char *const models[] = {
      "pytorch-converted/test_Conv2d/model.onnx", "pytorch-converted/test_BatchNorm2d_eval/model.onnx",
      "node/test_reshape_reordered_all_dims/model.onnx", "node/test_gemm_default_no_bias/model.onnx",
      "node/test_maxpool_1d_default/model.onnx", "node/test_constantofshape_int_zeros/model.onnx"};
  const char *root = getenv("NNP_TESTDATA");
  if (!root) root = "/usr/share/libonnx-testdata/data";
  for (size_t i = 0; i < sizeof models / sizeof *models; i++) {
    snprintf(model_path, sizeof model_path, "%s/%s", root, models[i]);
    if (access(model_path, R_OK) != 0) {
      printf("note: %s not found, skipped\n", model_path);
      continue;
    }
    compile_mode = 1;
    nnp_status s = run_real_model();
    if (s != NNP_OK) {
      printf("note: %s: %s; testing loading only\n", models[i], nnp_last_error());
      compile_mode = 0;
    }
    char name[200];
    snprintf(name, sizeof name, "%s (%s)", models[i], compile_mode ? "load+compile+run" : "load");
    scenario sc = {name, run_real_model};
    exhaust(&sc);
  }
}

int main(void) {
  RUN(case_load_compile_run);
  RUN(case_load_only);
  RUN(case_run_allocates_nothing);
  RUN(case_parse_tensor);
  RUN(case_load_file_external);
  RUN(case_real_models);
  printf("%d allocation-failure cases, %d failed\n", cases_run, cases_failed);
  TEST_MAIN_END();
}
