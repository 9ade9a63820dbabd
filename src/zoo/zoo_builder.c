/* Graph-building helpers for the model zoo (see zoo_builder.h). */
#include "zoo/zoo_builder.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nnperf/alloc.h"
#include "ops/op.h"

static bool failed(const zb *b) { return b->status != NNP_OK; }

static int fail(zb *b, nnp_status s) {
  if (b->status == NNP_OK) b->status = s;
  return -1;
}

void zb_begin(zb *b, const char *name, uint64_t seed) {
  memset(b, 0, sizeof *b);
  b->seed = seed;
  b->last_node = -1;
  b->relu6_min = b->relu6_max = -1;
  nnp_status s = nnp_graph_create(&b->g);
  if (s != NNP_OK) {
    b->status = s;
    return;
  }
  b->g->opset = 13;
  b->g->ir_version = 8;
  b->g->name = nnp_strdup(name);
  b->g->producer = nnp_strdup("nnperf");
  if (!b->g->name || !b->g->producer) fail(b, nnp_error(NNP_ERR_NOMEM, "out of memory building '%s'", name));
}

/* Sets value v's declared type to float32 [dims] with dimension 0 as the batch. */
static nnp_status declare_batched(nnp_graph *g, int v, int64_t batch, int rank, const int64_t *dims) {
  nnp_value *val = &g->values[v];
  val->dtype = NNP_F32;
  val->rank = rank;
  for (int d = 0; d < rank; d++) {
    nnp_free(val->dims[d].symbol);
    val->dims[d].symbol = NULL;
    val->dims[d].value = dims[d];
  }
  if (batch <= 0) {
    val->dims[0].value = -1;
    val->dims[0].symbol = nnp_strdup("N");
    if (!val->dims[0].symbol) return nnp_error(NNP_ERR_NOMEM, "out of memory");
  } else {
    val->dims[0].value = batch;
  }
  return NNP_OK;
}

int zb_input_image(zb *b, const char *name, int64_t batch, int64_t c, int64_t h, int64_t w) {
  if (failed(b)) return -1;
  int v;
  nnp_status s = nnp_graph_value(b->g, name, &v);
  if (s == NNP_OK) s = nnp_graph_add_input(b->g, v);
  const int64_t dims[4] = {batch, c, h, w};
  if (s == NNP_OK) s = declare_batched(b->g, v, batch, 4, dims);
  return s == NNP_OK ? v : fail(b, s);
}

nnp_status zb_finish(zb *b, int output, int64_t batch, int64_t classes, nnp_graph **out) {
  *out = NULL;
  if (!failed(b)) {
    const int64_t dims[2] = {batch, classes};
    nnp_status s = declare_batched(b->g, output, batch, 2, dims);
    if (s == NNP_OK) s = nnp_graph_add_output(b->g, output);
    if (s == NNP_OK) s = nnp_graph_toposort(b->g);
    if (s != NNP_OK) fail(b, s);
  }
  if (failed(b)) {
    nnp_graph_destroy(b->g);
    b->g = NULL;
    return b->status;
  }
  *out = b->g;
  b->g = NULL;
  return NNP_OK;
}

/* ---- seeded deviates ------------------------------------------------------------- */

static uint64_t splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* Each tensor draws from its own stream, keyed by the seed and its name, so a tensor's
 * values do not depend on what was built before it (or on the image size). */
static uint64_t stream_for(uint64_t seed, const char *name) {
  uint64_t h = 0xCBF29CE484222325ull; /* FNV-1a */
  for (const unsigned char *p = (const unsigned char *)name; *p; p++) h = (h ^ *p) * 0x100000001B3ull;
  uint64_t st = seed ^ h;
  return splitmix64(&st);
}

/* Zero-mean, unit-variance deviate from the sum of four 16-bit uniforms (Irwin-Hall).
 * Integer arithmetic and one multiply: the same bits on every platform and libm, which
 * a Box-Muller transform (log, cos) would not guarantee. Bounded at +-3.46. */
static float normalish(uint64_t *state) {
  uint64_t r = splitmix64(state);
  int64_t sum = (int64_t)(r & 0xFFFF) + (int64_t)((r >> 16) & 0xFFFF) + (int64_t)((r >> 32) & 0xFFFF) +
                (int64_t)(r >> 48);
  /* mean 4 * 32767.5; variance 4 * (65536^2 - 1) / 12 ~= 65536^2 / 3 */
  return (float)((double)sum - 131070.0) * (1.7320508f / 65536.0f);
}

