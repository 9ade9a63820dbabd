/* External tensor data: an initializer stored in a separate file at an offset loads with
 * the right values; locations that would leave the model's folder, and files or fields
 * that do not fit, are refused with a message that names the problem. */
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

#define F32 ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT
#define I64 ONNX__TENSOR_PROTO__DATA_TYPE__INT64

#include "model_builder.h"

static const int64_t dims_2x3[] = {2, 3};
static const float w_vals[6] = {0.5f, -1.25f, 2.0f, 3.5f, -4.0f, 1e-3f};

/* Folder layout of every case:
 *   tmp/model/            the model's folder: model.onnx, weights.bin, sub/more.bin
 *   tmp/model_evil/       a sibling whose name starts with the model folder's
 *   tmp/outside.bin       a file outside the model's folder
 * weights.bin: 16 bytes of padding, then w_vals (24 bytes), then 8 more bytes. */
static char tmp[256], model_dir[320];

static void path_in(char *out, size_t n, const char *rel) { snprintf(out, n, "%s/%s", tmp, rel); }

static void setup(void) {
  make_temp_dir(tmp, sizeof tmp);
  char p[512];
  path_in(p, sizeof p, "model");
  snprintf(model_dir, sizeof model_dir, "%s", p);
  mkdir(p, 0700);
  path_in(p, sizeof p, "model/sub");
  mkdir(p, 0700);
  path_in(p, sizeof p, "model_evil");
  mkdir(p, 0700);
  uint8_t blob[48];
  memset(blob, 0xAB, sizeof blob);
  memcpy(blob + 16, w_vals, sizeof w_vals);
  path_in(p, sizeof p, "model/weights.bin");
  mb_write_file(p, blob, sizeof blob);
  path_in(p, sizeof p, "model/sub/more.bin");
  mb_write_file(p, w_vals, sizeof w_vals);
  path_in(p, sizeof p, "model_evil/w.bin");
  mb_write_file(p, w_vals, sizeof w_vals);
  path_in(p, sizeof p, "outside.bin");
  mb_write_file(p, w_vals, sizeof w_vals);
}

static void teardown(void) { rm_tree(tmp); }

static void link_in_model(const char *target, const char *name) {
  char p[512];
  snprintf(p, sizeof p, "%s/%s", model_dir, name);
  if (symlink(target, p) != 0) perror("symlink");
}

/* x[2,3] + w -> y with w external at location/offset/length (NULL: left out). */
static Onnx__ModelProto *ext_model(const char *location, const char *offset, const char *length,
                                   Onnx__TensorProto **w_out) {
  Onnx__ModelProto *m = mb_model(13);
  mb_input(m, "x", F32, 2, dims_2x3);
  Onnx__TensorProto *w = mb_init(m, mb_tensor("w", F32, 2, dims_2x3));
  mb_external(w, location, offset, length);
  mb_node(m, "Add", "add1", "x,w", "y");
  mb_output(m, "y", F32);
  if (w_out) *w_out = w;
  return m;
}

static nnp_status load_model(const Onnx__ModelProto *m, nnp_graph **g) {
  char p[512];
  snprintf(p, sizeof p, "%s/model.onnx", model_dir);
  mb_write_model(p, m);
  *g = (nnp_graph *)g;
  return nnp_onnx_load(p, NULL, g);
}

static void check_w(const nnp_graph *g, int line) {
  int v = nnp_graph_find_value(g, "w");
  CHECK_MSG(v >= 0, "line %d: no value w", line);
  if (v < 0) return;
  const nnp_tensor *t = g->values[v].init;
  CHECK_MSG(t != NULL, "line %d: w has no data", line);
  if (!t) return;
  CHECK(t->dtype == NNP_F32 && t->rank == 2 && t->dims[0] == 2 && t->dims[1] == 3);
  CHECK_MSG(memcmp(t->data, w_vals, sizeof w_vals) == 0, "line %d: w has the wrong values", line);
}

static void expect_ok(const char *location, const char *offset, const char *length, int line) {
  nnp_graph *g;
  nnp_status s = load_model(ext_model(location, offset, length, NULL), &g);
  CHECK_MSG(s == NNP_OK, "line %d: %s (offset %s): %s: %s", line, location, offset ? offset : "-",
            nnp_status_name(s), nnp_last_error());
  if (s == NNP_OK) check_w(g, line);
  nnp_graph_destroy(s == NNP_OK ? g : NULL);
}

