/* nnp_onnx_save: a graph with every attribute kind, many dtypes, symbolic and unknown
 * dimensions, omitted optional inputs/outputs and a custom domain goes through a file and
 * nnp_onnx_load and comes back the same; errors are clean and never leave a partial or
 * temporary file behind; allocation failures at every step are reported and leak-free. */
#include <dirent.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nnperf/alloc.h"
#include "nnperf/ir.h"
#include "nnperf/onnx.h"
#include "ops/op.h"
#include "test.h"

static char tmp_dir[] = "/tmp/nnp_export_XXXXXX";

static uint64_t rng_state = 0x1234;
static uint64_t rng(void) {
  uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* A tensor of random bytes (bools 0/1) in memory from nnp_tensor_alloc. */
static void fill_tensor(nnp_tensor *t, nnp_dtype dt, int rank, const int64_t *dims) {
  memset(t, 0, sizeof *t);
  t->dtype = dt;
  t->rank = rank;
  for (int d = 0; d < rank; d++) t->dims[d] = dims[d];
  CHECK_OK(nnp_tensor_alloc(t));
  uint8_t *p = t->data;
  size_t n = nnp_tensor_nbytes(t);
  for (size_t i = 0; i < n; i++) p[i] = dt == NNP_BOOL ? (uint8_t)(rng() & 1) : (uint8_t)rng();
}

static int add_init(nnp_graph *g, const char *name, nnp_dtype dt, int rank, const int64_t *dims) {
  int v;
  CHECK_OK(nnp_graph_value(g, name, &v));
  nnp_value *val = &g->values[v];
  val->init = nnp_calloc(1, sizeof(nnp_tensor));
  fill_tensor(val->init, dt, rank, dims);
  val->kind = NNP_VALUE_INITIALIZER;
  val->dtype = dt;
  val->rank = rank;
  for (int d = 0; d < rank; d++) val->dims[d].value = dims[d];
  return v;
}

static int value(nnp_graph *g, const char *name) {
  int v = -1;
  CHECK_OK(nnp_graph_value(g, name, &v));
  return v;
}

/* Declares dtype and shape; dims < 0 with sym[d] != NULL are symbolic, without unknown. */
static void declare(nnp_graph *g, int v, nnp_dtype dt, int rank, const int64_t *dims, const char *const *sym) {
  nnp_value *val = &g->values[v];
  val->dtype = dt;
  val->rank = rank;
  for (int d = 0; d < rank; d++) {
    val->dims[d].value = dims[d];
    val->dims[d].symbol = sym && sym[d] ? nnp_strdup(sym[d]) : NULL;
  }
}

static nnp_attr *attr(nnp_graph *g, int node, const char *name, nnp_attr_type type) {
  nnp_attr *a = NULL;
  CHECK_OK(nnp_node_add_attr(&g->nodes[node], name, &a));
  a->type = type;
  return a;
}

static nnp_graph *make_graph(void) {
  nnp_graph *g;
  CHECK_OK(nnp_graph_create(&g));
  g->opset = 17;
  g->name = nnp_strdup("export_test");
  /* inputs: x float [N, 3, ?, 5]; y int64 without shape; s float scalar */
  int x = value(g, "x"), y = value(g, "y"), s = value(g, "s");
  const int64_t xd[4] = {-1, 3, -1, 5};
  const char *const xs[4] = {"N", NULL, NULL, NULL};
  declare(g, x, NNP_F32, 4, xd, xs);
  g->values[y].dtype = NNP_I64;
  declare(g, s, NNP_F32, 0, NULL, NULL);
  CHECK_OK(nnp_graph_add_input(g, x));
  CHECK_OK(nnp_graph_add_input(g, y));
  CHECK_OK(nnp_graph_add_input(g, s));

  static const struct { const char *name; nnp_dtype dt; int rank; int64_t dims[3]; } inits[] = {
      {"w_f32", NNP_F32, 2, {2, 3}},  {"w_f64", NNP_F64, 1, {3}},    {"w_i64", NNP_I64, 2, {2, 2}},
      {"w_i32", NNP_I32, 1, {4}},     {"w_i16", NNP_I16, 1, {3}},    {"w_i8", NNP_I8, 1, {5}},
      {"w_u8", NNP_U8, 3, {1, 2, 3}}, {"w_u16", NNP_U16, 1, {2}},    {"w_u32", NNP_U32, 1, {3}},
      {"w_u64", NNP_U64, 1, {2}},     {"w_bool", NNP_BOOL, 1, {7}},  {"w_f16", NNP_F16, 2, {2, 2}},
      {"w_scalar", NNP_F32, 0, {0}},  {"w_empty", NNP_F32, 2, {0, 3}},
  };
  const int n_inits = (int)(sizeof inits / sizeof inits[0]);
  int iv[16];
  for (int i = 0; i < n_inits; i++) iv[i] = add_init(g, inits[i].name, inits[i].dt, inits[i].rank, inits[i].dims);

  /* n0: Conv-typed node with an omitted optional input, carrying every attribute kind */
  int h = value(g, "h");
  const int n0_in[3] = {x, iv[0], -1};
  int n0;
  CHECK_OK(nnp_graph_add_node(g, "n0", "Conv", "", 3, n0_in, 1, &h, &n0));
  declare(g, h, NNP_F32, 4, xd, xs); /* written as value_info */
  attr(g, n0, "f", NNP_ATTR_FLOAT)->f = -0.15625f;
  attr(g, n0, "i", NNP_ATTR_INT)->i = INT64_MIN + 3;
  nnp_attr *a = attr(g, n0, "s", NNP_ATTR_STRING);
  a->s = nnp_malloc(4);
  memcpy(a->s, "a\0b", 4); /* an embedded NUL survives: s_len, not strlen */
  a->s_len = 3;
  a = attr(g, n0, "t", NNP_ATTR_TENSOR);
  a->tensor = nnp_calloc(1, sizeof(nnp_tensor));
  const int64_t td[2] = {2, 3};
  fill_tensor(a->tensor, NNP_I32, 2, td);
  a = attr(g, n0, "fs", NNP_ATTR_FLOATS);
  a->count = 3;
  a->floats = nnp_malloc(3 * sizeof(float));
  a->floats[0] = 1.5f, a->floats[1] = -2.0f, a->floats[2] = 3e-38f;
  a = attr(g, n0, "is", NNP_ATTR_INTS);
  a->count = 4;
  a->ints = nnp_malloc(4 * sizeof(int64_t));
  a->ints[0] = 1, a->ints[1] = -2, a->ints[2] = INT64_MAX, a->ints[3] = 0;
  a = attr(g, n0, "ss", NNP_ATTR_STRINGS);
  a->count = 3;
  a->strings = nnp_calloc(3, sizeof(char *));
  a->strings[0] = nnp_strdup("x"), a->strings[1] = nnp_strdup(""), a->strings[2] = nnp_strdup("zz top");
  a = attr(g, n0, "ts", NNP_ATTR_TENSORS);
  a->tensor = nnp_calloc(3, sizeof(nnp_tensor));
  const int64_t d2[1] = {2}, d3[2] = {3, 1};
  fill_tensor(&a->tensor[0], NNP_F32, 1, d2);
  fill_tensor(&a->tensor[1], NNP_U8, 2, d3);
  fill_tensor(&a->tensor[2], NNP_F64, 0, NULL);
  a->count = 3;
  a = attr(g, n0, "empty_ints", NNP_ATTR_INTS);
  a->ints = nnp_malloc(sizeof(int64_t));
  a->count = 0;

  /* n1: custom-domain node reading every initializer, with an omitted middle output */
  int o1 = value(g, "o1"), o2 = value(g, "o2");
  int n1_in[20], k = 0;
  n1_in[k++] = h;
  n1_in[k++] = y;
  n1_in[k++] = s;
  for (int i = 1; i < n_inits; i++) n1_in[k++] = iv[i];
  const int n1_out[3] = {o1, -1, o2};
  int n1;
  CHECK_OK(nnp_graph_add_node(g, "n1", "MyOp", "com.example", k, n1_in, 3, n1_out, &n1));
  attr(g, n1, "mode", NNP_ATTR_STRING)->s = nnp_strdup("fast");
  g->nodes[n1].attrs[0].s_len = 4;

  /* n2: unnamed-looking plain node */
  int out3 = value(g, "out3");
  CHECK_OK(nnp_graph_add_node(g, "n2", "Identity", "", 1, &o2, 1, &out3, NULL));

  /* outputs: o1 declared [N, 4]; out3 undeclared; an initializer as an output */
  const int64_t od[2] = {-1, 4};
  const char *const os[2] = {"N", NULL};
  declare(g, o1, NNP_F32, 2, od, os);
  CHECK_OK(nnp_graph_add_output(g, o1));
  CHECK_OK(nnp_graph_add_output(g, out3));
  CHECK_OK(nnp_graph_add_output(g, iv[1]));
  CHECK_OK(nnp_graph_toposort(g));
  return g;
}

static bool same_tensor(const nnp_tensor *a, const nnp_tensor *b) {
  if (a->dtype != b->dtype || !nnp_tensor_same_shape(a, b)) return false;
  size_t n = nnp_tensor_nbytes(a);
  return n == 0 || memcmp(a->data, b->data, n) == 0;
}

static bool same_str(const char *a, const char *b) { return strcmp(a ? a : "", b ? b : "") == 0; }

static void compare_attr(const nnp_node *n, const nnp_attr *a, const nnp_attr *b) {
  CHECK_MSG(b != NULL, "node '%s' lost attribute '%s'", n->name, a->name);
  if (!b) return;
  CHECK_MSG(a->type == b->type, "attribute '%s': type %d -> %d", a->name, a->type, b->type);
  switch (a->type) {
    case NNP_ATTR_FLOAT: CHECK(memcmp(&a->f, &b->f, sizeof a->f) == 0); break;
    case NNP_ATTR_INT: CHECK(a->i == b->i); break;
    case NNP_ATTR_STRING:
      CHECK(a->s_len == b->s_len && memcmp(a->s, b->s, a->s_len) == 0);
      break;
    case NNP_ATTR_FLOATS:
      CHECK(a->count == b->count && memcmp(a->floats, b->floats, a->count * sizeof(float)) == 0);
      break;
    case NNP_ATTR_INTS:
      CHECK(a->count == b->count && (a->count == 0 || memcmp(a->ints, b->ints, a->count * sizeof(int64_t)) == 0));
      break;
    case NNP_ATTR_STRINGS:
      CHECK(a->count == b->count);
      for (size_t k = 0; k < a->count && k < b->count; k++) CHECK(same_str(a->strings[k], b->strings[k]));
      break;
    case NNP_ATTR_TENSOR: CHECK(same_tensor(a->tensor, b->tensor)); break;
    case NNP_ATTR_TENSORS:
      CHECK(a->count == b->count);
      for (size_t k = 0; k < a->count && k < b->count; k++) CHECK(same_tensor(&a->tensor[k], &b->tensor[k]));
      break;
    default: CHECK_MSG(0, "unexpected attribute type %d", a->type);
  }
}

static const char *vname(const nnp_graph *g, int v) { return v >= 0 ? g->values[v].name : ""; }

static void compare_value(const nnp_value *a, const nnp_value *b) {
  CHECK_MSG(a->kind == b->kind, "value '%s' kind %d -> %d", a->name, a->kind, b->kind);
  CHECK_MSG(a->dtype == b->dtype, "value '%s' dtype %d -> %d", a->name, a->dtype, b->dtype);
  CHECK_MSG(a->rank == b->rank, "value '%s' rank %d -> %d", a->name, a->rank, b->rank);
  CHECK(a->is_output == b->is_output);
  for (int d = 0; d < a->rank && d < b->rank; d++) {
    CHECK_MSG(a->dims[d].value == b->dims[d].value, "value '%s' dim %d", a->name, d);
    CHECK_MSG(same_str(a->dims[d].symbol, b->dims[d].symbol), "value '%s' dim %d symbol", a->name, d);
  }
  CHECK((a->init == NULL) == (b->init == NULL));
  if (a->init && b->init) CHECK_MSG(same_tensor(a->init, b->init), "initializer '%s' data", a->name);
}

static void compare_graphs(const nnp_graph *a, const nnp_graph *b) {
  CHECK(b->opset == a->opset);
  CHECK(b->ir_version == 8);
  CHECK(same_str(b->producer, "nnperf"));
  CHECK(same_str(a->name, b->name));
  CHECK_MSG(a->n_values == b->n_values, "%d values -> %d", a->n_values, b->n_values);
  for (int v = 0; v < a->n_values; v++) {
    int w = nnp_graph_find_value(b, a->values[v].name);
    CHECK_MSG(w >= 0, "value '%s' lost", a->values[v].name);
    if (w >= 0) compare_value(&a->values[v], &b->values[w]);
  }
  CHECK(a->n_inputs == b->n_inputs);
  for (int k = 0; k < a->n_inputs && k < b->n_inputs; k++)
    CHECK(same_str(vname(a, a->inputs[k]), vname(b, b->inputs[k])));
  CHECK(a->n_outputs == b->n_outputs);
  for (int k = 0; k < a->n_outputs && k < b->n_outputs; k++)
    CHECK(same_str(vname(a, a->outputs[k]), vname(b, b->outputs[k])));
  CHECK(a->n_nodes == b->n_nodes);
  for (int i = 0; i < a->n_nodes && i < b->n_nodes; i++) {
    const nnp_node *na = &a->nodes[i], *nb = &b->nodes[i];
    CHECK(same_str(na->name, nb->name));
    CHECK(same_str(na->op_type, nb->op_type));
    CHECK(same_str(na->domain, nb->domain));
    CHECK(nb->op == nnp_op_lookup(nb->domain, nb->op_type)); /* the loader resolves op ids */
    CHECK(na->n_inputs == nb->n_inputs && na->n_outputs == nb->n_outputs);
    for (int k = 0; k < na->n_inputs && k < nb->n_inputs; k++)
      CHECK_MSG(same_str(vname(a, na->inputs[k]), vname(b, nb->inputs[k])), "node '%s' input %d", na->name, k);
    for (int k = 0; k < na->n_outputs && k < nb->n_outputs; k++)
      CHECK_MSG(same_str(vname(a, na->outputs[k]), vname(b, nb->outputs[k])), "node '%s' output %d", na->name, k);
    CHECK(na->n_attrs == nb->n_attrs);
    for (int k = 0; k < na->n_attrs; k++) compare_attr(na, &na->attrs[k], nnp_node_attr(nb, na->attrs[k].name));
  }
}

static void path_in_tmp(char *buf, size_t n, const char *name) { snprintf(buf, n, "%s/%s", tmp_dir, name); }

/* Files in tmp_dir whose names contain ".tmp": what a failed save must not leave. */
static int count_temp_files(void) {
  DIR *d = opendir(tmp_dir);
  if (!d) return -1;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d))) n += strstr(e->d_name, ".tmp") != NULL;
  closedir(d);
  return n;
}

