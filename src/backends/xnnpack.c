/* The xnnpack backend: Debian's libXNNPACK (2022 snapshot, subgraph C API) behind the
 * backend vtable. See docs/backend-xnnpack.md.
 *
 * The model is loaded with nnperf's own ONNX loader; a native plan (no graph passes) is
 * compiled once only to learn every value's shape and which values are known at load
 * time, then each ONNX node is translated into XNNPACK subgraph nodes. Activations of
 * rank 4 live in NHWC inside XNNPACK (ONNX is NCHW): graph inputs and outputs are
 * transposed in run(), inside the timed call, as an application using XNNPACK from an
 * NCHW model would. Weights are re-laid out at load and BatchNormalization is folded
 * into the convolution before it. Ops with no translation are collected and reported
 * by name in one NNP_ERR_UNSUPPORTED error (the row's status becomes "unsupported"). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "nnperf/alloc.h"
#include "nnperf/backend.h"
#include "nnperf/onnx.h"
#include "ir/shape_infer.h"

#ifdef NNP_WITH_XNNPACK
#include <pthreadpool.h>
#include <xnnpack.h>

#define XB_MAX_IO 16

typedef struct xb_io {
  int value;          /* ONNX value index */
  uint32_t ext_id;    /* XNNPACK external value id */
  nnp_tensor t;       /* what the caller sees (NCHW for rank 4) */
  float *nhwc;        /* staging buffer for rank 4, else NULL (t.data is handed over) */
} xb_io;

typedef struct xb_state { /* one compiled input shape */
  nnp_graph *g;           /* borrowed from xb_backend */
  nnp_graph_shapes *shapes; /* the graph's inferred shapes and load-time constants */
  xnn_subgraph_t sg;
  xnn_runtime_t rt;
  uint32_t *ids;          /* ONNX value -> XNNPACK value id (XNN_INVALID_VALUE_ID: none) */
  int n_blobs, cap_blobs; /* static data handed to XNNPACK (must outlive the runtime) */
  void **blobs;
  int n_in, n_out;
  xb_io in[XB_MAX_IO], out[XB_MAX_IO];
  char unsupported[512];  /* comma-separated op names without a translation */
} xb_state;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Set when XNNPACK itself refused a node (its message is then the error, not the list of
 * untranslated ops); the worker loads one model at a time, so a file-level flag is safe. */
static bool xb_rejected;

static nnp_status xb_check(enum xnn_status x, const char *what, const nnp_node *n) {
  if (x == xnn_status_success) return NNP_OK;
  xb_rejected = true;
  if (x == xnn_status_out_of_memory) return nnp_error(NNP_ERR_NOMEM, "XNNPACK out of memory in %s", what);
  return nnp_error(NNP_ERR_UNSUPPORTED, "XNNPACK rejected %s%s%s%s (status %d)", what, n ? " for node '" : "",
                   n ? n->name : "", n ? "'" : "", (int)x);
}

/* A zero-filled float buffer that lives as long as the state (XNNPACK keeps pointers). */
static float *xb_blob(xb_state *s, size_t count) {
  if (s->n_blobs == s->cap_blobs) {
    int cap = s->cap_blobs ? 2 * s->cap_blobs : 64;
    void **nb = nnp_realloc(s->blobs, sizeof *nb * (size_t)cap);
    if (!nb) return NULL;
    s->blobs = nb;
    s->cap_blobs = cap;
  }
  float *p = nnp_calloc(count + XNN_EXTRA_BYTES / sizeof(float), sizeof(float));
  if (p) s->blobs[s->n_blobs++] = p;
  return p;
}

static const nnp_tensor *xb_shape(const xb_state *s, int v) { return v < 0 ? NULL : nnp_graph_shape(s->shapes, v); }

/* Data of a value known at load time as fp32, or NULL. */
static const float *xb_const(const xb_state *s, int v) {
  if (v < 0 || !nnp_graph_shape_known(s->shapes, v)) return NULL;
  const nnp_tensor *t = xb_shape(s, v);
  return t && t->dtype == NNP_F32 ? t->data : NULL;
}

static bool xb_is_output(const xb_state *s, int v) {
  for (int i = 0; i < s->g->n_outputs; i++)
    if (s->g->outputs[i] == v) return true;
  return false;
}

/* XNNPACK dims of value v: NCHW -> NHWC for rank 4. */
static int xb_dims(const nnp_tensor *t, size_t *d) {
  if (t->rank == 4) {
    d[0] = (size_t)t->dims[0], d[1] = (size_t)t->dims[2], d[2] = (size_t)t->dims[3], d[3] = (size_t)t->dims[1];
  } else {
    for (int k = 0; k < t->rank; k++) d[k] = (size_t)t->dims[k];
  }
  return t->rank;
}

/* Defines the XNNPACK value of activation v (external when it is a graph output). */
static nnp_status xb_define_act(xb_state *s, int v, uint32_t *id) {
  const nnp_tensor *t = xb_shape(s, v);
  if (!t) return nnp_error(NNP_ERR_INVALID, "value '%s' has no shape", s->g->values[v].name);
  size_t d[NNP_MAX_RANK];
  int r = xb_dims(t, d);
  uint32_t ext = XNN_INVALID_VALUE_ID, flags = 0;
  for (int i = 0; i < s->n_out; i++)
    if (s->out[i].value == v) ext = s->out[i].ext_id, flags = XNN_VALUE_FLAG_EXTERNAL_OUTPUT;
  NNP_TRY(xb_check(xnn_define_tensor_value(s->sg, xnn_datatype_fp32, (size_t)r, d, NULL, ext, flags, id),
                   "a tensor value", NULL));
  s->ids[v] = *id;
  return NNP_OK;
}

static nnp_status xb_define_static(xb_state *s, int rank, const size_t *d, const float *data, uint32_t *id) {
  return xb_check(xnn_define_tensor_value(s->sg, xnn_datatype_fp32, (size_t)rank, d, data, XNN_INVALID_VALUE_ID, 0, id),
                  "a static tensor", NULL);
}

/* Number of nodes reading value v. */
static int xb_consumers(const nnp_graph *g, int v, int *only) {
  int c = 0;
  for (int i = 0; i < g->n_nodes; i++)
    for (int k = 0; k < g->nodes[i].n_inputs; k++)
      if (g->nodes[i].inputs[k] == v) c++, *only = i;
  return c;
}