static void expect_fail(const Onnx__ModelProto *m, nnp_status want, const char *word1, const char *word2,
                        int line) {
  nnp_graph *g;
  nnp_status s = load_model(m, &g);
  const char *msg = nnp_last_error();
  CHECK_MSG(s == want, "line %d: status '%s', expected '%s' (%s)", line, nnp_status_name(s), nnp_status_name(want),
            msg);
  CHECK_MSG(strstr(msg, word1) != NULL, "line %d: message \"%s\" does not mention \"%s\"", line, msg, word1);
  if (word2) CHECK_MSG(strstr(msg, word2) != NULL, "line %d: message \"%s\" does not mention \"%s\"", line, msg, word2);
  CHECK_MSG(s == NNP_OK || g == NULL, "line %d: failed load left *out set", line);
  if (getenv("NNP_TEST_VERBOSE")) printf("  line %d: %s: %s\n", line, nnp_status_name(s), msg);
  if (s == NNP_OK) nnp_graph_destroy(g);
}
#define EXPECT_FAIL(m, want, w1, w2) expect_fail(m, want, w1, w2, __LINE__)
#define EXT(loc, off, len) ext_model(loc, off, len, NULL)

/* ---- Positive cases --------------------------------------------------------------- */

static void case_offset_and_length(void) {
  setup();
  expect_ok("weights.bin", "16", "24", __LINE__);
  expect_ok("weights.bin", "16", NULL, __LINE__); /* length defaults to the shape's size */
  expect_ok("./weights.bin", "16", "24", __LINE__);
  expect_ok("sub/more.bin", NULL, NULL, __LINE__); /* offset defaults to 0 */
  expect_ok("sub/more.bin", "0", "24", __LINE__);
  link_in_model("weights.bin", "alias.bin"); /* a symlink that stays inside is fine */
  expect_ok("alias.bin", "16", "24", __LINE__);
  teardown();
}

/* The values also reach a compiled plan: y = x + w. */
static void case_values_through_plan(void) {
  setup();
  nnp_graph *g;
  nnp_status s = load_model(ext_model("weights.bin", "16", "24", NULL), &g);
  CHECK_OK(s);
  if (s != NNP_OK) {
    teardown();
    return;
  }
  nnp_plan *p = NULL;
  s = nnp_plan_compile(g, NULL, &p);
  if (s == NNP_ERR_UNSUPPORTED) {
    printf("note: %s, so the plan part is skipped\n", nnp_last_error());
  } else {
    CHECK_OK(s);
  }
  if (s == NNP_OK) {
    nnp_tensor *x = nnp_plan_input(p, 0);
    for (int i = 0; i < 6; i++) ((float *)x->data)[i] = (float)i;
    CHECK_OK(nnp_plan_run(p));
    const nnp_tensor *y = nnp_plan_output(p, 0);
    CHECK(y->dtype == NNP_F32 && nnp_tensor_numel(y) == 6);
    for (int i = 0; i < 6; i++) CHECK_NEAR(((const float *)y->data)[i], (float)i + w_vals[i], 1e-6);
    nnp_plan_destroy(p);
  }
  nnp_graph_destroy(g);
  teardown();
}

/* Two initializers sharing one file at different offsets, the way exporters write them. */
static void case_shared_file(void) {
  setup();
  float blob[12];
  for (int i = 0; i < 12; i++) blob[i] = (float)(i * i);
  char p[512];
  snprintf(p, sizeof p, "%s/all.bin", model_dir);
  mb_write_file(p, blob, sizeof blob);
  Onnx__ModelProto *m = mb_model(13);
  mb_input(m, "x", F32, 2, dims_2x3);
  mb_external(mb_init(m, mb_tensor("a", F32, 2, dims_2x3)), "all.bin", "0", "24");
  mb_external(mb_init(m, mb_tensor("b", F32, 2, dims_2x3)), "all.bin", "24", "24");
  mb_node(m, "Add", "add1", "a,b", "y");
  mb_output(m, "y", F32);
  nnp_graph *g;
  nnp_status s = load_model(m, &g);
  CHECK_OK(s);
  if (s == NNP_OK) {
    const nnp_tensor *a = g->values[nnp_graph_find_value(g, "a")].init;
    const nnp_tensor *b = g->values[nnp_graph_find_value(g, "b")].init;
    CHECK(a && b && memcmp(a->data, blob, 24) == 0 && memcmp(b->data, blob + 6, 24) == 0);
    nnp_graph_destroy(g);
  }
  teardown();
}