static void remove_tmp_dir(void) {
  DIR *d = opendir(tmp_dir);
  if (!d) return;
  struct dirent *e;
  char p[512];
  while ((e = readdir(d)))
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
      path_in_tmp(p, sizeof p, e->d_name);
      unlink(p);
    }
  closedir(d);
  rmdir(tmp_dir);
}

static bool read_all(const char *path, void **data, size_t *size) {
  *data = NULL;
  *size = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return false;
  struct stat st;
  bool ok = fstat(fileno(f), &st) == 0;
  if (ok) {
    *size = (size_t)st.st_size;
    *data = nnp_malloc(*size);
    ok = *data && fread(*data, 1, *size, f) == *size;
  }
  fclose(f);
  return ok;
}

static bool contains(const void *hay, size_t n, const char *needle) {
  size_t m = strlen(needle);
  for (size_t i = 0; i + m <= n; i++)
    if (memcmp((const char *)hay + i, needle, m) == 0) return true;
  return false;
}

int main(void) {
  CHECK(mkdtemp(tmp_dir) != NULL);
  char path[512], path2[512];
  path_in_tmp(path, sizeof path, "model.onnx");
  path_in_tmp(path2, sizeof path2, "again.onnx");

  /* round trip */
  nnp_graph *g = make_graph();
  CHECK_OK(nnp_onnx_save(g, path));
  nnp_graph *back = NULL;
  CHECK_OK(nnp_onnx_load(path, NULL, &back));
  if (back) compare_graphs(g, back);
  /* saving the loaded graph reproduces the file byte for byte (deterministic output) */
  if (back) CHECK_OK(nnp_onnx_save(back, path2));
  void *b1 = NULL, *b2 = NULL;
  size_t s1 = 0, s2 = 0;
  CHECK(read_all(path, &b1, &s1) && read_all(path2, &b2, &s2));
  CHECK_MSG(s1 == s2 && b1 && b2 && memcmp(b1, b2, s1) == 0, "re-saved model differs (%zu vs %zu bytes)", s1, s2);
  nnp_free(b2);
  nnp_graph_destroy(back);
  CHECK(count_temp_files() == 0);

  /* the custom domain gets an opset import (the loader would not care, checkers do):
   * look for the domain string in the file */
  CHECK(b1 && contains(b1, s1, "com.example"));

  /* overwriting an existing file replaces it */
  nnp_free(g->name);
  g->name = nnp_strdup("renamed");
  CHECK_OK(nnp_onnx_save(g, path2));
  CHECK_OK(nnp_onnx_load(path2, NULL, &back));
  CHECK(back && same_str(back->name, "renamed"));
  nnp_graph_destroy(back);

  /* a bare file name goes to the working directory */
  {
    char cwd[1024];
    CHECK(getcwd(cwd, sizeof cwd) != NULL);
    CHECK(chdir(tmp_dir) == 0);
    CHECK_OK(nnp_onnx_save(g, "relative.onnx"));
    CHECK(access("relative.onnx", R_OK) == 0);
    unlink("relative.onnx");
    CHECK(chdir(cwd) == 0);
  }

  /* argument and I/O errors */
  char slash_end[600];
  snprintf(slash_end, sizeof slash_end, "%s/", tmp_dir);
  CHECK(nnp_onnx_save(g, slash_end) == NNP_ERR_INVALID);
  CHECK(nnp_onnx_save(NULL, path) == NNP_ERR_INVALID);
  CHECK(nnp_onnx_save(g, NULL) == NNP_ERR_INVALID);
  CHECK(nnp_onnx_save(g, "") == NNP_ERR_INVALID);
  char missing[600];
  snprintf(missing, sizeof missing, "%s/no/such/dir/m.onnx", tmp_dir);
  CHECK(nnp_onnx_save(g, missing) == NNP_ERR_IO);
  CHECK_MSG(strstr(nnp_last_error(), "no/such/dir") != NULL, "message: %s", nnp_last_error());
  /* a directory in the way of the rename */
  char dirpath[600];
  path_in_tmp(dirpath, sizeof dirpath, "adir.onnx");
  CHECK(mkdir(dirpath, 0755) == 0);
  char inner[700];
  snprintf(inner, sizeof inner, "%s/x", dirpath);
  FILE *f = fopen(inner, "w");
  if (f) fclose(f);
  CHECK(nnp_onnx_save(g, dirpath) == NNP_ERR_IO);
  unlink(inner);
  rmdir(dirpath);
  CHECK(count_temp_files() == 0);

  /* a graph attribute cannot be written: clear error naming it, nothing written */
  {
    nnp_graph *h;
    CHECK_OK(nnp_graph_create(&h));
    int x = value(h, "x"), y = value(h, "y");
    const int64_t d[1] = {1};
    declare(h, x, NNP_F32, 1, d, NULL);
    CHECK_OK(nnp_graph_add_input(h, x));
    int n;
    CHECK_OK(nnp_graph_add_node(h, "loop", "If", "", 1, &x, 1, &y, &n));
    attr(h, n, "then_branch", NNP_ATTR_GRAPH);
    CHECK_OK(nnp_graph_add_output(h, y));
    char p3[600];
    path_in_tmp(p3, sizeof p3, "graph_attr.onnx");
    CHECK(nnp_onnx_save(h, p3) == NNP_ERR_UNSUPPORTED);
    CHECK_MSG(strstr(nnp_last_error(), "then_branch") != NULL, "message: %s", nnp_last_error());
    CHECK(access(p3, F_OK) != 0);
    nnp_graph_destroy(h);
  }

  /* allocation failure at every point: NNP_ERR_NOMEM, no leak (LeakSanitizer), the
   * previous file intact, no temporary file left */
  {
    void *before = NULL;
    size_t before_n = 0;
    CHECK(read_all(path2, &before, &before_n));
    int failures = 0;
    for (long k = 1; k < 100000; k++) {
      nnp_alloc_fail_after(k);
      nnp_status s = nnp_onnx_save(g, path2);
      nnp_alloc_fail_after(0);
      if (s == NNP_OK) break;
      failures++;
      CHECK_MSG(s == NNP_ERR_NOMEM, "failing allocation %ld gave %s: %s", k, nnp_status_name(s), nnp_last_error());
      void *now = NULL;
      size_t now_n = 0;
      CHECK(read_all(path2, &now, &now_n));
      CHECK_MSG(now_n == before_n && memcmp(now, before, now_n) == 0, "allocation %ld: file changed", k);
      nnp_free(now);
    }
    CHECK_MSG(failures > 10, "only %d allocation points", failures);
    CHECK(count_temp_files() == 0);
    nnp_free(before);
  }

  nnp_free(b1);
  nnp_graph_destroy(g);
  remove_tmp_dir();
  TEST_MAIN_END();
}