static void xb_note_unsupported(xb_state *s, const char *op, const char *why) {
  char item[160];
  snprintf(item, sizeof item, "%s%s%s%s", op, why ? " (" : "", why ? why : "", why ? ")" : "");
  size_t used = strlen(s->unsupported), len = strlen(item);
  for (const char *p = s->unsupported; (p = strstr(p, item)) != NULL; p++) /* whole items only */
    if ((p == s->unsupported || p[-1] == ' ') && (p[len] == ',' || p[len] == 0)) return;
  snprintf(s->unsupported + used, sizeof s->unsupported - used, "%s%s", used ? ", " : "", item);
}

/* Input i of node n as an activation id, or XNN_INVALID_VALUE_ID. */
static uint32_t xb_in(const xb_state *s, const nnp_node *n, int k) {
  return k < n->n_inputs && n->inputs[k] >= 0 ? s->ids[n->inputs[k]] : XNN_INVALID_VALUE_ID;
}

/* Conv (+ a BatchNormalization reading only its output, folded). Returns the node
 * index of a folded BatchNormalization in *folded, else -1. */
static nnp_status xb_conv(xb_state *s, int ni, int *folded, const char **why) {
  const nnp_node *n = &s->g->nodes[ni];
  *folded = -1;
  const nnp_tensor *x = xb_shape(s, n->inputs[0]), *w = xb_shape(s, n->inputs[1]);
  const float *wd = xb_const(s, n->inputs[1]);
  const float *bd = n->n_inputs > 2 && n->inputs[2] >= 0 ? xb_const(s, n->inputs[2]) : NULL;
  if (x->rank != 4 || !wd || (n->n_inputs > 2 && n->inputs[2] >= 0 && !bd)) return *why = "2D with constant weights only", NNP_ERR_UNSUPPORTED;
  const char *ap = nnp_attr_string(n, "auto_pad", "NOTSET");
  if (strcmp(ap, "NOTSET") && strcmp(ap, "VALID")) return *why = "auto_pad SAME", NNP_ERR_UNSUPPORTED;
  const int64_t *pads = NULL, *st = NULL, *dl = NULL;
  int np = nnp_attr_ints(n, "pads", &pads), ns = nnp_attr_ints(n, "strides", &st), nd = nnp_attr_ints(n, "dilations", &dl);
  int64_t groups = nnp_attr_int(n, "group", 1);
  int64_t O = w->dims[0], I = w->dims[1], kh = w->dims[2], kw = w->dims[3];
  float *fw = xb_blob(s, (size_t)(O * kh * kw * I)), *fb = xb_blob(s, (size_t)O);
  if (!fw || !fb) return nnp_error(NNP_ERR_NOMEM, "out of memory");
  for (int64_t o = 0; o < O; o++) /* OIHW -> OHWI */
    for (int64_t i = 0; i < I; i++)
      for (int64_t y = 0; y < kh; y++)
        for (int64_t xx = 0; xx < kw; xx++) fw[((o * kh + y) * kw + xx) * I + i] = wd[((o * I + i) * kh + y) * kw + xx];
  for (int64_t o = 0; o < O; o++) fb[o] = bd ? bd[o] : 0.f;
  int out_v = n->outputs[0], only = -1;
  if (!xb_is_output(s, out_v) && xb_consumers(s->g, out_v, &only) == 1 &&
      !strcmp(s->g->nodes[only].op_type, "BatchNormalization")) {
    const nnp_node *bn = &s->g->nodes[only];
    const float *gm = xb_const(s, bn->inputs[1]), *bt = xb_const(s, bn->inputs[2]), *mu = xb_const(s, bn->inputs[3]),
                *var = xb_const(s, bn->inputs[4]);
    if (gm && bt && mu && var) {
      float eps = nnp_attr_float(bn, "epsilon", 1e-5f);
      for (int64_t o = 0; o < O; o++) {
        float sc = gm[o] / sqrtf(var[o] + eps);
        for (int64_t k = 0; k < kh * kw * I; k++) fw[o * kh * kw * I + k] *= sc;
        fb[o] = (fb[o] - mu[o]) * sc + bt[o];
      }
      *folded = only;
      out_v = bn->outputs[0];
    }
  }
  size_t wdims[4] = {(size_t)O, (size_t)kh, (size_t)kw, (size_t)I}, bdims[1] = {(size_t)O};
  uint32_t wid, bid, yid;
  NNP_TRY(xb_define_static(s, 4, wdims, fw, &wid));
  NNP_TRY(xb_define_static(s, 1, bdims, fb, &bid));
  NNP_TRY(xb_define_act(s, out_v, &yid));
  uint32_t pt = np == 4 ? (uint32_t)pads[0] : 0, pl = np == 4 ? (uint32_t)pads[1] : 0;
  uint32_t pb = np == 4 ? (uint32_t)pads[2] : 0, pr = np == 4 ? (uint32_t)pads[3] : 0;
  return xb_check(xnn_define_convolution_2d(s->sg, pt, pr, pb, pl, (uint32_t)kh, (uint32_t)kw, ns == 2 ? (uint32_t)st[0] : 1,
                                            ns == 2 ? (uint32_t)st[1] : 1, nd == 2 ? (uint32_t)dl[0] : 1,
                                            nd == 2 ? (uint32_t)dl[1] : 1, (uint32_t)groups, (size_t)I,
                                            (size_t)(O / groups), -INFINITY, INFINITY, xb_in(s, n, 0), wid, bid, yid, 0),
                  "Conv", n);
}

/* A constant operand of a binary op, broadcast against a rank-4 activation: laid out
 * NHWC with its own (size-1 padded) dims. */
