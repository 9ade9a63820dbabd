/* Helpers for per-op tests: build a standalone node with attributes, make tensors,
 * run the op through nnp_op_eval (infer + reference kernel), compare results. */
#ifndef NNP_TESTS_OP_TEST_UTIL_H
#define NNP_TESTS_OP_TEST_UTIL_H

#include <stdbool.h>
#include <string.h>

#include "ops/op_eval.h"
#include "nnperf/alloc.h"
#include "nnperf/ir.h"
#include "ops/op.h"
#include "test.h"

/* A node lives in a one-node graph; free with test_node_free. */
typedef struct test_node {
  nnp_graph *g;
  nnp_node *n;
} test_node;

static inline test_node test_node_new(const char *op_type) {
  test_node t = {0};
  if (nnp_graph_create(&t.g) != NNP_OK) abort();
  if (nnp_graph_add_node(t.g, "n0", op_type, "", 0, NULL, 0, NULL, NULL) != NNP_OK) abort();
  t.n = &t.g->nodes[0];
  t.n->op = nnp_op_lookup("", op_type);
  return t;
}
static inline void test_node_free(test_node *t) { nnp_graph_destroy(t->g); }

static inline void test_attr_int(test_node *t, const char *name, int64_t v) {
  nnp_attr *a;
  if (nnp_node_add_attr(t->n, name, &a) != NNP_OK) abort();
  a->type = NNP_ATTR_INT;
  a->i = v;
}
static inline void test_attr_float(test_node *t, const char *name, float v) {
  nnp_attr *a;
  if (nnp_node_add_attr(t->n, name, &a) != NNP_OK) abort();
  a->type = NNP_ATTR_FLOAT;
  a->f = v;
}
static inline void test_attr_string(test_node *t, const char *name, const char *v) {
  nnp_attr *a;
  if (nnp_node_add_attr(t->n, name, &a) != NNP_OK) abort();
  a->type = NNP_ATTR_STRING;
  a->s = nnp_strdup(v);
  a->s_len = strlen(v);
}
static inline void test_attr_ints(test_node *t, const char *name, int n, const int64_t *v) {
  nnp_attr *a;
  if (nnp_node_add_attr(t->n, name, &a) != NNP_OK) abort();
  a->type = NNP_ATTR_INTS;
  a->count = (size_t)n;
  a->ints = nnp_malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
  memcpy(a->ints, v, sizeof(int64_t) * (size_t)n);
}
static inline void test_attr_floats(test_node *t, const char *name, int n, const float *v) {
  nnp_attr *a;
  if (nnp_node_add_attr(t->n, name, &a) != NNP_OK) abort();
  a->type = NNP_ATTR_FLOATS;
  a->count = (size_t)n;
  a->floats = nnp_malloc(sizeof(float) * (size_t)(n ? n : 1));
  memcpy(a->floats, v, sizeof(float) * (size_t)n);
}

/* Tensor of dtype and shape with data copied from `data` (may be NULL: zeros). */
static inline nnp_tensor test_tensor(nnp_dtype dt, int rank, const int64_t *dims, const void *data) {
  nnp_tensor t = {.dtype = dt, .rank = rank};
  for (int i = 0; i < rank; i++) t.dims[i] = dims[i];
  if (nnp_tensor_alloc(&t) != NNP_OK) abort();
  if (data) memcpy(t.data, data, nnp_tensor_nbytes(&t));
  return t;
}

/* Deterministic uniform floats in [lo, hi). */
static inline void test_fill_uniform(float *x, int64_t n, float lo, float hi, unsigned seed) {
  uint64_t s = 0x9E3779B97F4A7C15ull ^ seed;
  for (int64_t i = 0; i < n; i++) {
    s ^= s << 13; s ^= s >> 7; s ^= s << 17;
    x[i] = lo + (hi - lo) * (float)((s >> 40) / 16777216.0);
  }
}

/* Max |a-b| over f32 tensors of equal size (returns INFINITY on size mismatch). */
static inline double test_max_abs_diff(const nnp_tensor *a, const float *b, int64_t n) {
  if (nnp_tensor_numel(a) != n) return INFINITY;
  double m = 0;
  for (int64_t i = 0; i < n; i++) {
    double d = fabs((double)((const float *)a->data)[i] - b[i]);
    if (d > m || d != d) m = d != d ? INFINITY : d;
  }
  return m;
}

/* Runs the node (infer + reference kernel) with one output; out allocated on success. */
static inline nnp_status test_run(test_node *t, int64_t opset, int n_in, const nnp_tensor *const *in, nnp_tensor *out) {
  return nnp_op_eval(t->n, opset, n_in, in, 1, out);
}

static inline bool test_shape_is(const nnp_tensor *t, int rank, const int64_t *dims) {
  if (t->rank != rank) return false;
  for (int i = 0; i < rank; i++)
    if (t->dims[i] != dims[i]) return false;
  return true;
}

#endif
