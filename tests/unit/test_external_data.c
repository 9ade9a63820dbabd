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

/* ---- Model builder ---------------------------------------------------------------
 * Builds ModelProto structs with protobuf-c and packs them, so each test is
 * self-contained. Memory comes from plain calloc (never nnp_malloc: the allocation
 * counts of the code under test stay unaffected) and is freed by mb_reset(). */
#define MB_FN __attribute__((unused)) static
#define MB_CAP 64

static void **mb_blocks;
static size_t mb_n_blocks, mb_cap_blocks;

MB_FN void *mb_alloc(size_t n) {
  if (mb_n_blocks == mb_cap_blocks) {
    mb_cap_blocks = mb_cap_blocks ? 2 * mb_cap_blocks : 256;
    mb_blocks = realloc(mb_blocks, mb_cap_blocks * sizeof *mb_blocks);
    if (!mb_blocks) abort();
  }
  void *p = calloc(1, n ? n : 1);
  if (!p) abort();
  mb_blocks[mb_n_blocks++] = p;
  return p;
}

MB_FN void mb_reset(void) {
  for (size_t i = 0; i < mb_n_blocks; i++) free(mb_blocks[i]);
  free(mb_blocks);
  mb_blocks = NULL;
  mb_n_blocks = mb_cap_blocks = 0;
}

MB_FN char *mb_str(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = mb_alloc(n);
  memcpy(d, s, n);
  return d;
}

MB_FN void mb_opset(Onnx__ModelProto *m, const char *domain, int64_t version) {
  Onnx__OperatorSetIdProto *os = mb_alloc(sizeof *os);
  onnx__operator_set_id_proto__init(os);
  os->domain = mb_str(domain);
  os->has_version = 1;
  os->version = version;
  m->opset_import[m->n_opset_import++] = os;
}

/* A model with an empty graph, IR version 8 and, when opset > 0, that opset for the
 * default domain. */
MB_FN Onnx__ModelProto *mb_model(int64_t opset) {
  Onnx__ModelProto *m = mb_alloc(sizeof *m);
  onnx__model_proto__init(m);
  m->has_ir_version = 1;
  m->ir_version = 8;
  m->producer_name = mb_str("nnperf-test");
  m->opset_import = mb_alloc(MB_CAP * sizeof(void *));
  if (opset > 0) mb_opset(m, "", opset);
  Onnx__GraphProto *g = mb_alloc(sizeof *g);
  onnx__graph_proto__init(g);
  g->name = mb_str("test_graph");
  g->node = mb_alloc(MB_CAP * sizeof(void *));
  g->initializer = mb_alloc(MB_CAP * sizeof(void *));
  g->input = mb_alloc(MB_CAP * sizeof(void *));
  g->output = mb_alloc(MB_CAP * sizeof(void *));
  g->value_info = mb_alloc(MB_CAP * sizeof(void *));
  m->graph = g;
  return m;
}

/* Tensor type; rank -1: no shape; a dim < 0 becomes the symbolic dim "N". */
MB_FN Onnx__TypeProto *mb_type(int elem, int rank, const int64_t *dims) {
  Onnx__TypeProto *tp = mb_alloc(sizeof *tp);
  onnx__type_proto__init(tp);
  Onnx__TypeProto__Tensor *tt = mb_alloc(sizeof *tt);
  onnx__type_proto__tensor__init(tt);
  tt->has_elem_type = 1;
  tt->elem_type = elem;
  if (rank >= 0) {
    Onnx__TensorShapeProto *sh = mb_alloc(sizeof *sh);
    onnx__tensor_shape_proto__init(sh);
    sh->n_dim = (size_t)rank;
    sh->dim = mb_alloc((size_t)(rank ? rank : 1) * sizeof(void *));
    for (int d = 0; d < rank; d++) {
      Onnx__TensorShapeProto__Dimension *dim = mb_alloc(sizeof *dim);
      onnx__tensor_shape_proto__dimension__init(dim);
      if (dims[d] >= 0) {
        dim->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        dim->dim_value = dims[d];
      } else {
        dim->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
        dim->dim_param = mb_str("N");
      }
      sh->dim[d] = dim;
    }
    tt->shape = sh;
  }
  tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
  tp->tensor_type = tt;
  return tp;
}

MB_FN Onnx__ValueInfoProto *mb_value_info(const char *name, int elem, int rank, const int64_t *dims) {
  Onnx__ValueInfoProto *vi = mb_alloc(sizeof *vi);
  onnx__value_info_proto__init(vi);
  vi->name = mb_str(name);
  vi->type = mb_type(elem, rank, dims);
  return vi;
}