static nnp_status xb_const_operand(xb_state *s, int v, int act_rank, uint32_t *id) {
  const nnp_tensor *t = xb_shape(s, v);
  const float *d = xb_const(s, v);
  size_t count = (size_t)nnp_tensor_numel(t);
  float *b = xb_blob(s, count);
  if (!b) return nnp_error(NNP_ERR_NOMEM, "out of memory");
  if (act_rank != 4) {
    memcpy(b, d, count * sizeof *b);
    size_t dims[NNP_MAX_RANK];
    for (int k = 0; k < t->rank; k++) dims[k] = (size_t)t->dims[k];
    return xb_define_static(s, t->rank, dims, b, id);
  }
  int64_t c4[4] = {1, 1, 1, 1};
  for (int k = 0; k < t->rank; k++) c4[4 - t->rank + k] = t->dims[k];
  for (int64_t nn = 0; nn < c4[0]; nn++)
    for (int64_t c = 0; c < c4[1]; c++)
      for (int64_t y = 0; y < c4[2]; y++)
        for (int64_t x = 0; x < c4[3]; x++)
          b[((nn * c4[2] + y) * c4[3] + x) * c4[1] + c] = d[((nn * c4[1] + c) * c4[2] + y) * c4[3] + x];
  size_t dims[4] = {(size_t)c4[0], (size_t)c4[2], (size_t)c4[3], (size_t)c4[1]};
  return xb_define_static(s, 4, dims, b, id);
}

static nnp_status xb_binary(xb_state *s, const nnp_node *n, const char **why) {
  int a = n->inputs[0], b = n->inputs[1];
  const nnp_tensor *y = xb_shape(s, n->outputs[0]);
  uint32_t ia = s->ids[a], ib = s->ids[b], out;
  if (ia == XNN_INVALID_VALUE_ID && !xb_const(s, a)) return *why = "non-float operand", NNP_ERR_UNSUPPORTED;
  if (ib == XNN_INVALID_VALUE_ID && !xb_const(s, b)) return *why = "non-float operand", NNP_ERR_UNSUPPORTED;
  if (ia == XNN_INVALID_VALUE_ID && ib == XNN_INVALID_VALUE_ID) return *why = "two constants", NNP_ERR_UNSUPPORTED;
  if (y->rank == 4)
    for (int k = 0; k < 2; k++) { /* both activations must be rank 4 for a consistent layout */
      const nnp_tensor *t = xb_shape(s, n->inputs[k]);
      if (s->ids[n->inputs[k]] != XNN_INVALID_VALUE_ID && t->rank != 4) return *why = "mixed ranks", NNP_ERR_UNSUPPORTED;
    }
  if (ia == XNN_INVALID_VALUE_ID) NNP_TRY(xb_const_operand(s, a, y->rank, &ia));
  if (ib == XNN_INVALID_VALUE_ID) NNP_TRY(xb_const_operand(s, b, y->rank, &ib));
  NNP_TRY(xb_define_act(s, n->outputs[0], &out));
  const char *op = n->op_type;
  enum xnn_status x;
  if (!strcmp(op, "Add")) x = xnn_define_add2(s->sg, -INFINITY, INFINITY, ia, ib, out, 0);
  else if (!strcmp(op, "Mul")) x = xnn_define_multiply2(s->sg, -INFINITY, INFINITY, ia, ib, out, 0);
  else if (!strcmp(op, "Sub")) x = xnn_define_subtract(s->sg, -INFINITY, INFINITY, ia, ib, out, 0);
  else x = xnn_define_divide(s->sg, -INFINITY, INFINITY, ia, ib, out, 0);
  return xb_check(x, op, n);
}

/* Pooling geometry from ONNX attributes; ceil_mode becomes extra bottom/right padding
 * (XNNPACK's windows ignore padded positions for max pooling). */
static nnp_status xb_pool_geom(const xb_state *s, const nnp_node *n, uint32_t g[8]) {
  const int64_t *k = NULL, *st = NULL, *pads = NULL;
  if (nnp_attr_ints(n, "kernel_shape", &k) != 2) return NNP_ERR_UNSUPPORTED;
  int ns = nnp_attr_ints(n, "strides", &st), np = nnp_attr_ints(n, "pads", &pads);
  const char *ap = nnp_attr_string(n, "auto_pad", "NOTSET");
  if (strcmp(ap, "NOTSET") && strcmp(ap, "VALID")) return NNP_ERR_UNSUPPORTED;
  g[0] = np == 4 ? (uint32_t)pads[0] : 0, g[1] = np == 4 ? (uint32_t)pads[3] : 0;
  g[2] = np == 4 ? (uint32_t)pads[2] : 0, g[3] = np == 4 ? (uint32_t)pads[1] : 0; /* t r b l */
  g[4] = (uint32_t)k[0], g[5] = (uint32_t)k[1];
  g[6] = ns == 2 ? (uint32_t)st[0] : 1, g[7] = ns == 2 ? (uint32_t)st[1] : 1;
  const nnp_tensor *x = xb_shape(s, n->inputs[0]), *y = xb_shape(s, n->outputs[0]);
  /* grow bottom/right padding until the floor formula gives the output size (ceil_mode) */
  int64_t need_h = (y->dims[2] - 1) * g[6] + g[4] - (x->dims[2] + g[0] + g[2]);
  int64_t need_w = (y->dims[3] - 1) * g[7] + g[5] - (x->dims[3] + g[3] + g[1]);
  if (need_h > 0) g[2] += (uint32_t)need_h;
  if (need_w > 0) g[1] += (uint32_t)need_w;
  return NNP_OK;
}

/* Concat of rank-4 activations along channels. This XNNPACK snapshot has no
 * concatenate node, so each input goes through a 1x1 convolution with a 0/1 selection
 * matrix that places its channels, and the results are summed: exact (x*1 + 0s) but
 * costs extra work; docs/backend-xnnpack.md says so. */