/* int64 external data (shapes are often stored this way too). */
static void case_int64(void) {
  setup();
  int64_t vals[3] = {-1, INT64_MAX, 42};
  char p[512];
  snprintf(p, sizeof p, "%s/i64.bin", model_dir);
  mb_write_file(p, vals, sizeof vals);
  Onnx__ModelProto *m = mb_model(13);
  static const int64_t d3[1] = {3};
  mb_input(m, "x", F32, 2, dims_2x3);
  mb_external(mb_init(m, mb_tensor("s", I64, 1, d3)), "i64.bin", NULL, "24");
  mb_node(m, "Relu", "r", "x", "y");
  mb_output(m, "y", F32);
  nnp_graph *g;
  nnp_status s = load_model(m, &g);
  CHECK_OK(s);
  if (s == NNP_OK) {
    const nnp_tensor *t = g->values[nnp_graph_find_value(g, "s")].init;
    CHECK(t && t->dtype == NNP_I64 && memcmp(t->data, vals, sizeof vals) == 0);
    nnp_graph_destroy(g);
  }
  teardown();
}

/* ---- Escapes ---------------------------------------------------------------------- */

static void case_absolute_path(void) {
  setup();
  char p[512];
  path_in(p, sizeof p, "model/weights.bin"); /* absolute even though it points inside */
  EXPECT_FAIL(EXT(p, "16", NULL), NNP_ERR_INVALID, "absolute", "'w'");
  EXPECT_FAIL(EXT("/etc/passwd", NULL, NULL), NNP_ERR_INVALID, "absolute", "'w'");
  teardown();
}

static void case_dotdot(void) {
  setup();
  EXPECT_FAIL(EXT("../outside.bin", NULL, NULL), NNP_ERR_INVALID, "'..'", "'w'");
  EXPECT_FAIL(EXT("sub/../../outside.bin", NULL, NULL), NNP_ERR_INVALID, "'..'", "'w'");
  EXPECT_FAIL(EXT("..", NULL, NULL), NNP_ERR_INVALID, "'..'", "'w'");
  /* ".." inside the folder still counts: refused rather than resolved. */
  EXPECT_FAIL(EXT("sub/../weights.bin", "16", NULL), NNP_ERR_INVALID, "'..'", "'w'");
  teardown();
}

static void case_symlink_escape(void) {
  setup();
  char p[512];
  path_in(p, sizeof p, "outside.bin");
  link_in_model(p, "file_link.bin");
  EXPECT_FAIL(EXT("file_link.bin", NULL, NULL), NNP_ERR_INVALID, "outside the model's folder", "'w'");
  link_in_model("/etc", "etc_link");
  EXPECT_FAIL(EXT("etc_link/passwd", NULL, NULL), NNP_ERR_INVALID, "outside the model's folder", "'w'");
  link_in_model("../outside.bin", "relative_link.bin");
  EXPECT_FAIL(EXT("relative_link.bin", NULL, NULL), NNP_ERR_INVALID, "outside the model's folder", "'w'");
  /* A sibling folder whose name merely starts with the model folder's name. */
  link_in_model("../model_evil/w.bin", "sibling.bin");
  EXPECT_FAIL(EXT("sibling.bin", NULL, NULL), NNP_ERR_INVALID, "outside the model's folder", "'w'");
  teardown();
}

/* ---- Files and fields that do not fit --------------------------------------------- */

static void case_file_too_small(void) {
  setup();
  EXPECT_FAIL(EXT("weights.bin", "25", NULL), NNP_ERR_FORMAT, "too small", "'w'"); /* 25 + 24 > 48 */
  EXPECT_FAIL(EXT("weights.bin", "48", NULL), NNP_ERR_FORMAT, "too small", "'w'");
  EXPECT_FAIL(EXT("weights.bin", "4096", NULL), NNP_ERR_FORMAT, "too small", "'w'");
  EXPECT_FAIL(EXT("weights.bin", "18446744073709551615", NULL), NNP_ERR_FORMAT, "too small", "'w'");
  expect_ok("weights.bin", "16", "24", __LINE__);
  char p[512];
  snprintf(p, sizeof p, "%s/short.bin", model_dir);
  mb_write_file(p, w_vals, 20);
  EXPECT_FAIL(EXT("short.bin", NULL, NULL), NNP_ERR_FORMAT, "too small", "'w'");
  snprintf(p, sizeof p, "%s/empty.bin", model_dir);
  mb_write_file(p, "", 0);
  EXPECT_FAIL(EXT("empty.bin", NULL, NULL), NNP_ERR_FORMAT, "too small", "'w'");
  teardown();
}