static int add_param(zb *b, const char *name, int rank, const int64_t *dims, nnp_tensor **t_out) {
  if (failed(b)) return -1;
  if (nnp_graph_find_value(b->g, name) >= 0)
    return fail(b, nnp_error(NNP_ERR_INTERNAL, "zoo: parameter '%s' defined twice", name));
  int v;
  nnp_status s = nnp_graph_value(b->g, name, &v);
  if (s != NNP_OK) return fail(b, s);
  nnp_value *val = &b->g->values[v];
  nnp_tensor *t = nnp_calloc(1, sizeof *t);
  if (!t) return fail(b, nnp_error(NNP_ERR_NOMEM, "out of memory for parameter '%s'", name));
  t->dtype = NNP_F32;
  t->rank = rank;
  for (int d = 0; d < rank; d++) t->dims[d] = dims[d];
  s = nnp_tensor_alloc(t);
  if (s != NNP_OK) {
    nnp_free(t);
    return fail(b, nnp_error_context(s, "parameter '%s'", name));
  }
  val->init = t; /* the graph owns it from here */
  val->kind = NNP_VALUE_INITIALIZER;
  val->dtype = NNP_F32;
  val->rank = rank;
  for (int d = 0; d < rank; d++) val->dims[d].value = dims[d];
  *t_out = t;
  return v;
}

int zb_param_normal(zb *b, const char *name, int rank, const int64_t *dims, float mean, float std) {
  nnp_tensor *t;
  int v = add_param(b, name, rank, dims, &t);
  if (v < 0) return -1;
  uint64_t st = stream_for(b->seed, name);
  float *p = t->data;
  int64_t n = nnp_tensor_numel(t);
  for (int64_t i = 0; i < n; i++) p[i] = mean + std * normalish(&st);
  return v;
}

int zb_param_scalar(zb *b, const char *name, float x) {
  nnp_tensor *t;
  int v = add_param(b, name, 0, NULL, &t);
  if (v < 0) return -1;
  *(float *)t->data = x;
  return v;
}

/* BatchNormalization variance: (1 + 0.15 n)^2, always positive (n is bounded at 3.46),
 * centred near 1 as trained networks' running variances are after normalization. */
static int bn_variance(zb *b, const char *name, int64_t c) {
  nnp_tensor *t;
  int v = add_param(b, name, 1, &c, &t);
  if (v < 0) return -1;
  uint64_t st = stream_for(b->seed, name);
  float *p = t->data;
  for (int64_t i = 0; i < c; i++) {
    float f = 1.0f + 0.15f * normalish(&st);
    p[i] = f * f;
  }
  return v;
}

/* ---- nodes ----------------------------------------------------------------------- */

int zb_node(zb *b, const char *name, const char *op_type, int n_in, const int *ins, const char *out_name) {
  if (failed(b)) return -1;
  for (int k = 0; k < n_in; k++)
    if (ins[k] < 0) return fail(b, nnp_error(NNP_ERR_INTERNAL, "zoo: node '%s' has an undefined input", name));
  int out;
  nnp_status s = nnp_graph_value(b->g, out_name ? out_name : name, &out);
  if (s != NNP_OK) return fail(b, s);
  int idx;
  s = nnp_graph_add_node(b->g, name, op_type, "", n_in, ins, 1, &out, &idx);
  if (s != NNP_OK) return fail(b, s);
  b->g->nodes[idx].op = nnp_op_lookup("", op_type);
  b->last_node = idx;
  return out;
}

static nnp_attr *new_attr(zb *b, const char *name, nnp_attr_type type) {
  if (failed(b)) return NULL;
  nnp_attr *a;
  nnp_status s = nnp_node_add_attr(&b->g->nodes[b->last_node], name, &a);
  if (s != NNP_OK) {
    fail(b, s);
    return NULL;
  }
  a->type = type;
  return a;
}

void zb_attr_int(zb *b, const char *name, int64_t v) {
  nnp_attr *a = new_attr(b, name, NNP_ATTR_INT);
  if (a) a->i = v;
}

void zb_attr_float(zb *b, const char *name, float v) {
  nnp_attr *a = new_attr(b, name, NNP_ATTR_FLOAT);
  if (a) a->f = v;
}

void zb_attr_ints(zb *b, const char *name, int n, const int64_t *v) {
  nnp_attr *a = new_attr(b, name, NNP_ATTR_INTS);
  if (!a) return;
  a->ints = nnp_malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
  if (!a->ints) {
    fail(b, nnp_error(NNP_ERR_NOMEM, "out of memory for attribute '%s'", name));
    return;
  }
  memcpy(a->ints, v, sizeof(int64_t) * (size_t)n);
  a->count = (size_t)n;
}

/* ---- layers ---------------------------------------------------------------------- */

#define PNAME(buf, base, suffix) snprintf(buf, sizeof buf, "%s.%s", base, suffix)

int zb_conv(zb *b, const char *name, int x, int64_t cin, int64_t cout, int k, int stride, int pad, int group,
            bool bias, float gain) {
  if (failed(b)) return -1;
  if (group < 1 || cin % group || cout % group)
    return fail(b, nnp_error(NNP_ERR_INTERNAL, "zoo: conv '%s' channels %lld->%lld do not divide into %d groups",
                             name, (long long)cin, (long long)cout, group));
  char pn[160];
  const int64_t wdims[4] = {cout, cin / group, k, k};
  const float fan_in = (float)(cin / group * k * k);
  PNAME(pn, name, "weight");
  int ins[3];
  ins[0] = x;
  ins[1] = zb_param_normal(b, pn, 4, wdims, 0.0f, sqrtf(gain / fan_in));
  if (bias) {
    PNAME(pn, name, "bias");
    ins[2] = zb_param_normal(b, pn, 1, &cout, 0.0f, 0.01f);
  }
  int y = zb_node(b, name, "Conv", bias ? 3 : 2, ins, NULL);
  const int64_t ks[2] = {k, k}, st[2] = {stride, stride}, pads[4] = {pad, pad, pad, pad};
  zb_attr_ints(b, "kernel_shape", 2, ks);
  zb_attr_ints(b, "strides", 2, st);
  zb_attr_ints(b, "pads", 4, pads);
  zb_attr_int(b, "group", group);
  return failed(b) ? -1 : y;
}