static nnp_status xb_concat(xb_state *s, const nnp_node *n, const char **why) {
  const nnp_tensor *y = xb_shape(s, n->outputs[0]);
  int64_t axis = nnp_attr_int(n, "axis", 1);
  if (axis < 0) axis += y->rank;
  if (y->rank != 4 || axis != 1) return *why = "only rank 4 along channels", NNP_ERR_UNSUPPORTED;
  for (int k = 0; k < n->n_inputs; k++)
    if (s->ids[n->inputs[k]] == XNN_INVALID_VALUE_ID) return *why = "constant input", NNP_ERR_UNSUPPORTED;
  size_t C = (size_t)y->dims[1], off = 0;
  uint32_t acc = XNN_INVALID_VALUE_ID, out;
  NNP_TRY(xb_define_act(s, n->outputs[0], &out));
  size_t ydims[4];
  xb_dims(y, ydims);
  for (int k = 0; k < n->n_inputs; k++) {
    size_t ck = (size_t)xb_shape(s, n->inputs[k])->dims[1];
    float *w = xb_blob(s, C * ck), *b = xb_blob(s, C);
    if (!w || !b) return nnp_error(NNP_ERR_NOMEM, "out of memory");
    for (size_t c = 0; c < ck; c++) w[(off + c) * ck + c] = 1.f;
    off += ck;
    size_t wd[4] = {C, 1, 1, ck}, bd[1] = {C};
    uint32_t wid, bid, part;
    NNP_TRY(xb_define_static(s, 4, wd, w, &wid));
    NNP_TRY(xb_define_static(s, 1, bd, b, &bid));
    if (k == n->n_inputs - 1 && k == 0) part = out;
    else NNP_TRY(xb_check(xnn_define_tensor_value(s->sg, xnn_datatype_fp32, 4, ydims, NULL, XNN_INVALID_VALUE_ID, 0, &part), "a tensor value", n));
    NNP_TRY(xb_check(xnn_define_convolution_2d(s->sg, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, ck, C, -INFINITY, INFINITY,
                                               s->ids[n->inputs[k]], wid, bid, part, 0), "Concat", n));
    if (acc == XNN_INVALID_VALUE_ID) {
      acc = part;
      continue;
    }
    uint32_t sum = out;
    if (k != n->n_inputs - 1)
      NNP_TRY(xb_check(xnn_define_tensor_value(s->sg, xnn_datatype_fp32, 4, ydims, NULL, XNN_INVALID_VALUE_ID, 0, &sum), "a tensor value", n));
    NNP_TRY(xb_check(xnn_define_add2(s->sg, -INFINITY, INFINITY, acc, part, sum, 0), "Concat", n));
    acc = sum;
  }
  return NNP_OK;
}

static nnp_status xb_gemm(xb_state *s, const nnp_node *n, const char **why) {
  bool matmul = !strcmp(n->op_type, "MatMul");
  const nnp_tensor *a = xb_shape(s, n->inputs[0]), *w = xb_shape(s, n->inputs[1]);
  const float *wd = xb_const(s, n->inputs[1]);
  const float *cd = !matmul && n->n_inputs > 2 && n->inputs[2] >= 0 ? xb_const(s, n->inputs[2]) : NULL;
  if (!wd || w->rank != 2 || a->rank != 2) return *why = "2D input, constant weights only", NNP_ERR_UNSUPPORTED;
  if (!matmul && n->n_inputs > 2 && n->inputs[2] >= 0 && !cd) return *why = "constant bias only", NNP_ERR_UNSUPPORTED;
  if (!matmul && nnp_attr_int(n, "transA", 0)) return *why = "transA", NNP_ERR_UNSUPPORTED;
  bool tb = !matmul && nnp_attr_int(n, "transB", 0);
  float alpha = matmul ? 1.f : nnp_attr_float(n, "alpha", 1.f), beta = matmul ? 1.f : nnp_attr_float(n, "beta", 1.f);
  int64_t K = tb ? w->dims[1] : w->dims[0], O = tb ? w->dims[0] : w->dims[1];
  float *fw = xb_blob(s, (size_t)(K * O)), *fb = xb_blob(s, (size_t)O);
  if (!fw || !fb) return nnp_error(NNP_ERR_NOMEM, "out of memory");
  for (int64_t o = 0; o < O; o++) /* XNNPACK wants [out, in] */
    for (int64_t k = 0; k < K; k++) fw[o * K + k] = alpha * (tb ? wd[o * K + k] : wd[k * O + o]);
  if (cd) {
    int64_t cn = nnp_tensor_numel(xb_shape(s, n->inputs[2]));
    if (cn != O && cn != 1) return *why = "bias not of shape [N]", NNP_ERR_UNSUPPORTED;
    for (int64_t o = 0; o < O; o++) fb[o] = beta * cd[cn == 1 ? 0 : o];
  }
  size_t wdims[2] = {(size_t)O, (size_t)K}, bdims[1] = {(size_t)O};
  uint32_t wid, bid, yid;
  NNP_TRY(xb_define_static(s, 2, wdims, fw, &wid));
  NNP_TRY(xb_define_static(s, 1, bdims, fb, &bid));
  NNP_TRY(xb_define_act(s, n->outputs[0], &yid));
  return xb_check(xnn_define_fully_connected(s->sg, -INFINITY, INFINITY, xb_in(s, n, 0), wid, bid, yid, 0), n->op_type, n);
}

