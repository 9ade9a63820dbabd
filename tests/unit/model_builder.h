/* Shared by the protobuf-c driven unit tests (test_hostile_models.c, test_external_data.c,
 * test_alloc_failure.c): a ModelProto builder, temporary folders and a forking case runner.
 * Everything here is static, so each test executable that includes it gets its own copy.
 * Not a test itself: the tests/unit/test_*.c glob does not pick it up. */
#ifndef NNP_TEST_MODEL_BUILDER_H
#define NNP_TEST_MODEL_BUILDER_H

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
#include "onnx/onnx.pb-c.h"
#include "test.h"

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

/* A new attribute of n named `name` of `type`, its value left to the caller. */
MB_FN Onnx__AttributeProto *mb_attr_new(Onnx__NodeProto *n, const char *name, Onnx__AttributeProto__AttributeType type) {
  Onnx__AttributeProto *a = mb_alloc(sizeof *a);
  onnx__attribute_proto__init(a);
  a->name = mb_str(name);
  a->has_type = 1;
  a->type = type;
  n->attribute[n->n_attribute++] = a;
  return a;
}

MB_FN Onnx__AttributeProto *mb_attr_int(Onnx__NodeProto *n, const char *name, int64_t v) {
  Onnx__AttributeProto *a = mb_attr_new(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
  a->has_i = 1;
  a->i = v;
  return a;
}

MB_FN Onnx__AttributeProto *mb_attr_float(Onnx__NodeProto *n, const char *name, float v) {
  Onnx__AttributeProto *a = mb_attr_new(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
  a->has_f = 1;
  a->f = v;
  return a;
}

MB_FN Onnx__AttributeProto *mb_attr_ints(Onnx__NodeProto *n, const char *name, size_t count, const int64_t *v) {
  Onnx__AttributeProto *a = mb_attr_new(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
  a->n_ints = count;
  a->ints = mb_alloc((count ? count : 1) * sizeof *a->ints);
  if (count) memcpy(a->ints, v, count * sizeof *a->ints);
  return a;
}

MB_FN Onnx__AttributeProto *mb_attr_string(Onnx__NodeProto *n, const char *name, const char *v) {
  Onnx__AttributeProto *a = mb_attr_new(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);
  a->has_s = 1;
  a->s.data = (uint8_t *)mb_str(v);
  a->s.len = strlen(v);
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

/* A 1-D int64 initializer of n values (raw_data): Slice's starts, Pad's pads, axes. */
MB_FN Onnx__TensorProto *mb_init_i64(Onnx__ModelProto *m, const char *name, int n, const int64_t *v) {
  const int64_t len = n;
  Onnx__TensorProto *t = mb_tensor(name, ONNX__TENSOR_PROTO__DATA_TYPE__INT64, 1, &len);
  mb_raw_data(t, (size_t)n * sizeof *v, v);
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
  /* the case's name heads its messages (tests/docs/check_hostile_table.py reads them) */
  if (getenv("NNP_TEST_VERBOSE")) printf("case %s\n", name);
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

#endif /* NNP_TEST_MODEL_BUILDER_H */