int zb_bn(zb *b, const char *name, int x, int64_t c, float gamma_mean) {
  if (failed(b)) return -1;
  char pn[160];
  int ins[5];
  ins[0] = x;
  PNAME(pn, name, "weight");
  ins[1] = zb_param_normal(b, pn, 1, &c, gamma_mean, 0.1f * gamma_mean);
  PNAME(pn, name, "bias");
  ins[2] = zb_param_normal(b, pn, 1, &c, 0.0f, 0.05f);
  PNAME(pn, name, "running_mean");
  ins[3] = zb_param_normal(b, pn, 1, &c, 0.0f, 0.05f);
  PNAME(pn, name, "running_var");
  ins[4] = bn_variance(b, pn, c);
  int y = zb_node(b, name, "BatchNormalization", 5, ins, NULL);
  zb_attr_float(b, "epsilon", 1e-5f);
  return failed(b) ? -1 : y;
}

int zb_relu(zb *b, const char *name, int x) { return zb_node(b, name, "Relu", 1, &x, NULL); }

int zb_relu6(zb *b, const char *name, int x) {
  if (failed(b)) return -1;
  if (b->relu6_min < 0) {
    b->relu6_min = zb_param_scalar(b, "relu6.min", 0.0f);
    b->relu6_max = zb_param_scalar(b, "relu6.max", 6.0f);
  }
  const int ins[3] = {x, b->relu6_min, b->relu6_max};
  return zb_node(b, name, "Clip", 3, ins, NULL);
}

int zb_add(zb *b, const char *name, int x, int y) {
  const int ins[2] = {x, y};
  return zb_node(b, name, "Add", 2, ins, NULL);
}

int zb_maxpool(zb *b, const char *name, int x, int k, int stride, int pad, bool ceil_mode) {
  int y = zb_node(b, name, "MaxPool", 1, &x, NULL);
  const int64_t ks[2] = {k, k}, st[2] = {stride, stride}, pads[4] = {pad, pad, pad, pad};
  zb_attr_ints(b, "kernel_shape", 2, ks);
  zb_attr_ints(b, "strides", 2, st);
  zb_attr_ints(b, "pads", 4, pads);
  if (ceil_mode) zb_attr_int(b, "ceil_mode", 1);
  return failed(b) ? -1 : y;
}

int zb_global_avgpool(zb *b, const char *name, int x) { return zb_node(b, name, "GlobalAveragePool", 1, &x, NULL); }

int zb_flatten(zb *b, const char *name, int x) {
  int y = zb_node(b, name, "Flatten", 1, &x, NULL);
  zb_attr_int(b, "axis", 1);
  return failed(b) ? -1 : y;
}

int zb_linear(zb *b, const char *name, int x, int64_t in, int64_t out, const char *out_name) {
  if (failed(b)) return -1;
  char pn[160];
  const int64_t wdims[2] = {out, in};
  int ins[3];
  ins[0] = x;
  PNAME(pn, name, "weight");
  ins[1] = zb_param_normal(b, pn, 2, wdims, 0.0f, sqrtf(ZB_GAIN_LINEAR / (float)in));
  PNAME(pn, name, "bias");
  ins[2] = zb_param_normal(b, pn, 1, &out, 0.0f, 0.01f);
  int y = zb_node(b, name, "Gemm", 3, ins, out_name);
  zb_attr_float(b, "alpha", 1.0f);
  zb_attr_float(b, "beta", 1.0f);
  zb_attr_int(b, "transB", 1);
  return failed(b) ? -1 : y;
}

int zb_concat(zb *b, const char *name, int n, const int *xs, int axis) {
  int y = zb_node(b, name, "Concat", n, xs, NULL);
  zb_attr_int(b, "axis", axis);
  return failed(b) ? -1 : y;
}

int zb_conv_bn_act(zb *b, const char *prefix, int x, int64_t cin, int64_t cout, int k, int stride, int group,
                   int act) {
  char n0[160], n1[160], n2[160];
  PNAME(n0, prefix, "0");
  PNAME(n1, prefix, "1");
  PNAME(n2, prefix, "2");
  int y = zb_conv(b, n0, x, cin, cout, k, stride, (k - 1) / 2, group, false, act ? ZB_GAIN_RELU : ZB_GAIN_LINEAR);
  y = zb_bn(b, n1, y, cout, 1.0f);
  if (act == 1) y = zb_relu(b, n2, y);
  else if (act == 6) y = zb_relu6(b, n2, y);
  return y;
}