/* Translates node ni. NNP_ERR_UNSUPPORTED with *why (may be NULL) when it cannot. */
static nnp_status xb_node(xb_state *s, int ni, bool *skip, const char **why) {
  const nnp_node *n = &s->g->nodes[ni];
  const char *op = n->op_type;
  *why = NULL;
  if (n->domain && n->domain[0]) return NNP_ERR_UNSUPPORTED;
  /* computed at load time by the native plan (shape arithmetic and the like) */
  bool all_known = true;
  for (int k = 0; k < n->n_outputs; k++)
    if (n->outputs[k] >= 0 && !nnp_graph_shape_known(s->shapes, n->outputs[k])) all_known = false;
  if (all_known) return NNP_OK;
  for (int k = 0; k < n->n_outputs; k++) {
    const nnp_tensor *t = xb_shape(s, n->outputs[k]);
    if (n->outputs[k] >= 0 && (!t || t->dtype != NNP_F32)) return *why = "non-float output", NNP_ERR_UNSUPPORTED;
  }
  if (n->n_inputs < 1 || n->inputs[0] < 0) return NNP_ERR_UNSUPPORTED;
  const nnp_tensor *x = xb_shape(s, n->inputs[0]), *y = xb_shape(s, n->outputs[0]);
  uint32_t in = s->ids[n->inputs[0]], out;
  if (!strcmp(op, "Conv")) {
    if (in == XNN_INVALID_VALUE_ID) return *why = "constant input", NNP_ERR_UNSUPPORTED;
    int folded;
    NNP_TRY(xb_conv(s, ni, &folded, why));
    if (folded >= 0) skip[folded] = true;
    return NNP_OK;
  }
  if (!strcmp(op, "Add") || !strcmp(op, "Mul") || !strcmp(op, "Sub") || !strcmp(op, "Div")) return xb_binary(s, n, why);
  if (!strcmp(op, "Gemm") || !strcmp(op, "MatMul")) return xb_gemm(s, n, why);
  if (!strcmp(op, "Concat")) return xb_concat(s, n, why);
  if (in == XNN_INVALID_VALUE_ID) return *why = "constant input", NNP_ERR_UNSUPPORTED;
  if (!strcmp(op, "Relu") || !strcmp(op, "Clip")) {
    float lo = 0.f, hi = INFINITY;
    if (!strcmp(op, "Clip")) {
      lo = -INFINITY;
      if (s->g->opset < 11) {
        lo = nnp_attr_float(n, "min", -INFINITY), hi = nnp_attr_float(n, "max", INFINITY);
      } else {
        for (int k = 1; k < 3 && k < n->n_inputs; k++) {
          if (n->inputs[k] < 0) continue;
          const float *c = xb_const(s, n->inputs[k]);
          if (!c) return *why = "bounds not constant", NNP_ERR_UNSUPPORTED;
          if (k == 1) lo = c[0];
          else hi = c[0];
        }
      }
    }
    NNP_TRY(xb_define_act(s, n->outputs[0], &out));
    return xb_check(xnn_define_clamp(s->sg, lo, hi, in, out, 0), op, n);
  }
  if (!strcmp(op, "Sigmoid") || !strcmp(op, "HardSwish") || !strcmp(op, "LeakyRelu") || !strcmp(op, "Identity") ||
      !strcmp(op, "Dropout")) {
    NNP_TRY(xb_define_act(s, n->outputs[0], &out));
    enum xnn_status st;
    if (!strcmp(op, "Sigmoid")) st = xnn_define_sigmoid(s->sg, in, out, 0);
    else if (!strcmp(op, "HardSwish")) st = xnn_define_hardswish(s->sg, in, out, 0);
    else if (!strcmp(op, "LeakyRelu")) st = xnn_define_leaky_relu(s->sg, nnp_attr_float(n, "alpha", 0.01f), in, out, 0);
    else { /* Identity, Dropout at inference: a reshape to the same shape is this snapshot's copy */
      size_t d[NNP_MAX_RANK];
      int r = xb_dims(y, d);
      st = xnn_define_static_reshape(s->sg, (size_t)r, d, in, out, 0);
    }
    return xb_check(st, op, n);
  }
  if (!strcmp(op, "GlobalAveragePool")) {
    if (x->rank != 4) return *why = "rank 4 only", NNP_ERR_UNSUPPORTED;
    NNP_TRY(xb_define_act(s, n->outputs[0], &out));
    return xb_check(xnn_define_global_average_pooling_2d(s->sg, -INFINITY, INFINITY, in, out, 0), op, n);
  }
  if (!strcmp(op, "MaxPool") || !strcmp(op, "AveragePool")) {
    uint32_t g[8];
    if (x->rank != 4 || n->n_outputs > 1 || xb_pool_geom(s, n, g) != NNP_OK)
      return *why = "2D, explicit pads, one output only", NNP_ERR_UNSUPPORTED;
    bool maxp = !strcmp(op, "MaxPool");
    const int64_t *dl = NULL;
    int nd = nnp_attr_ints(n, "dilations", &dl);
    if (!maxp && (g[0] | g[1] | g[2] | g[3]) && nnp_attr_int(n, "count_include_pad", 0))
      return *why = "count_include_pad with padding", NNP_ERR_UNSUPPORTED;
    NNP_TRY(xb_define_act(s, n->outputs[0], &out));
    enum xnn_status st =
        maxp ? xnn_define_max_pooling_2d(s->sg, g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7], nd == 2 ? (uint32_t)dl[0] : 1,
                                         nd == 2 ? (uint32_t)dl[1] : 1, -INFINITY, INFINITY, in, out, 0)
             : xnn_define_average_pooling_2d(s->sg, g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7], -INFINITY, INFINITY,
                                             in, out, 0);
    return xb_check(st, op, n);
  }
  if (!strcmp(op, "Flatten") || !strcmp(op, "Reshape") || !strcmp(op, "Squeeze") || !strcmp(op, "Unsqueeze")) {
    /* NHWC and NCHW agree on the element order only when H = W = 1 */
    if ((x->rank == 4 && x->dims[2] * x->dims[3] != 1) || (y->rank == 4 && y->dims[2] * y->dims[3] != 1))
      return *why = "rank 4 with spatial size > 1 needs a transpose this XNNPACK lacks", NNP_ERR_UNSUPPORTED;
    size_t d[NNP_MAX_RANK];
    int r = xb_dims(y, d);
    NNP_TRY(xb_define_act(s, n->outputs[0], &out));
    return xb_check(xnn_define_static_reshape(s->sg, (size_t)r, d, in, out, 0), op, n);
  }
  if (!strcmp(op, "Softmax")) {
    int64_t axis = nnp_attr_int(n, "axis", s->g->opset < 13 ? 1 : -1);
    if (axis < 0) axis += x->rank;
    if (x->rank == 4 || axis != x->rank - 1) return *why = "last axis of rank != 4 only", NNP_ERR_UNSUPPORTED;
    NNP_TRY(xb_define_act(s, n->outputs[0], &out));
    return xb_check(xnn_define_softmax(s->sg, in, out, 0), op, n);
  }
  if (!strcmp(op, "BatchNormalization")) { /* not after a Conv: x * scale + shift per channel */
    const float *gm = xb_const(s, n->inputs[1]), *bt = xb_const(s, n->inputs[2]), *mu = xb_const(s, n->inputs[3]),
                *var = xb_const(s, n->inputs[4]);
    if (!gm || !bt || !mu || !var || x->rank < 2) return *why = "constant statistics only", NNP_ERR_UNSUPPORTED;
    size_t C = (size_t)x->dims[1];
    if (x->rank != 4 && x->rank != 2) return *why = "rank 2 or 4 only", NNP_ERR_UNSUPPORTED;
    float *sc = xb_blob(s, C), *sh = xb_blob(s, C);
    if (!sc || !sh) return nnp_error(NNP_ERR_NOMEM, "out of memory");
    float eps = nnp_attr_float(n, "epsilon", 1e-5f);
    for (size_t c = 0; c < C; c++) sc[c] = gm[c] / sqrtf(var[c] + eps), sh[c] = bt[c] - mu[c] * sc[c];
    size_t cd[1] = {C}, yd[NNP_MAX_RANK];
    uint32_t sid, hid, mid;
    NNP_TRY(xb_define_static(s, 1, cd, sc, &sid));
    NNP_TRY(xb_define_static(s, 1, cd, sh, &hid));
    int r = xb_dims(y, yd);
    NNP_TRY(xb_check(xnn_define_tensor_value(s->sg, xnn_datatype_fp32, (size_t)r, yd, NULL, XNN_INVALID_VALUE_ID, 0, &mid), "a tensor value", n));
    NNP_TRY(xb_check(xnn_define_multiply2(s->sg, -INFINITY, INFINITY, in, sid, mid, 0), op, n));
    NNP_TRY(xb_define_act(s, n->outputs[0], &out));
    return xb_check(xnn_define_add2(s->sg, -INFINITY, INFINITY, mid, hid, out, 0), op, n);
  }
  return NNP_ERR_UNSUPPORTED;
}