MB_FN Onnx__ValueInfoProto *mb_input(Onnx__ModelProto *m, const char *name, int elem, int rank,
                                     const int64_t *dims) {
  Onnx__ValueInfoProto *vi = mb_value_info(name, elem, rank, dims);
  m->graph->input[m->graph->n_input++] = vi;
  return vi;
}

MB_FN Onnx__ValueInfoProto *mb_output(Onnx__ModelProto *m, const char *name, int elem) {
  Onnx__ValueInfoProto *vi = mb_value_info(name, elem, -1, NULL);
  m->graph->output[m->graph->n_output++] = vi;
  return vi;
}

/* Splits "a,b,,c" into a string array ("" marks an omitted optional input). */
MB_FN size_t mb_list(const char *csv, char ***out) {
  size_t n = 0;
  char **v = mb_alloc(MB_CAP * sizeof(char *));
  if (csv && csv[0]) {
    const char *p = csv;
    for (;;) {
      const char *e = strchr(p, ',');
      size_t len = e ? (size_t)(e - p) : strlen(p);
      char *s = mb_alloc(len + 1);
      memcpy(s, p, len);
      v[n++] = s;
      if (!e) break;
      p = e + 1;
    }
  }
  *out = v;
  return n;
}

MB_FN Onnx__NodeProto *mb_node(Onnx__ModelProto *m, const char *op, const char *name, const char *inputs,
                               const char *outputs) {
  Onnx__NodeProto *n = mb_alloc(sizeof *n);
  onnx__node_proto__init(n);
  n->op_type = mb_str(op);
  n->name = mb_str(name);
  n->n_input = mb_list(inputs, &n->input);
  n->n_output = mb_list(outputs, &n->output);
  n->attribute = mb_alloc(MB_CAP * sizeof(void *));
  m->graph->node[m->graph->n_node++] = n;
  return n;
}

MB_FN Onnx__AttributeProto *mb_attr_int(Onnx__NodeProto *n, const char *name, int64_t v) {
  Onnx__AttributeProto *a = mb_alloc(sizeof *a);
  onnx__attribute_proto__init(a);
  a->name = mb_str(name);
  a->has_type = 1;
  a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
  a->has_i = 1;
  a->i = v;
  n->attribute[n->n_attribute++] = a;
  return a;
}

/* A tensor with name, type and shape but no data. */
MB_FN Onnx__TensorProto *mb_tensor(const char *name, int dtype, int rank, const int64_t *dims) {
  Onnx__TensorProto *t = mb_alloc(sizeof *t);
  onnx__tensor_proto__init(t);
  t->name = mb_str(name);
  t->has_data_type = 1;
  t->data_type = dtype;
  t->n_dims = (size_t)rank;
  t->dims = mb_alloc((size_t)(rank ? rank : 1) * sizeof(int64_t));
  for (int d = 0; d < rank; d++) t->dims[d] = dims[d];
  t->external_data = mb_alloc(MB_CAP * sizeof(void *));
  return t;
}

MB_FN void mb_float_data(Onnx__TensorProto *t, size_t n, const float *v) {
  t->n_float_data = n;
  t->float_data = mb_alloc((n ? n : 1) * sizeof(float));
  if (n) memcpy(t->float_data, v, n * sizeof(float));
}

MB_FN void mb_raw_data(Onnx__TensorProto *t, size_t n, const void *v) {
  t->has_raw_data = 1;
  t->raw_data.len = n;
  t->raw_data.data = mb_alloc(n);
  if (n) memcpy(t->raw_data.data, v, n);
}

MB_FN void mb_external_kv(Onnx__TensorProto *t, const char *key, const char *value) {
  Onnx__StringStringEntryProto *kv = mb_alloc(sizeof *kv);
  onnx__string_string_entry_proto__init(kv);
  kv->key = mb_str(key);
  kv->value = mb_str(value);
  t->external_data[t->n_external_data++] = kv;
}

/* Marks t as stored externally; NULL arguments are left out. */
MB_FN void mb_external(Onnx__TensorProto *t, const char *location, const char *offset, const char *length) {
  t->has_data_location = 1;
  t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
  if (location) mb_external_kv(t, "location", location);
  if (offset) mb_external_kv(t, "offset", offset);
  if (length) mb_external_kv(t, "length", length);
}

MB_FN Onnx__TensorProto *mb_init(Onnx__ModelProto *m, Onnx__TensorProto *t) {
  m->graph->initializer[m->graph->n_initializer++] = t;
  return t;
}

/* An f32 initializer with float_data. */
MB_FN Onnx__TensorProto *mb_init_f32(Onnx__ModelProto *m, const char *name, int rank, const int64_t *dims,
                                     const float *v) {
  Onnx__TensorProto *t = mb_tensor(name, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, rank, dims);
  size_t n = 1;
  for (int d = 0; d < rank; d++) n *= (size_t)dims[d];
  mb_float_data(t, n, v);
  return mb_init(m, t);
}

