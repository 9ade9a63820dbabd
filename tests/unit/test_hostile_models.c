/* Hostile models: every malformed, inconsistent or resource-hungry input must be refused
 * with a specific status and a message that names the problem, without crashing, leaking
 * or allocating what the file merely claims to need. Each case builds its model with
 * protobuf-c (no files from outside the test), runs in its own process, and is meant to
 * be run under the ASan/UBSan build (-DNNP_SANITIZE=ON). */
#include <dirent.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nnperf/alloc.h"
#include "nnperf/engine.h"
#include "nnperf/onnx.h"
#include "onnx/onnx.pb-c.h"
#include "test.h"

#define F32 ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT
#define I64 ONNX__TENSOR_PROTO__DATA_TYPE__INT64

#include "model_builder.h"

/* ---- Expectations ----------------------------------------------------------------- */

static void expect_error(nnp_status got, nnp_status want, const char *word, int line) {
  const char *msg = nnp_last_error();
  CHECK_MSG(got == want, "line %d: status '%s', expected '%s' (message: %s)", line, nnp_status_name(got),
            nnp_status_name(want), msg);
  CHECK_MSG(strstr(msg, word) != NULL, "line %d: message \"%s\" does not mention \"%s\"", line, msg, word);
  if (getenv("NNP_TEST_VERBOSE")) printf("  line %d: %s: %s\n", line, nnp_status_name(got), msg);
}

/* Loading must fail with `want`, a message containing word1 (and word2 unless NULL). */
static void expect_load_buffer(const void *buf, size_t n, const char *base_dir, const nnp_load_options *opt,
                               nnp_status want, const char *word1, const char *word2, int line) {
  nnp_graph *g = (nnp_graph *)&g; /* must be set to NULL on failure */
  nnp_status s = nnp_onnx_load_buffer(buf, n, base_dir, opt, &g);
  expect_error(s, want, word1, line);
  if (word2) expect_error(s, want, word2, line);
  CHECK_MSG(s != NNP_OK ? g == NULL : true, "line %d: failed load left *out set", line);
  if (s == NNP_OK) nnp_graph_destroy(g);
}

static void expect_load(const Onnx__ModelProto *m, nnp_status want, const char *word1, const char *word2,
                        int line) {
  size_t n;
  uint8_t *buf = mb_pack(m, &n);
  expect_load_buffer(buf, n, NULL, NULL, want, word1, word2, line);
}
#define EXPECT_LOAD(m, want, w1, w2) expect_load(m, want, w1, w2, __LINE__)

/* Loading must succeed; compiling a plan must fail with `want`. */
static void expect_compile(const Onnx__ModelProto *m, const nnp_plan_options *opt, nnp_status want,
                           const char *word1, const char *word2, int line) {
  size_t n;
  uint8_t *buf = mb_pack(m, &n);
  nnp_graph *g = NULL;
  nnp_status s = nnp_onnx_load_buffer(buf, n, NULL, NULL, &g);
  CHECK_MSG(s == NNP_OK, "line %d: load failed: %s", line, nnp_last_error());
  if (s != NNP_OK) return;
  nnp_plan *p = (nnp_plan *)&p;
  s = nnp_plan_compile(g, opt, &p);
  expect_error(s, want, word1, line);
  if (word2) expect_error(s, want, word2, line);
  CHECK_MSG(s != NNP_OK ? p == NULL : true, "line %d: failed compile left *out set", line);
  if (s == NNP_OK) nnp_plan_destroy(p);
  nnp_graph_destroy(g);
}
#define EXPECT_COMPILE(m, want, w1, w2) expect_compile(m, NULL, want, w1, w2, __LINE__)

static const int64_t dims_2x3[] = {2, 3};
static const float vals_6[] = {1, 2, 3, 4, 5, 6};

/* x[2,3] -> Relu -> y: the smallest valid model, the base most cases corrupt. */
static Onnx__ModelProto *relu_model(void) {
  Onnx__ModelProto *m = mb_model(13);
  mb_input(m, "x", F32, 2, dims_2x3);
  mb_node(m, "Relu", "relu1", "x", "y");
  mb_output(m, "y", F32);
  return m;
}

/* x[2,3] + w (initializer) -> y: the base for tensor corruptions. Returns w. */
static Onnx__TensorProto *add_init_model(Onnx__ModelProto **out) {
  Onnx__ModelProto *m = mb_model(13);
  mb_input(m, "x", F32, 2, dims_2x3);
  Onnx__TensorProto *w = mb_init_f32(m, "w", 2, dims_2x3, vals_6);
  mb_node(m, "Add", "add1", "x,w", "y");
  mb_output(m, "y", F32);
  *out = m;
  return w;
}

/* ---- Cases ------------------------------------------------------------------------ */

static void case_valid_models_load(void) { /* the bases themselves are fine */
  size_t n;
  uint8_t *buf = mb_pack(relu_model(), &n);
  nnp_graph *g = NULL;
  CHECK_OK(nnp_onnx_load_buffer(buf, n, NULL, NULL, &g));
  nnp_graph_destroy(g);
  Onnx__ModelProto *m;
  add_init_model(&m);
  buf = mb_pack(m, &n);
  CHECK_OK(nnp_onnx_load_buffer(buf, n, NULL, NULL, &g));
  nnp_graph_destroy(g);
}