static nnp_status xb_build(xb_state *s) {
  nnp_graph *g = s->g;
  s->ids = nnp_malloc(sizeof *s->ids * (size_t)g->n_values);
  bool *skip = nnp_calloc((size_t)g->n_nodes + 1, sizeof *skip);
  if (!s->ids || !skip) {
    nnp_free(skip);
    return nnp_error(NNP_ERR_NOMEM, "out of memory");
  }
  for (int v = 0; v < g->n_values; v++) s->ids[v] = XNN_INVALID_VALUE_ID;
  nnp_status st = NNP_OK;
  for (int i = 0; i < s->n_in && st == NNP_OK; i++) {
    size_t d[NNP_MAX_RANK];
    int r = xb_dims(&s->in[i].t, d);
    st = xb_check(xnn_define_tensor_value(s->sg, xnn_datatype_fp32, (size_t)r, d, NULL, s->in[i].ext_id,
                                          XNN_VALUE_FLAG_EXTERNAL_INPUT, &s->ids[s->in[i].value]),
                  "an input value", NULL);
  }
  for (int ni = 0; ni < g->n_nodes && st == NNP_OK; ni++) {
    if (skip[ni]) continue;
    const char *why = NULL;
    xb_rejected = false;
    nnp_status ns = xb_node(s, ni, skip, &why);
    if (ns == NNP_ERR_UNSUPPORTED && !xb_rejected) {
      xb_note_unsupported(s, g->nodes[ni].op_type, why);
      /* keep going so every unsupported op is named; give its outputs a value so
       * later nodes translate (the subgraph is never run) */
      for (int k = 0; k < g->nodes[ni].n_outputs; k++) {
        int v = g->nodes[ni].outputs[k];
        uint32_t id;
        if (v >= 0 && s->ids[v] == XNN_INVALID_VALUE_ID && xb_shape(s, v) && !nnp_graph_shape_known(s->shapes, v))
          (void)xb_define_act(s, v, &id);
      }
    } else {
      st = ns;
    }
  }
  nnp_free(skip);
  if (st != NNP_OK) return st;
  if (s->unsupported[0])
    return nnp_error(NNP_ERR_UNSUPPORTED, "xnnpack backend: no translation for %s", s->unsupported);
  for (int i = 0; i < s->n_out; i++)
    if (s->ids[s->out[i].value] == XNN_INVALID_VALUE_ID)
      return nnp_error(NNP_ERR_UNSUPPORTED, "xnnpack backend: output '%s' is not computed by a translated node",
                       g->values[s->out[i].value].name);
  return NNP_OK;
}

/* Frees one compiled shape (the graph and thread pool it borrows stay). */
static void xb_free(xb_state *s) {
  if (!s) return;
  if (s->rt) xnn_delete_runtime(s->rt);
  if (s->sg) xnn_delete_subgraph(s->sg);
  for (int i = 0; i < s->n_blobs; i++) nnp_free(s->blobs[i]);
  nnp_free(s->blobs);
  for (int i = 0; i < s->n_in; i++) nnp_free(s->in[i].t.data), nnp_free(s->in[i].nhwc);
  for (int i = 0; i < s->n_out; i++) nnp_free(s->out[i].t.data), nnp_free(s->out[i].nhwc);
  nnp_free(s->ids);
  nnp_graph_shapes_destroy(s->shapes);
  nnp_free(s);
}

/* Caller-visible buffer of value v (+ the NHWC staging buffer for rank 4). */
static nnp_status xb_io_alloc(xb_state *s, xb_io *io, int v, uint32_t ext) {
  const nnp_tensor *t = xb_shape(s, v);
  if (!t || t->dtype != NNP_F32)
    return nnp_error(NNP_ERR_UNSUPPORTED, "xnnpack backend: input/output '%s' is not float32", s->g->values[v].name);
  io->value = v;
  io->ext_id = ext;
  io->t = *t;
  size_t bytes = nnp_tensor_nbytes(t) + XNN_EXTRA_BYTES;
  io->t.data = nnp_calloc(1, bytes);
  if (t->rank == 4) io->nhwc = nnp_calloc(1, bytes);
  if (!io->t.data || (t->rank == 4 && !io->nhwc)) return nnp_error(NNP_ERR_NOMEM, "out of memory");
  return NNP_OK;
}