static void case_bad_fields(void) {
  setup();
  EXPECT_FAIL(EXT(NULL, NULL, NULL), NNP_ERR_FORMAT, "without a location", "'w'");
  EXPECT_FAIL(EXT("", NULL, NULL), NNP_ERR_FORMAT, "without a location", "'w'");
  EXPECT_FAIL(EXT("weights.bin", "16abc", NULL), NNP_ERR_FORMAT, "not a byte count", "'offset'");
  EXPECT_FAIL(EXT("weights.bin", "-16", NULL), NNP_ERR_FORMAT, "not a byte count", "'offset'");
  EXPECT_FAIL(EXT("weights.bin", "", NULL), NNP_ERR_FORMAT, "empty", "'offset'");
  EXPECT_FAIL(EXT("weights.bin", "99999999999999999999999", NULL), NNP_ERR_FORMAT, "not a byte count", "'offset'");
  EXPECT_FAIL(EXT("weights.bin", "16", "23"), NNP_ERR_FORMAT, "does not match", "'w'");
  EXPECT_FAIL(EXT("weights.bin", "16", "x"), NNP_ERR_FORMAT, "not a byte count", "'length'");
  teardown();
}

static void case_missing_or_odd_file(void) {
  setup();
  EXPECT_FAIL(EXT("nope.bin", NULL, NULL), NNP_ERR_IO, "not found", "'w'");
  EXPECT_FAIL(EXT("sub", NULL, NULL), NNP_ERR_FORMAT, "'w'", NULL); /* a folder is no data file */
  link_in_model("dangling-target", "dangling.bin");
  EXPECT_FAIL(EXT("dangling.bin", NULL, NULL), NNP_ERR_IO, "not found", "'w'");
  teardown();
}

/* A named pipe in the model's folder: opening it for reading would block until some
 * writer appears, so it must be refused as not a regular file, not waited on. */
static void case_fifo(void) {
  setup();
  char p[512];
  snprintf(p, sizeof p, "%s/pipe.bin", model_dir);
  if (mkfifo(p, 0600) != 0) {
    perror("mkfifo");
    teardown();
    return;
  }
  alarm(10);
  EXPECT_FAIL(EXT("pipe.bin", NULL, NULL), NNP_ERR_FORMAT, "'w'", NULL);
  alarm(0);
  teardown();
}

/* Loading from memory without a folder refuses external data outright, even a
 * location that exists relative to the current directory. */
static void case_no_base_dir(void) {
  size_t n;
  uint8_t *buf = mb_pack(EXT("weights.bin", "16", NULL), &n);
  nnp_graph *g = (nnp_graph *)&g;
  nnp_status s = nnp_onnx_load_buffer(buf, n, NULL, NULL, &g);
  CHECK_MSG(s == NNP_ERR_INVALID, "%s: %s", nnp_status_name(s), nnp_last_error());
  CHECK(strstr(nnp_last_error(), "external data") != NULL);
  CHECK(g == NULL);
  /* With the folder given, the same bytes load. */
  setup();
  CHECK_OK(nnp_onnx_load_buffer(buf, n, model_dir, NULL, &g));
  if (g) check_w(g, __LINE__);
  nnp_graph_destroy(g);
  teardown();
}

/* External data in a tensor attribute (Constant's value) is confined the same way. */
static void case_constant_attribute(void) {
  setup();
  Onnx__ModelProto *m = mb_model(13);
  mb_input(m, "x", F32, 2, dims_2x3);
  Onnx__NodeProto *c = mb_node(m, "Constant", "const1", "", "w");
  Onnx__AttributeProto *a = mb_attr_new(c, "value", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR);
  a->t = mb_tensor("", F32, 2, dims_2x3);
  mb_external(a->t, "../outside.bin", NULL, NULL);
  mb_node(m, "Add", "add1", "x,w", "y");
  mb_output(m, "y", F32);
  EXPECT_FAIL(m, NNP_ERR_INVALID, "'..'", "const1");
  a->t->n_external_data = 0;
  mb_external(a->t, "weights.bin", "16", NULL);
  nnp_graph *g;
  nnp_status s = load_model(m, &g);
  CHECK_OK(s);
  if (s == NNP_OK) {
    const nnp_attr *at = nnp_node_attr(&g->nodes[0], "value");
    CHECK(at && at->tensor && memcmp(at->tensor->data, w_vals, sizeof w_vals) == 0);
    nnp_graph_destroy(g);
  }
  teardown();
}

int main(void) {
  RUN(case_offset_and_length);
  RUN(case_values_through_plan);
  RUN(case_shared_file);
  RUN(case_int64);
  RUN(case_absolute_path);
  RUN(case_dotdot);
  RUN(case_symlink_escape);
  RUN(case_file_too_small);
  RUN(case_bad_fields);
  RUN(case_missing_or_odd_file);
  RUN(case_fifo);
  RUN(case_no_base_dir);
  RUN(case_constant_attribute);
  printf("%d external-data cases, %d failed\n", cases_run, cases_failed);
  TEST_MAIN_END();
}