MB_FN uint8_t *mb_pack(const Onnx__ModelProto *m, size_t *size) {
  size_t n = onnx__model_proto__get_packed_size(m);
  uint8_t *buf = mb_alloc(n);
  *size = onnx__model_proto__pack(m, buf);
  if (*size != n) abort();
  return buf;
}

MB_FN uint8_t *mb_pack_tensor(const Onnx__TensorProto *t, size_t *size) {
  size_t n = onnx__tensor_proto__get_packed_size(t);
  uint8_t *buf = mb_alloc(n);
  *size = onnx__tensor_proto__pack(t, buf);
  if (*size != n) abort();
  return buf;
}

MB_FN void mb_write_file(const char *path, const void *data, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f || (n && fwrite(data, 1, n, f) != n) || fclose(f) != 0) {
    fprintf(stderr, "cannot write %s\n", path);
    abort();
  }
}

MB_FN void mb_write_model(const char *path, const Onnx__ModelProto *m) {
  size_t n;
  uint8_t *buf = mb_pack(m, &n);
  mb_write_file(path, buf, n);
}
/* ---- end of model builder -------------------------------------------------------- */
/* A fresh folder under $TMPDIR (or /tmp); rm_tree removes it and everything below. */
static char temp_dirs[16][256];
static int n_temp_dirs;

__attribute__((unused)) static void make_temp_dir(char *out, size_t n) {
  const char *tmp = getenv("TMPDIR");
  snprintf(out, n, "%s/nnp-test-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
  if (!mkdtemp(out)) {
    perror("mkdtemp");
    abort();
  }
  if (n_temp_dirs < 16) snprintf(temp_dirs[n_temp_dirs++], sizeof temp_dirs[0], "%s", out);
}
__attribute__((unused)) static void rm_tree(const char *path) {
  struct stat st;
  if (lstat(path, &st) != 0) return;
  if (S_ISDIR(st.st_mode)) {
    DIR *d = opendir(path);
    if (d) {
      struct dirent *e;
      while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        char sub[4096];
        snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
        rm_tree(sub);
      }
      closedir(d);
    }
    rmdir(path);
  } else {
    unlink(path);
  }
}

/* A case that hangs is stopped by SIGALRM: remove its folders, then fail. */
static void on_alarm(int sig) {
  (void)sig;
  static const char msg[] = "case timed out (hang)\n";
  if (write(2, msg, sizeof msg - 1) < 0) {
  }
  for (int i = 0; i < n_temp_dirs; i++) rm_tree(temp_dirs[i]);
  _exit(124);
}

/* ---- Case runner ------------------------------------------------------------------
 * Each case runs in a forked child, so a crash or a sanitizer report (LeakSanitizer
 * runs when the child exits) fails that case alone and names it. NNP_TEST_NOFORK=1 runs
 * the cases in-process, for a debugger. */
static int cases_run, cases_failed;

__attribute__((unused)) static void run_case(const char *name, void (*fn)(void)) {
  cases_run++;
  if (getenv("NNP_TEST_NOFORK")) {
    int before = test_checks_failed;
    fn();
    mb_reset();
    if (test_checks_failed != before) {
      cases_failed++;
      fprintf(stderr, "case %s FAILED\n", name);
    }
    return;
  }
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    perror("fork");
    exit(2);
  }
  if (pid == 0) {
    test_checks_passed = test_checks_failed = 0;
    signal(SIGALRM, on_alarm);
    alarm(120); /* a hang fails the case instead of the whole run */
    fn();
    mb_reset();
    nnp_alloc_fail_after(0);
    fflush(stdout);
    exit(test_checks_failed ? 1 : 0); /* exit(), not _exit(): LeakSanitizer checks here */
  }
  int st = 0;
  while (waitpid(pid, &st, 0) < 0) {
  }
  bool ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
  if (!ok) cases_failed++;
  CHECK_MSG(ok, "case %s %s %d%s", name, WIFSIGNALED(st) ? "died of signal" : "exited with",
            WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st),
            WIFEXITED(st) && WEXITSTATUS(st) == 124 ? " (timed out: it hangs)" : "");
}
#define RUN(fn) run_case(#fn, fn)

/* ---- end of case runner ---------------------------------------------------------- */

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
  Onnx__AttributeProto *a = mb_alloc(sizeof *a);
  onnx__attribute_proto__init(a);
  a->name = mb_str("value");
  a->has_type = 1;
  a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
  a->t = mb_tensor("", F32, 2, dims_2x3);
  mb_external(a->t, "../outside.bin", NULL, NULL);
  c->attribute[c->n_attribute++] = a;
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