/* Translates graph g for the input shapes of po into a ready runtime. */
static nnp_status xb_compile(nnp_graph *g, pthreadpool_t pool, uint32_t rt_flags, const nnp_plan_options *po,
                             xb_state **out) {
  *out = NULL;
  if (g->n_inputs > XB_MAX_IO || g->n_outputs > XB_MAX_IO)
    return nnp_error(NNP_ERR_LIMIT, "xnnpack backend: more than %d inputs or outputs", XB_MAX_IO);
  xb_state *s = nnp_calloc(1, sizeof *s);
  if (!s) return nnp_error(NNP_ERR_NOMEM, "out of memory");
  s->g = g;
  nnp_tensor inputs[XB_MAX_IO];
  nnp_status st = nnp_graph_check_ops(g);
  for (int i = 0; i < g->n_inputs && st == NNP_OK; i++) st = nnp_resolve_input_shape(g, po, i, &inputs[i]);
  if (st == NNP_OK) st = nnp_graph_shapes_infer(g, inputs, &s->shapes);
  if (st == NNP_OK) {
    s->n_in = g->n_inputs;
    s->n_out = g->n_outputs;
    for (int i = 0; i < s->n_in && st == NNP_OK; i++) st = xb_io_alloc(s, &s->in[i], g->inputs[i], (uint32_t)i);
    for (int i = 0; i < s->n_out && st == NNP_OK; i++)
      st = xb_io_alloc(s, &s->out[i], g->outputs[i], (uint32_t)(s->n_in + i));
  }
  if (st == NNP_OK)
    st = xb_check(xnn_create_subgraph((uint32_t)(s->n_in + s->n_out), 0, &s->sg), "the subgraph", NULL);
  if (st == NNP_OK) st = xb_build(s);
  if (st == NNP_OK) st = xb_check(xnn_create_runtime_v2(s->sg, pool, rt_flags, &s->rt), "the runtime", NULL);
  if (st == NNP_OK) {
    struct xnn_external_value ev[2 * XB_MAX_IO];
    for (int i = 0; i < s->n_in; i++) ev[i] = (struct xnn_external_value){s->in[i].ext_id, s->in[i].nhwc ? s->in[i].nhwc : s->in[i].t.data};
    for (int i = 0; i < s->n_out; i++)
      ev[s->n_in + i] = (struct xnn_external_value){s->out[i].ext_id, s->out[i].nhwc ? s->out[i].nhwc : s->out[i].t.data};
    st = xb_check(xnn_setup_runtime(s->rt, (size_t)(s->n_in + s->n_out), ev), "the runtime setup", NULL);
  }
  if (st != NNP_OK) {
    xb_free(s);
    return st;
  }
  /* the inferred shapes are no longer needed: free their buffers before timing starts */
  nnp_graph_shapes_destroy(s->shapes);
  s->shapes = NULL;
  *out = s;
  return NNP_OK;
}

/* Dynamic-shape scenarios: a runtime per input shape (XNNPACK's subgraph runtimes have
 * fixed shapes); the XB_CACHE most recently used are kept, so a shape seen again costs
 * a lookup. */
#define XB_CACHE 4

typedef struct xb_cached {
  xb_state *c;
  int input, rank;
  int64_t dims[NNP_MAX_RANK];
  uint64_t last_used;
} xb_cached;

typedef struct xb_backend {
  nnp_graph *g;
  pthreadpool_t pool;
  uint32_t rt_flags;
  nnp_plan_options po;  /* input shapes of the current compile */
  xb_state *cur;        /* the load-time compile, or one of cache[] */
  xb_cached cache[XB_CACHE];
  uint64_t tick;
} xb_backend;

static bool xb_cur_cached(const xb_backend *b) {
  for (int k = 0; k < XB_CACHE; k++)
    if (b->cache[k].c == b->cur) return true;
  return false;
}

static void xb_unload(void *state) {
  xb_backend *b = state;
  if (!b) return;
  if (!xb_cur_cached(b)) xb_free(b->cur);
  for (int k = 0; k < XB_CACHE; k++) xb_free(b->cache[k].c);
  if (b->pool) pthreadpool_destroy(b->pool);
  nnp_graph_destroy(b->g);
  nnp_free(b);
}

static nnp_status xb_probe(char *version, size_t n) {
  enum xnn_status x = xnn_initialize(NULL);
  if (x != xnn_status_success)
    return nnp_error(NNP_ERR_UNSUPPORTED, "xnn_initialize failed (status %d): this CPU is not supported", (int)x);
  snprintf(version, n, "XNNPACK (Debian libxnnpack, 2022 snapshot)");
  return NNP_OK;
}

/* Backend options ("key=value,..."): yield_workers=0|1 sets XNN_FLAG_YIELD_WORKERS, so
 * pthreadpool workers sleep between inferences instead of spinning (matters when the
 * CPUs are shared with other processes). */
static nnp_status xb_options(const char *o, uint32_t *flags) {
  *flags = 0;
  while (o && *o) {
    size_t len = strcspn(o, ",");
    char item[64];
    snprintf(item, sizeof item, "%.*s", (int)len, o);
    if (!strcmp(item, "yield_workers=1")) *flags |= XNN_FLAG_YIELD_WORKERS;
    else if (strcmp(item, "yield_workers=0") && item[0])
      return nnp_error(NNP_ERR_INVALID, "unknown xnnpack option '%s' (known: yield_workers=0|1)", item);
    o += len + (o[len] == ',');
  }
  return NNP_OK;
}

static nnp_status xb_load(const nnp_backend_config *cfg, void **state, nnp_load_report *rep) {
  uint32_t rt_flags;
  NNP_TRY(xb_options(cfg->options, &rt_flags));
  if (cfg->precision != NNP_FP32)
    return nnp_error(NNP_ERR_UNSUPPORTED, "the xnnpack backend runs fp32 only (asked for %s)", nnp_precision_name(cfg->precision));
  enum xnn_status x = xnn_initialize(NULL);
  if (x != xnn_status_success) return nnp_error(NNP_ERR_UNSUPPORTED, "xnn_initialize failed (status %d)", (int)x);
  xb_backend *b = nnp_calloc(1, sizeof *b);
  if (!b) return nnp_error(NNP_ERR_NOMEM, "out of memory");
  b->rt_flags = rt_flags;
  double t0 = now_s();
  nnp_status st = nnp_onnx_load(cfg->model_path, NULL, &b->g);
  double t1 = now_s();
  nnp_plan_options_default(&b->po);
  /* only the input shapes of po are read: the translation infers the model's own shapes,
   * node for node as in the file (no passes, no plan) */
  b->po.n_shapes = cfg->n_shapes;
  memcpy(b->po.shapes, cfg->shapes, sizeof b->po.shapes);
  if (st == NNP_OK && cfg->threads > 1) {
    b->pool = pthreadpool_create((size_t)cfg->threads);
    if (!b->pool) st = nnp_error(NNP_ERR_NOMEM, "cannot create a thread pool of %d threads", cfg->threads);
  }
  if (st == NNP_OK) st = xb_compile(b->g, b->pool, b->rt_flags, &b->po, &b->cur);
  if (st != NNP_OK) {
    xb_unload(b);
    return st;
  }
  rep->parse_s = t1 - t0;
  rep->compile_s = now_s() - t1;
  rep->threads_used = cfg->threads > 1 ? cfg->threads : 1;
  snprintf(rep->note, sizeof rep->note, "NCHW<->NHWC transposes of inputs/outputs are inside the timed run%s",
           rt_flags & XNN_FLAG_YIELD_WORKERS ? "; workers yield between inferences" : "");
  *state = b;
  return NNP_OK;
}

