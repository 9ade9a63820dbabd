/* Builds small nnp_graph models directly in the IR (no ONNX file) for the quantization
 * tests: seeded float initializers, a pads attribute, op counts (static inline: a test
 * uses what it needs). Each test sets `rs`, the generator's state, before its first
 * frand(). One translation unit per test. */
#ifndef NNP_TESTS_IR_BUILDER_H
#define NNP_TESTS_IR_BUILDER_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include <stdio.h>
#include <unistd.h>

#include "nnperf/alloc.h"
#include "nnperf/ir.h"
#include "nnperf/npy.h"

static uint64_t rs;
static inline float frand(void) { /* [-1, 1) */
  rs = rs * 6364136223846793005ull + 1442695040888963407ull;
  return (float)((double)(rs >> 11) * 0x1.0p-53 * 2 - 1);
}

/* A float32 initializer: lo_pos + |frand()| when lo_pos > 0 (scales, variances), else
 * frand()/2. Returns its value index. */
static inline int add_f32_init(nnp_graph *g, const char *name, int rank, const int64_t *dims, float lo_pos) {
  int v;
  nnp_graph_value(g, name, &v);
  nnp_value *val = &g->values[v];
  val->kind = NNP_VALUE_INITIALIZER;
  val->dtype = NNP_F32;
  val->rank = rank;
  val->init = nnp_calloc(1, sizeof *val->init);
  *val->init = (nnp_tensor){NNP_F32, rank, {0}, NULL};
  for (int i = 0; i < rank; i++) val->dims[i].value = val->init->dims[i] = dims[i];
  nnp_tensor_alloc(val->init);
  float *d = val->init->data;
  for (int64_t i = 0; i < nnp_tensor_numel(val->init); i++) d[i] = lo_pos > 0 ? lo_pos + fabsf(frand()) : frand() * 0.5f;
  return v;
}

/* pads = [1, 1, 1, 1] on node n */
static inline void add_pads(nnp_node *n) {
  nnp_attr *a;
  nnp_node_add_attr(n, "pads", &a);
  a->type = NNP_ATTR_INTS;
  a->count = 4;
  a->ints = nnp_malloc(4 * sizeof(int64_t));
  for (int k = 0; k < 4; k++) a->ints[k] = 1;
}

static inline int count_op(const nnp_graph *g, const char *op) {
  int c = 0;
  for (int i = 0; i < g->n_nodes; i++) c += !strcmp(g->nodes[i].op_type, op);
  return c;
}

/* A calibration set for the QDQ tests: files dir/0.npy .. dir/(n-1).npy of float32 shape
 * dims, elements frand() * scale (drawn for every file), file 0 replaced by `first` when
 * given. ir_remove_calib_npy deletes them and the folder. */
static inline nnp_status ir_write_calib_npy(const char *dir, int n, int rank, const int64_t *dims, const float *first,
                                            float scale) {
  nnp_tensor t = {NNP_F32, rank, {0}, NULL};
  for (int i = 0; i < rank; i++) t.dims[i] = dims[i];
  int64_t numel = nnp_tensor_numel(&t);
  float *buf = nnp_malloc((size_t)numel * sizeof(float));
  if (!buf) return nnp_error(NNP_ERR_NOMEM, "out of memory writing a calibration set");
  t.data = buf;
  nnp_status s = NNP_OK;
  for (int k = 0; k < n && s == NNP_OK; k++) {
    for (int64_t i = 0; i < numel; i++) buf[i] = frand() * scale;
    if (k == 0 && first) memcpy(buf, first, (size_t)numel * sizeof(float));
    char path[512];
    snprintf(path, sizeof path, "%s/%d.npy", dir, k);
    s = nnp_npy_write(path, &t);
  }
  nnp_free(buf);
  return s;
}

static inline void ir_remove_calib_npy(const char *dir, int n) {
  char path[512];
  for (int k = 0; k < n; k++) {
    snprintf(path, sizeof path, "%s/%d.npy", dir, k);
    unlink(path);
  }
  rmdir(dir);
}

#endif