static void case_empty_file(void) {
  expect_load_buffer("", 0, NULL, NULL, NNP_ERR_FORMAT, "empty", NULL, __LINE__);
  char dir[256], path[300];
  make_temp_dir(dir, sizeof dir);
  snprintf(path, sizeof path, "%s/empty.onnx", dir);
  mb_write_file(path, "", 0);
  nnp_graph *g = NULL;
  nnp_status s = nnp_onnx_load(path, NULL, &g);
  expect_error(s, NNP_ERR_FORMAT, "empty", __LINE__);
  expect_error(s, NNP_ERR_FORMAT, "empty.onnx", __LINE__); /* the file is named */
  CHECK(g == NULL);
  rm_tree(dir);
}

static void case_garbage(void) {
  uint8_t buf[1024];
  memset(buf, 0xff, sizeof buf); /* a varint that never ends */
  expect_load_buffer(buf, sizeof buf, NULL, NULL, NNP_ERR_FORMAT, "protobuf", NULL, __LINE__);
  /* Pseudo-random bytes: whatever protobuf-c makes of them, it is not a model. */
  uint32_t x = 12345;
  for (int seed = 0; seed < 300; seed++) {
    size_t n = 1 + (size_t)seed * 3;
    for (size_t i = 0; i < n; i++) {
      x = x * 1664525u + 1013904223u;
      buf[i] = (uint8_t)(x >> 24);
    }
    nnp_graph *g = NULL;
    nnp_status s = nnp_onnx_load_buffer(buf, n, NULL, NULL, &g);
    CHECK_MSG(s == NNP_ERR_FORMAT, "garbage #%d: status %s (%s)", seed, nnp_status_name(s), nnp_last_error());
    CHECK_MSG(strstr(nnp_last_error(), "ONNX model") != NULL, "garbage #%d: message %s", seed, nnp_last_error());
    CHECK(g == NULL);
    nnp_graph_destroy(g);
  }
}

static void case_truncated(void) {
  Onnx__ModelProto *m;
  add_init_model(&m);
  size_t n;
  uint8_t *full = mb_pack(m, &n);
  int failures = 0;
  for (size_t len = 0; len < n; len++) {
    uint8_t *copy = malloc(len ? len : 1); /* exact size: ASan catches any read past it */
    memcpy(copy, full, len);
    nnp_graph *g = NULL;
    nnp_status s = nnp_onnx_load_buffer(copy, len, NULL, NULL, &g);
    const char *msg = nnp_last_error();
    bool named = strstr(msg, "protobuf") || strstr(msg, "empty") || strstr(msg, "graph") || strstr(msg, "opset");
    if (s != NNP_ERR_FORMAT || !named || g) {
      if (failures++ < 5)
        fprintf(stderr, "prefix of %zu/%zu bytes: %s: %s\n", len, n, nnp_status_name(s), msg);
    }
    nnp_graph_destroy(g);
    free(copy);
  }
  CHECK_MSG(failures == 0, "%d of %zu prefixes were not refused as truncated", failures, n);
}

static void case_no_graph(void) {
  Onnx__ModelProto *m = relu_model();
  m->graph = NULL;
  EXPECT_LOAD(m, NNP_ERR_FORMAT, "no graph", NULL);
}

static void case_no_opset_import(void) {
  Onnx__ModelProto *m = relu_model();
  m->n_opset_import = 0;
  EXPECT_LOAD(m, NNP_ERR_FORMAT, "no opset", NULL);
}

static void case_no_default_domain_opset(void) {
  Onnx__ModelProto *m = relu_model();
  m->n_opset_import = 0;
  mb_opset(m, "com.example", 1); /* only a custom domain, yet a default-domain node */
  EXPECT_LOAD(m, NNP_ERR_FORMAT, "opset", "relu1");
}

static void case_opset_999(void) {
  Onnx__ModelProto *m = relu_model();
  m->opset_import[0]->version = 999;
  EXPECT_LOAD(m, NNP_ERR_UNSUPPORTED, "opset 999", NULL);
}

static void case_negative_dim_initializer(void) {
  Onnx__ModelProto *m;
  Onnx__TensorProto *w = add_init_model(&m);
  w->dims[0] = -3;
  EXPECT_LOAD(m, NNP_ERR_FORMAT, "negative dimension -3", "'w'");
}

static void case_negative_dim_input(void) {
  Onnx__ModelProto *m = relu_model();
  m->graph->input[0]->type->tensor_type->shape->dim[1]->dim_value = -7;
  EXPECT_LOAD(m, NNP_ERR_FORMAT, "negative dimension -7", "'x'");
}

static void case_dims_overflow(void) {
  Onnx__ModelProto *m;
  Onnx__TensorProto *w = add_init_model(&m);
  w->dims[0] = INT64_C(1) << 40;
  w->dims[1] = INT64_C(1) << 40; /* 2^80 elements */
  EXPECT_LOAD(m, NNP_ERR_LIMIT, "overflow", "'w'");
}

static void case_dims_too_large(void) {
  Onnx__ModelProto *m;
  Onnx__TensorProto *w = add_init_model(&m);
  w->dims[0] = INT64_C(1) << 30;
  w->dims[1] = INT64_C(1) << 20; /* 4 PiB of float: fits int64, far over the tensor limit */
  EXPECT_LOAD(m, NNP_ERR_LIMIT, "limit", "'w'");
}