static nnp_status xb_reshape(void *state, int i, int rank, const int64_t *dims) {
  xb_backend *b = state;
  if (i < 0 || i >= b->g->n_inputs) return nnp_error(NNP_ERR_INVALID, "input index %d out of range", i);
  if (rank < 0 || rank > NNP_MAX_RANK) return nnp_error(NNP_ERR_INVALID, "rank %d out of range", rank);
  b->tick++;
  int victim = 0;
  for (int k = 0; k < XB_CACHE; k++) {
    xb_cached *c = &b->cache[k];
    if (c->c && c->input == i && c->rank == rank && !memcmp(c->dims, dims, sizeof(int64_t) * (size_t)rank)) {
      c->last_used = b->tick;
      b->cur = c->c;
      return NNP_OK;
    }
    if (!c->c || c->last_used < b->cache[victim].last_used) victim = k;
  }
  /* a miss: translate again for this shape */
  nnp_plan_options po = b->po;
  const char *name = b->g->values[b->g->inputs[i]].name;
  NNP_TRY(nnp_plan_options_bind_shape(&po, name, rank, dims));
  xb_state *fresh;
  NNP_TRY(xb_compile(b->g, b->pool, b->rt_flags, &po, &fresh));
  if (!xb_cur_cached(b)) xb_free(b->cur); /* the load-time runtime is replaced */
  xb_cached *c = &b->cache[victim];
  xb_free(c->c);
  *c = (xb_cached){.c = fresh, .input = i, .rank = rank, .last_used = b->tick};
  memcpy(c->dims, dims, sizeof(int64_t) * (size_t)rank);
  b->cur = fresh;
  b->po = po;
  return NNP_OK;
}

/* NCHW <-> NHWC of one rank-4 tensor. */
static void xb_transpose(const float *src, float *dst, const int64_t *d, bool to_nhwc) {
  int64_t N = d[0], C = d[1], H = d[2], W = d[3];
  for (int64_t n = 0; n < N; n++)
    for (int64_t c = 0; c < C; c++)
      for (int64_t p = 0; p < H * W; p++) {
        int64_t nchw = (n * C + c) * H * W + p, nhwc = (n * H * W + p) * C + c;
        if (to_nhwc) dst[nhwc] = src[nchw];
        else dst[nchw] = src[nhwc];
      }
}

static nnp_status xb_run(void *state) {
  xb_state *s = ((xb_backend *)state)->cur;
  for (int i = 0; i < s->n_in; i++)
    if (s->in[i].nhwc) xb_transpose(s->in[i].t.data, s->in[i].nhwc, s->in[i].t.dims, true);
  enum xnn_status x = xnn_invoke_runtime(s->rt);
  if (x != xnn_status_success) return nnp_error(NNP_ERR_INTERNAL, "xnn_invoke_runtime failed (status %d)", (int)x);
  for (int i = 0; i < s->n_out; i++)
    if (s->out[i].nhwc) xb_transpose(s->out[i].nhwc, s->out[i].t.data, s->out[i].t.dims, false);
  return NNP_OK;
}

static xb_state *xb_cur(void *st) { return ((xb_backend *)st)->cur; }
static int xb_num_inputs(void *st) { return xb_cur(st)->n_in; }
static const char *xb_input_name(void *st, int i) { xb_state *s = xb_cur(st); return s->g->values[s->in[i].value].name; }
static nnp_tensor *xb_input(void *st, int i) { return &xb_cur(st)->in[i].t; }
static int xb_num_outputs(void *st) { return xb_cur(st)->n_out; }
static const char *xb_output_name(void *st, int i) { xb_state *s = xb_cur(st); return s->g->values[s->out[i].value].name; }
static const nnp_tensor *xb_output(void *st, int i) { return &xb_cur(st)->out[i].t; }

const nnp_backend_vtable nnp_backend_xnnpack = {
    .name = "xnnpack",
    .description = "XNNPACK subgraph API (Debian libxnnpack), CNN ops, NHWC inside",
    .install_hint = "scripts/install-deps.sh (libxnnpack-dev libpthreadpool-dev), then rebuild",
    .probe = xb_probe,
    .load = xb_load,
    .num_inputs = xb_num_inputs,
    .input_name = xb_input_name,
    .input = xb_input,
    .reshape = xb_reshape,
    .run = xb_run,
    .num_outputs = xb_num_outputs,
    .output_name = xb_output_name,
    .output = xb_output,
    .unload = xb_unload,
};

#else /* built without XNNPACK: the backend is listed, and says why it cannot run */

static nnp_status xb_probe(char *version, size_t n) {
  (void)version, (void)n;
  return nnp_error(NNP_ERR_UNSUPPORTED, "nnperf was built without XNNPACK (libxnnpack-dev not found at configure time)");
}
static nnp_status xb_load(const nnp_backend_config *cfg, void **state, nnp_load_report *rep) {
  (void)cfg, (void)state, (void)rep;
  return xb_probe(NULL, 0);
}

const nnp_backend_vtable nnp_backend_xnnpack = {
    .name = "xnnpack",
    .description = "XNNPACK subgraph API (not built in)",
    .install_hint = "scripts/install-deps.sh (libxnnpack-dev libpthreadpool-dev), then rebuild",
    .probe = xb_probe,
    .load = xb_load,
};
#endif
