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