static void case_raw_data_mismatch(void) {
  Onnx__ModelProto *m;
  Onnx__TensorProto *w = add_init_model(&m);
  w->n_float_data = 0;
  mb_raw_data(w, 20, vals_6); /* 2x3 float needs 24 bytes */
  EXPECT_LOAD(m, NNP_ERR_FORMAT, "raw_data has 20 bytes", "'w'");
}

static void case_typed_count_mismatch(void) {
  Onnx__ModelProto *m;
  Onnx__TensorProto *w = add_init_model(&m);
  w->n_float_data = 5;
  EXPECT_LOAD(m, NNP_ERR_FORMAT, "number of elements", "'w'");
}

static void case_typed_wrong_field(void) { /* float tensor whose data sits in int64_data */
  Onnx__ModelProto *m;
  Onnx__TensorProto *w = add_init_model(&m);
  static int64_t ints[6] = {1, 2, 3, 4, 5, 6};
  w->n_float_data = 0;
  w->n_int64_data = 6;
  w->int64_data = ints;
  EXPECT_LOAD(m, NNP_ERR_FORMAT, "number of elements", "'w'");
}

static long max_rss_kib(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

/* A tensor that declares 256 MiB of typed data and holds none must be refused before
 * that memory is allocated (the same holds for raw_data, which is checked first). */
static void case_missing_data_not_allocated(void) {
  Onnx__ModelProto *m;
  Onnx__TensorProto *w = add_init_model(&m);
  w->dims[0] = 1 << 16;
  w->dims[1] = 1 << 10;
  w->n_float_data = 0;
  long before = max_rss_kib();
  EXPECT_LOAD(m, NNP_ERR_FORMAT, "number of elements", "'w'");
  long grown_mib = (max_rss_kib() - before) / 1024;
  CHECK_MSG(grown_mib < 64, "refusing a data-less 256 MiB initializer grew the process by %ld MiB", grown_mib);
}

static void case_rank_9_tensor(void) {
  Onnx__ModelProto *m;
  Onnx__TensorProto *w = add_init_model(&m);
  static int64_t d9[9] = {1, 1, 1, 1, 1, 1, 1, 2, 3};
  w->n_dims = 9;
  w->dims = d9;
  EXPECT_LOAD(m, NNP_ERR_LIMIT, "rank 9", "'w'");
}

static void case_rank_9_input(void) {
  Onnx__ModelProto *m = mb_model(13);
  static const int64_t d9[9] = {1, 1, 1, 1, 1, 1, 1, 2, 3};
  mb_input(m, "x", F32, 9, d9);
  mb_node(m, "Relu", "relu1", "x", "y");
  mb_output(m, "y", F32);
  EXPECT_LOAD(m, NNP_ERR_LIMIT, "rank 9", "'x'");
}

static void case_unknown_data_type(void) {
  Onnx__ModelProto *m;
  Onnx__TensorProto *w = add_init_model(&m);
  w->data_type = 99;
  EXPECT_LOAD(m, NNP_ERR_UNSUPPORTED, "data type 99", "'w'");
  w->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__STRING;
  EXPECT_LOAD(m, NNP_ERR_UNSUPPORTED, "data type 8", "'w'");
  w->has_data_type = 0;
  EXPECT_LOAD(m, NNP_ERR_UNSUPPORTED, "data type", "'w'");
}

static void case_segmented_tensor(void) {
  Onnx__ModelProto *m;
  Onnx__TensorProto *w = add_init_model(&m);
  Onnx__TensorProto__Segment *seg = mb_alloc(sizeof *seg);
  onnx__tensor_proto__segment__init(seg);
  seg->has_begin = seg->has_end = 1;
  seg->end = 3;
  w->segment = seg;
  EXPECT_LOAD(m, NNP_ERR_UNSUPPORTED, "segmented", "'w'");
}

static void case_initializer_without_name(void) {
  Onnx__ModelProto *m;
  Onnx__TensorProto *w = add_init_model(&m);
  w->name = mb_str("");
  EXPECT_LOAD(m, NNP_ERR_FORMAT, "no name", NULL);
}

static void case_duplicate_initializer(void) {
  Onnx__ModelProto *m;
  add_init_model(&m);
  mb_init_f32(m, "w", 2, dims_2x3, vals_6);
  EXPECT_LOAD(m, NNP_ERR_FORMAT, "twice", "'w'");
}

static void case_duplicate_graph_input(void) {
  Onnx__ModelProto *m = relu_model();
  mb_input(m, "x", F32, 2, dims_2x3);
  EXPECT_LOAD(m, NNP_ERR_FORMAT, "twice", "'x'");
}

static void case_duplicate_graph_output(void) {
  Onnx__ModelProto *m = relu_model();
  mb_output(m, "y", F32);
  EXPECT_LOAD(m, NNP_ERR_FORMAT, "twice", "'y'");
}

static void case_non_tensor_input(void) {
  Onnx__ModelProto *m = relu_model();
  Onnx__TypeProto *tp = m->graph->input[0]->type;
  Onnx__TypeProto__Sequence *seq = mb_alloc(sizeof *seq);
  onnx__type_proto__sequence__init(seq);
  tp->value_case = ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE;
  tp->sequence_type = seq;
  EXPECT_LOAD(m, NNP_ERR_UNSUPPORTED, "not a tensor", "'x'");
}

static void case_sparse_initializer(void) {
  Onnx__ModelProto *m = relu_model();
  Onnx__SparseTensorProto *sp = mb_alloc(sizeof *sp);
  onnx__sparse_tensor_proto__init(sp);
  Onnx__SparseTensorProto *list[1] = {sp};
  m->graph->n_sparse_initializer = 1;
  m->graph->sparse_initializer = list;
  EXPECT_LOAD(m, NNP_ERR_UNSUPPORTED, "sparse", NULL);
}

static void case_undefined_node_input(void) {
  Onnx__ModelProto *m = mb_model(13);
  mb_input(m, "x", F32, 2, dims_2x3);
  mb_node(m, "Add", "add1", "x,ghost", "y");
  mb_output(m, "y", F32);
  EXPECT_LOAD(m, NNP_ERR_FORMAT, "'ghost'", "add1");
}

static void case_two_producers(void) {
  Onnx__ModelProto *m = relu_model();
  mb_node(m, "Neg", "neg1", "x", "y");
  EXPECT_LOAD(m, NNP_ERR_FORMAT, "produced by two nodes", "'y'");
}

static void case_cycle(void) { /* a -> b -> a */
  Onnx__ModelProto *m = mb_model(13);
  mb_input(m, "x", F32, 2, dims_2x3);
  mb_node(m, "Add", "n_a", "x,b", "a");
  mb_node(m, "Relu", "n_b", "a", "b");
  mb_output(m, "b", F32);
  EXPECT_LOAD(m, NNP_ERR_FORMAT, "cycle", NULL);
}

static void case_self_loop(void) {
  Onnx__ModelProto *m = mb_model(13);
  mb_input(m, "x", F32, 2, dims_2x3);
  mb_node(m, "Add", "loop", "x,a", "a");
  mb_output(m, "a", F32);
  EXPECT_LOAD(m, NNP_ERR_FORMAT, "cycle", "'loop'");
}

static void case_output_not_produced(void) {
  Onnx__ModelProto *m = relu_model();
  mb_output(m, "nowhere", F32);
  EXPECT_LOAD(m, NNP_ERR_FORMAT, "not defined by any node", "'nowhere'");
}

static void case_no_outputs(void) {
  Onnx__ModelProto *m = relu_model();
  m->graph->n_output = 0;
  EXPECT_LOAD(m, NNP_ERR_FORMAT, "no outputs", NULL);
}

static void case_node_writes_graph_input(void) {
  Onnx__ModelProto *m = relu_model();
  mb_node(m, "Neg", "clobber", "y", "x");
  EXPECT_LOAD(m, NNP_ERR_FORMAT, "graph input", "'clobber'");
}

static void case_node_writes_initializer(void) {
  Onnx__ModelProto *m;
  add_init_model(&m);
  mb_node(m, "Neg", "clobber", "x", "w");
  EXPECT_LOAD(m, NNP_ERR_FORMAT, "initializer", "'clobber'");
}

static void case_node_without_op_type(void) {
  Onnx__ModelProto *m = relu_model();
  m->graph->node[0]->op_type = mb_str("");
  EXPECT_LOAD(m, NNP_ERR_FORMAT, "no op_type", NULL);
}

static void case_attribute_twice(void) {
  Onnx__ModelProto *m = relu_model();
  mb_attr_int(m->graph->node[0], "alpha", 1);
  mb_attr_int(m->graph->node[0], "alpha", 2);
  EXPECT_LOAD(m, NNP_ERR_FORMAT, "'alpha' twice", "relu1");
}

static void case_attribute_without_name(void) {
  Onnx__ModelProto *m = relu_model();
  mb_attr_int(m->graph->node[0], "", 1);
  EXPECT_LOAD(m, NNP_ERR_FORMAT, "without a name", "relu1");
}

static void case_too_many_node_inputs(void) {
  Onnx__ModelProto *m = relu_model();
  Onnx__NodeProto *n = m->graph->node[0];
  n->n_input = 100001;
  n->input = mb_alloc(n->n_input * sizeof(char *));
  for (size_t i = 0; i < n->n_input; i++) n->input[i] = (char *)"x";
  EXPECT_LOAD(m, NNP_ERR_LIMIT, "too many inputs", NULL);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A node with 100,000 attributes (a 1.5 MB file): refused by a limit or loaded, but in
 * reasonable time (no quadratic work per attribute). */
static void case_many_attributes(void) {
  Onnx__ModelProto *m = relu_model();
  Onnx__NodeProto *n = m->graph->node[0];
  enum { N_ATTRS = 100000 };
  n->attribute = mb_alloc(N_ATTRS * sizeof(void *));
  for (int i = 0; i < N_ATTRS; i++) {
    char name[32];
    snprintf(name, sizeof name, "attr_%d", i);
    mb_attr_int(n, name, i);
  }
  size_t sz;
  uint8_t *buf = mb_pack(m, &sz);
  alarm(20); /* the quadratic version takes minutes: fail it sooner */
  double t0 = now_s();
  nnp_graph *g = NULL;
  nnp_status s = nnp_onnx_load_buffer(buf, sz, NULL, NULL, &g);
  double dt = now_s() - t0;
  CHECK_MSG(s == NNP_OK || s == NNP_ERR_LIMIT, "%s: %s", nnp_status_name(s), nnp_last_error());
  CHECK_MSG(dt < 5.0, "loading a node with %d attributes took %.1f s", N_ATTRS, dt);
  if (getenv("NNP_TEST_VERBOSE")) printf("  %d attributes: %s in %.2f s\n", N_ATTRS, nnp_status_name(s), dt);
  nnp_graph_destroy(g);
}

/* A chain of 20,000 nodes loads and compiles in reasonable time (no recursion, nothing
 * quadratic). */
static void case_long_chain(void) {
  enum { N_NODES = 20000 };
  Onnx__ModelProto *m = mb_model(13);
  Onnx__GraphProto *gp = m->graph;
  gp->node = mb_alloc(N_NODES * sizeof(void *));
  static const int64_t d1[1] = {4};
  mb_input(m, "v0", F32, 1, d1);
  for (int i = 0; i < N_NODES; i++) {
    char in[32], out[32], name[32];
    snprintf(in, sizeof in, "v%d", i);
    snprintf(out, sizeof out, "v%d", i + 1);
    snprintf(name, sizeof name, "n%d", i);
    mb_node(m, "Relu", name, in, out);
  }
  /* Reverse the file order: the loader must sort them. */
  for (int i = 0; i < N_NODES / 2; i++) {
    Onnx__NodeProto *t = gp->node[i];
    gp->node[i] = gp->node[N_NODES - 1 - i];
    gp->node[N_NODES - 1 - i] = t;
  }
  char last[32];
  snprintf(last, sizeof last, "v%d", N_NODES);
  mb_output(m, last, F32);
  size_t sz;
  uint8_t *buf = mb_pack(m, &sz);
  double t0 = now_s();
  nnp_graph *g = NULL;
  CHECK_OK(nnp_onnx_load_buffer(buf, sz, NULL, NULL, &g));
  nnp_plan *p = NULL;
  if (g) CHECK_OK(nnp_plan_compile(g, NULL, &p));
  if (p) CHECK_OK(nnp_plan_run(p));
  double dt = now_s() - t0;
  CHECK_MSG(dt < 10.0, "a chain of %d nodes took %.1f s", N_NODES, dt);
  if (getenv("NNP_TEST_VERBOSE")) printf("  chain of %d nodes: %.2f s\n", N_NODES, dt);
  nnp_plan_destroy(p);
  nnp_graph_destroy(g);
}

static void case_unsupported_op(void) {
  Onnx__ModelProto *m = mb_model(13);
  mb_input(m, "x", F32, 2, dims_2x3);
  mb_node(m, "FancyOp", "fancy1", "x", "t");
  mb_node(m, "Relu", "relu1", "t", "u");
  mb_node(m, "WeirdOp", "weird1", "u", "y");
  mb_output(m, "y", F32);
  EXPECT_COMPILE(m, NNP_ERR_UNSUPPORTED, "unsupported op", "FancyOp");
  EXPECT_COMPILE(m, NNP_ERR_UNSUPPORTED, "'fancy1'", "WeirdOp (node 'weird1')"); /* every one listed */
  /* An op of a custom domain is unsupported too, and reported with its domain. */
  m = mb_model(13);
  mb_opset(m, "com.example", 1);
  mb_input(m, "x", F32, 2, dims_2x3);
  mb_node(m, "Relu", "custom1", "x", "y")->domain = mb_str("com.example");
  mb_output(m, "y", F32);
  EXPECT_COMPILE(m, NNP_ERR_UNSUPPORTED, "com.example.Relu", "'custom1'");
}

/* Single-input ops, each tried with its required input or its output omitted (the
 * empty name). Ops that are not implemented yet are refused as unsupported, which is
 * fine too. Each op runs in its own process so that one crash does not hide the rest. */
static const char *const single_input_ops[] = {
    "Relu", "Sigmoid", "Identity", "Neg", "Clip", "Dropout", "Softmax", "LogSoftmax", "ArgMax", "ReduceMean",
    "ReduceSum", "Shape", "Size", "Flatten", "Squeeze", "GlobalAveragePool", "MaxPool", "Transpose"};
static const char *current_op;

static void omitted_input_one(void) {
  Onnx__ModelProto *m = mb_model(13);
  mb_input(m, "x", F32, 2, dims_2x3);
  Onnx__NodeProto *n = mb_node(m, current_op, "the_node", "", "y");
  n->n_input = 1;
  n->input[0] = mb_str(""); /* present but empty: "omitted" */
  mb_output(m, "y", F32);
  size_t sz;
  uint8_t *buf = mb_pack(m, &sz);
  nnp_graph *g = NULL;
  CHECK_OK(nnp_onnx_load_buffer(buf, sz, NULL, NULL, &g));
  if (!g) return;
  nnp_plan *p = NULL;
  nnp_status s = nnp_plan_compile(g, NULL, &p);
  const char *msg = nnp_last_error();
  if (s != NNP_ERR_UNSUPPORTED) {
    CHECK_MSG(s == NNP_ERR_FORMAT || s == NNP_ERR_SHAPE, "%s: %s: %s", current_op, nnp_status_name(s), msg);
    CHECK_MSG(strstr(msg, "input") && strstr(msg, "'the_node'"), "%s: message: %s", current_op, msg);
  }
  nnp_plan_destroy(p);
  nnp_graph_destroy(g);
}

static void omitted_output_one(void) {
  static const int64_t d4[4] = {1, 2, 3, 3};
  Onnx__ModelProto *m = mb_model(13);
  mb_input(m, "x", F32, 4, d4);
  Onnx__NodeProto *n = mb_node(m, current_op, "the_node", "x", "");
  n->n_output = 1;
  n->output[0] = mb_str(""); /* present but empty: "omitted" */
  mb_node(m, "Neg", "neg1", "x", "y");
  mb_output(m, "y", F32);
  size_t sz;
  uint8_t *buf = mb_pack(m, &sz);
  nnp_graph *g = NULL;
  CHECK_OK(nnp_onnx_load_buffer(buf, sz, NULL, NULL, &g));
  if (!g) return;
  nnp_plan *p = NULL;
  nnp_status s = nnp_plan_compile(g, NULL, &p);
  if (s == NNP_OK) { /* accepted: then running it must be harmless */
    CHECK_OK(nnp_plan_run(p));
    nnp_plan_destroy(p);
  } else {
    CHECK_MSG(s == NNP_ERR_FORMAT || s == NNP_ERR_UNSUPPORTED || s == NNP_ERR_SHAPE, "%s: %s: %s", current_op,
              nnp_status_name(s), nnp_last_error());
  }
  nnp_graph_destroy(g);
}

/* Empty tensors (a dimension of 0) are valid and must flow through every op without
 * touching memory (a kernel given 0 elements gets NULL-sized buffers and scratch). */
static void zero_size_shape(int rank, const int64_t *d) {
  Onnx__ModelProto *m = mb_model(13);
  mb_input(m, "x", F32, rank, d);
  Onnx__NodeProto *n = mb_node(m, current_op, "the_node", "x", "y");
  if (strcmp(current_op, "Softmax") == 0 || strcmp(current_op, "LogSoftmax") == 0 || strcmp(current_op, "ArgMax") == 0)
    mb_attr_int(n, "axis", 1);
  mb_output(m, "y", strcmp(current_op, "ArgMax") == 0 ? I64 : F32);
  size_t sz;
  uint8_t *buf = mb_pack(m, &sz);
  nnp_graph *g = NULL;
  CHECK_OK(nnp_onnx_load_buffer(buf, sz, NULL, NULL, &g));
  if (!g) return;
  nnp_plan *p = NULL;
  nnp_status s = nnp_plan_compile(g, NULL, &p);
  if (s == NNP_OK) {
    CHECK_OK(nnp_plan_run(p));
    nnp_plan_destroy(p);
  } else {
    CHECK_MSG(s == NNP_ERR_UNSUPPORTED || s == NNP_ERR_SHAPE || s == NNP_ERR_FORMAT, "%s on an empty tensor: %s: %s",
              current_op, nnp_status_name(s), nnp_last_error());
  }
  nnp_graph_destroy(g);
}

static void zero_size_one(void) {
  static const int64_t d_mid[4] = {1, 0, 3, 3}, d_last[3] = {1, 3, 0};
  zero_size_shape(4, d_mid);
  zero_size_shape(3, d_last);
}

static void case_zero_size_tensors(void) {
  for (size_t i = 0; i < sizeof single_input_ops / sizeof *single_input_ops; i++) {
    char name[64];
    snprintf(name, sizeof name, "empty tensor through %s", single_input_ops[i]);
    current_op = single_input_ops[i];
    run_case(name, zero_size_one);
  }
}

static void case_omitted_required_input(void) {
  for (size_t i = 0; i < sizeof single_input_ops / sizeof *single_input_ops; i++) {
    char name[64];
    snprintf(name, sizeof name, "omitted input of %s", single_input_ops[i]);
    current_op = single_input_ops[i];
    run_case(name, omitted_input_one);
  }
}

static void case_omitted_output(void) {
  for (size_t i = 0; i < sizeof single_input_ops / sizeof *single_input_ops; i++) {
    char name[64];
    snprintf(name, sizeof name, "omitted output of %s", single_input_ops[i]);
    current_op = single_input_ops[i];
    run_case(name, omitted_output_one);
  }
}

/* Graphs without nodes: compile-time checks on the inputs alone. */
static Onnx__ModelProto *passthrough_model(int rank, const int64_t *dims) {
  Onnx__ModelProto *m = mb_model(13);
  mb_input(m, "the_input", F32, rank, dims);
  mb_output(m, "the_input", F32);
  return m;
}

static void case_input_without_shape(void) {
  EXPECT_COMPILE(passthrough_model(-1, NULL), NNP_ERR_SHAPE, "no declared shape", "'the_input'");
  Onnx__ModelProto *m = relu_model();
  m->graph->input[0]->type->tensor_type->shape = NULL;
  EXPECT_COMPILE(m, NNP_ERR_SHAPE, "no declared shape", "'x'");
}

static void case_huge_input_dims(void) {
  /* 2^50 floats (4 PiB): must be refused by the size limit, not attempted. */
  static const int64_t peta[2] = {INT64_C(1) << 25, INT64_C(1) << 25};
  EXPECT_COMPILE(passthrough_model(2, peta), NNP_ERR_LIMIT, "limit", "'the_input'");
  /* A product that overflows int64. */
  static const int64_t ovf[3] = {INT64_C(1) << 30, INT64_C(1) << 30, INT64_C(1) << 30};
  EXPECT_COMPILE(passthrough_model(3, ovf), NNP_ERR_LIMIT, "overflow", "'the_input'");
  /* Symbolic dims bound to a huge value by the caller: same limit. */
  static const int64_t sym[2] = {-1, -1};
  nnp_plan_options opt;
  nnp_plan_options_default(&opt);
  opt.default_dim = INT64_C(1) << 20; /* 2^40 floats: 4 TiB */
  expect_compile(passthrough_model(2, sym), &opt, NNP_ERR_LIMIT, "limit", "'the_input'", __LINE__);
  /* A negative bound to a symbolic dim. */
  opt.default_dim = -5;
  expect_compile(passthrough_model(2, sym), &opt, NNP_ERR_SHAPE, "negative", "'the_input'", __LINE__);
}

static void case_max_nodes(void) {
  Onnx__ModelProto *m = mb_model(13);
  mb_input(m, "x", F32, 2, dims_2x3);
  mb_node(m, "Relu", "r1", "x", "a");
  mb_node(m, "Relu", "r2", "a", "b");
  mb_node(m, "Relu", "r3", "b", "c");
  mb_node(m, "Relu", "r4", "c", "d");
  mb_node(m, "Relu", "r5", "d", "y");
  mb_output(m, "y", F32);
  size_t n;
  uint8_t *buf = mb_pack(m, &n);
  nnp_load_options opt;
  nnp_load_options_default(&opt);
  opt.max_nodes = 4;
  expect_load_buffer(buf, n, NULL, &opt, NNP_ERR_LIMIT, "5 nodes", "limit of 4", __LINE__);
  opt.max_nodes = 5; /* at the limit: fine */
  nnp_graph *g = NULL;
  CHECK_OK(nnp_onnx_load_buffer(buf, n, NULL, &opt, &g));
  nnp_graph_destroy(g);
}

static void case_max_file_bytes(void) {
  size_t n;
  uint8_t *buf = mb_pack(relu_model(), &n);
  nnp_load_options opt;
  nnp_load_options_default(&opt);
  opt.max_file_bytes = n - 1;
  expect_load_buffer(buf, n, NULL, &opt, NNP_ERR_LIMIT, "limit", NULL, __LINE__);
  /* From a file: refused by its size, before it is read. */
  char dir[256], path[300];
  make_temp_dir(dir, sizeof dir);
  snprintf(path, sizeof path, "%s/big.onnx", dir);
  mb_write_file(path, buf, n);
  nnp_graph *g = NULL;
  nnp_status s = nnp_onnx_load(path, &opt, &g);
  expect_error(s, NNP_ERR_LIMIT, "limit", __LINE__);
  expect_error(s, NNP_ERR_LIMIT, "big.onnx", __LINE__);
  CHECK(g == NULL);
  opt.max_file_bytes = n;
  CHECK_OK(nnp_onnx_load(path, &opt, &g));
  nnp_graph_destroy(g);
  rm_tree(dir);
}

static void case_not_a_file(void) {
  nnp_graph *g = NULL;
  nnp_status s = nnp_onnx_load("/nonexistent/nnperf/model.onnx", NULL, &g);
  expect_error(s, NNP_ERR_IO, "cannot open", __LINE__);
  expect_error(s, NNP_ERR_IO, "/nonexistent/nnperf/model.onnx", __LINE__);
  CHECK(g == NULL);
  char dir[256];
  make_temp_dir(dir, sizeof dir);
  s = nnp_onnx_load(dir, NULL, &g); /* a folder */
  expect_error(s, NNP_ERR_IO, "not a regular file", __LINE__);
  CHECK(g == NULL);
  /* A named pipe: refused as not a regular file, not waited on until a writer appears. */
  char fifo[300];
  snprintf(fifo, sizeof fifo, "%s/model.onnx", dir);
  if (mkfifo(fifo, 0600) == 0) {
    alarm(10);
    s = nnp_onnx_load(fifo, NULL, &g);
    alarm(0);
    expect_error(s, NNP_ERR_IO, "not a regular file", __LINE__);
    CHECK(g == NULL);
  } else {
    perror("mkfifo");
  }
  rm_tree(dir);
}

/* ---- External data ---------------------------------------------------------------- */

/* tmp/outside.bin (48 bytes), tmp/model/ (the model folder) with in.bin (24 bytes).
 * Writes a model whose initializer w (2x3 float) is external with the given location,
 * loads it from tmp/model/model.onnx, and checks the result. */
static void expect_external(const char *location, const char *offset, void (*prepare)(const char *tmp),
                            nnp_status want, const char *word1, const char *word2, int line) {
  char tmp[256], model_dir[300], path[400];
  make_temp_dir(tmp, sizeof tmp);
  snprintf(model_dir, sizeof model_dir, "%s/model", tmp);
  mkdir(model_dir, 0700);
  float data[12] = {0};
  snprintf(path, sizeof path, "%s/outside.bin", tmp);
  mb_write_file(path, data, sizeof data);
  snprintf(path, sizeof path, "%s/in.bin", model_dir);
  mb_write_file(path, data, 6 * sizeof(float));
  if (prepare) prepare(tmp);
  Onnx__ModelProto *m;
  Onnx__TensorProto *w = add_init_model(&m);
  w->n_float_data = 0;
  mb_external(w, location, offset, NULL);
  snprintf(path, sizeof path, "%s/model.onnx", model_dir);
  mb_write_model(path, m);
  nnp_graph *g = NULL;
  nnp_status s = nnp_onnx_load(path, NULL, &g);
  expect_error(s, want, word1, line);
  if (word2) expect_error(s, want, word2, line);
  CHECK_MSG(s == NNP_OK || g == NULL, "line %d: failed load left *out set", line);
  nnp_graph_destroy(g);
  rm_tree(tmp);
}

static void case_external_absolute(void) {
  expect_external("/etc/passwd", NULL, NULL, NNP_ERR_INVALID, "absolute", "'w'", __LINE__);
}

static void case_external_dotdot(void) {
  expect_external("../outside.bin", NULL, NULL, NNP_ERR_INVALID, "'..'", "'w'", __LINE__);
  expect_external("sub/../../outside.bin", NULL, NULL, NNP_ERR_INVALID, "'..'", "'w'", __LINE__);
}

static void make_escape_link(const char *tmp) {
  char target[300], link[300];
  snprintf(target, sizeof target, "%s/outside.bin", tmp);
  snprintf(link, sizeof link, "%s/model/escape.bin", tmp);
  if (symlink(target, link) != 0) perror("symlink");
}
static void make_escape_dir_link(const char *tmp) {
  char link[300];
  snprintf(link, sizeof link, "%s/model/etc", tmp);
  if (symlink("/etc", link) != 0) perror("symlink");
}

static void case_external_symlink_escape(void) {
  expect_external("escape.bin", NULL, make_escape_link, NNP_ERR_INVALID, "outside the model's folder", "'w'",
                  __LINE__);
  expect_external("etc/passwd", NULL, make_escape_dir_link, NNP_ERR_INVALID, "outside the model's folder",
                  "'w'", __LINE__);
}

static void case_external_too_small(void) {
  expect_external("in.bin", "4", NULL, NNP_ERR_FORMAT, "too small", "'w'", __LINE__); /* 4 + 24 > 24 */
  expect_external("in.bin", "1000", NULL, NNP_ERR_FORMAT, "too small", "'w'", __LINE__);
  expect_external("in.bin", "18446744073709551615", NULL, NNP_ERR_FORMAT, "too small", "'w'", __LINE__);
  expect_external("in.bin", "0", NULL, NNP_OK, "", NULL, __LINE__); /* exactly fits */
}

static void case_external_without_base_dir(void) {
  Onnx__ModelProto *m;
  Onnx__TensorProto *w = add_init_model(&m);
  w->n_float_data = 0;
  mb_external(w, "in.bin", NULL, NULL);
  EXPECT_LOAD(m, NNP_ERR_INVALID, "external data", "'w'");
}

int main(void) {
  RUN(case_valid_models_load);
  RUN(case_empty_file);
  RUN(case_garbage);
  RUN(case_truncated);
  RUN(case_no_graph);
  RUN(case_no_opset_import);
  RUN(case_no_default_domain_opset);
  RUN(case_opset_999);
  RUN(case_negative_dim_initializer);
  RUN(case_negative_dim_input);
  RUN(case_dims_overflow);
  RUN(case_dims_too_large);
  RUN(case_raw_data_mismatch);
  RUN(case_typed_count_mismatch);
  RUN(case_typed_wrong_field);
  RUN(case_missing_data_not_allocated);
  RUN(case_rank_9_tensor);
  RUN(case_rank_9_input);
  RUN(case_unknown_data_type);
  RUN(case_segmented_tensor);
  RUN(case_initializer_without_name);
  RUN(case_duplicate_initializer);
  RUN(case_duplicate_graph_input);
  RUN(case_duplicate_graph_output);
  RUN(case_non_tensor_input);
  RUN(case_sparse_initializer);
  RUN(case_undefined_node_input);
  RUN(case_two_producers);
  RUN(case_cycle);
  RUN(case_self_loop);
  RUN(case_output_not_produced);
  RUN(case_no_outputs);
  RUN(case_node_writes_graph_input);
  RUN(case_node_writes_initializer);
  RUN(case_node_without_op_type);
  RUN(case_attribute_twice);
  RUN(case_attribute_without_name);
  RUN(case_too_many_node_inputs);
  RUN(case_many_attributes);
  RUN(case_long_chain);
  RUN(case_unsupported_op);
  RUN(case_omitted_required_input);
  RUN(case_omitted_output);
  RUN(case_zero_size_tensors);
  RUN(case_input_without_shape);
  RUN(case_huge_input_dims);
  RUN(case_max_nodes);
  RUN(case_max_file_bytes);
  RUN(case_not_a_file);
  RUN(case_external_absolute);
  RUN(case_external_dotdot);
  RUN(case_external_symlink_escape);
  RUN(case_external_too_small);
  RUN(case_external_without_base_dir);
  printf("%d hostile-model cases, %d failed\n", cases_run, cases_failed);
  TEST_MAIN_END();
}
