/* QDQ rewrite of an FP32 graph from a calibration table. See qdq.h. */
#include "quant/qdq.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nnperf/alloc.h"
#include "ir/passes/pass_util.h" /* pass_uses, pass_remove_node */
#include "ops/op.h"

void nnp_qdq_act_params(float lo, float hi, float *scale, uint8_t *zero_point) {
  if (lo > 0) lo = 0;
  if (hi < 0) hi = 0;
  float s = (hi - lo) / 255.0f;
  if (!(s > 0) || !isfinite(s)) {
    *scale = 1.0f; /* an all-zero tensor: any scale represents it */
    *zero_point = 0;
    return;
  }
  float z = rintf(-lo / s);
  *scale = s;
  *zero_point = (uint8_t)(z < 0 ? 0 : z > 255 ? 255 : z);
}

/* A new initializer value holding t (takes ownership of t's data). */
static nnp_status add_init(nnp_graph *g, const char *name, nnp_tensor *t, int *out) {
  if (nnp_graph_find_value(g, name) >= 0) {
    nnp_tensor_free(t);
    return nnp_error(NNP_ERR_INVALID, "value '%s' already exists", name);
  }
  int v;
  nnp_status s = nnp_graph_value(g, name, &v);
  nnp_tensor *held = s == NNP_OK ? nnp_malloc(sizeof *held) : NULL;
  if (!held) {
    nnp_tensor_free(t);
    return s != NNP_OK ? s : nnp_error(NNP_ERR_NOMEM, "out of memory for '%s'", name);
  }
  *held = *t;
  nnp_value *val = &g->values[v];
  val->kind = NNP_VALUE_INITIALIZER;
  val->dtype = t->dtype;
  val->rank = t->rank;
  for (int d = 0; d < t->rank; d++) val->dims[d].value = t->dims[d];
  val->init = held;
  *out = v;
  return NNP_OK;
}

static nnp_status add_scalar_or_vec(nnp_graph *g, const char *name, nnp_dtype dt, int64_t n, bool vec,
                                    const void *data, int *out) {
  nnp_tensor t = {dt, vec ? 1 : 0, {n}, NULL};
  NNP_TRY(nnp_tensor_alloc(&t));
  memcpy(t.data, data, (size_t)n * nnp_dtype_size(dt));
  return add_init(g, name, &t, out);
}

/* Appends node op_type(inputs) -> a new value named out_name; axis >= 0 adds 'axis'. */
static nnp_status add_node(nnp_graph *g, const char *name, const char *op_type, int n_in, const int *in,
                           const char *out_name, int64_t axis, int *out) {
  if (nnp_graph_find_value(g, out_name) >= 0) return nnp_error(NNP_ERR_INVALID, "value '%s' already exists", out_name);
  int v, ni;
  NNP_TRY(nnp_graph_value(g, out_name, &v));
  NNP_TRY(nnp_graph_add_node(g, name, op_type, "", n_in, in, 1, &v, &ni));
  g->nodes[ni].op = nnp_op_lookup("", op_type);
  if (axis >= 0) {
    nnp_attr *a;
    NNP_TRY(nnp_node_add_attr(&g->nodes[ni], "axis", &a));
    a->type = NNP_ATTR_INT;
    a->i = axis;
  }
  *out = v;
  return NNP_OK;
}

typedef struct act_qdq {
  int value, dq;
  float scale;
} act_qdq;

/* The DequantizeLinear output standing for activation v (made once per value). */
static nnp_status activation_dq(nnp_graph *g, const nnp_calib_entry *e, int v, act_qdq *memo, int *n_memo,
                                act_qdq **out) {
  for (int i = 0; i < *n_memo; i++)
    if (memo[i].value == v) {
      *out = &memo[i];
      return NNP_OK;
    }
  float scale;
  uint8_t zp;
  nnp_qdq_act_params(e->lo, e->hi, &scale, &zp);
  char base[512], n1[600], n2[600];
  snprintf(base, sizeof base, "%s", g->values[v].name);
  int vs, vz, vq, vdq;
  snprintf(n1, sizeof n1, "%s_scale", base);
  NNP_TRY(add_scalar_or_vec(g, n1, NNP_F32, 1, false, &scale, &vs));
  snprintf(n1, sizeof n1, "%s_zero_point", base);
  NNP_TRY(add_scalar_or_vec(g, n1, NNP_U8, 1, false, &zp, &vz));
  int qin[3] = {v, vs, vz};
  snprintf(n1, sizeof n1, "%s_QuantizeLinear", base);
  snprintf(n2, sizeof n2, "%s_quantized", base);
  NNP_TRY(add_node(g, n1, "QuantizeLinear", 3, qin, n2, -1, &vq));
  int dqin[3] = {vq, vs, vz};
  snprintf(n1, sizeof n1, "%s_DequantizeLinear", base);
  snprintf(n2, sizeof n2, "%s_dequantized", base);
  NNP_TRY(add_node(g, n1, "DequantizeLinear", 3, dqin, n2, -1, &vdq));
  memo[*n_memo] = (act_qdq){v, vdq, scale};
  *out = &memo[(*n_memo)++];
  return NNP_OK;
}

/* int8 per-channel weight (channels along axis) -> DequantizeLinear output value. */
static nnp_status weight_dq(nnp_graph *g, int wv, int axis, const nnp_tensor *bias, float xs, float *scales,
                            int *out) {
  const nnp_tensor *w = g->values[wv].init;
  int64_t ch = w->dims[axis], outer = 1, inner = 1;
  for (int i = 0; i < axis; i++) outer *= w->dims[i];
  for (int i = axis + 1; i < w->rank; i++) inner *= w->dims[i];
  NNP_TRY(nnp_weight_scales(w, axis, scales));
  /* The int32 bias has scale xs * ws[c]. A near-dead channel (max|w| ~ 1e-10 after
   * BatchNorm folding, with a bias of a few units: the pretrained EfficientNet-Lite0 has
   * them) would need a bias beyond int32, the bias would stay float, and then no INT8
   * kernel (nor ORT's or OpenVINO's QLinearConv) takes the layer. Raise such a channel's
   * weight scale until its bias fits with 2x headroom, as ONNX Runtime's quantizer does:
   * its weights are far below one step either way. */
  if (bias && xs > 0)
    for (int64_t c = 0; c < ch; c++) {
      float floor = fabsf(((const float *)bias->data)[c]) / (xs * 1073741824.0f);
      if (scales[c] < floor) scales[c] = floor;
    }
  nnp_tensor q = {NNP_I8, w->rank, {0}, NULL};
  memcpy(q.dims, w->dims, sizeof q.dims);
  NNP_TRY(nnp_tensor_alloc(&q));
  const float *x = w->data;
  int8_t *qd = q.data;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t c = 0; c < ch; c++)
      for (int64_t k = 0; k < inner; k++) {
        int64_t i = (o * ch + c) * inner + k;
        float r = rintf(x[i] / scales[c]);
        qd[i] = (int8_t)(r < -127 ? -127 : r > 127 ? 127 : r);
      }
  char base[512], n1[600], n2[600];
  snprintf(base, sizeof base, "%s", g->values[wv].name);
  int vq, vs, vz;
  snprintf(n1, sizeof n1, "%s_quantized", base);
  NNP_TRY(add_init(g, n1, &q, &vq));
  snprintf(n1, sizeof n1, "%s_scale", base);
  NNP_TRY(add_scalar_or_vec(g, n1, NNP_F32, ch, true, scales, &vs));
  int8_t *zeros = nnp_calloc((size_t)ch, 1);
  if (!zeros) return nnp_error(NNP_ERR_NOMEM, "out of memory for zero points");
  snprintf(n1, sizeof n1, "%s_zero_point", base);
  nnp_status s = add_scalar_or_vec(g, n1, NNP_I8, ch, true, zeros, &vz);
  nnp_free(zeros);
  NNP_TRY(s);
  int dqin[3] = {vq, vs, vz};
  snprintf(n1, sizeof n1, "%s_DequantizeLinear", base);
  snprintf(n2, sizeof n2, "%s_dequantized", base);
  return add_node(g, n1, "DequantizeLinear", 3, dqin, n2, axis, out);
}

/* int32 bias with scale x_scale * w_scale[c]; fails (bias stays float) if out of range. */
static nnp_status bias_dq(nnp_graph *g, int bv, float xs, const float *ws, int *out) {
  const nnp_tensor *b = g->values[bv].init;
  int64_t n = b->dims[0];
  nnp_tensor q = {NNP_I32, 1, {n}, NULL};
  float *sc = nnp_malloc(sizeof(float) * (size_t)n);
  nnp_status s = sc ? nnp_tensor_alloc(&q) : nnp_error(NNP_ERR_NOMEM, "out of memory for a bias");
  for (int64_t c = 0; s == NNP_OK && c < n; c++) {
    sc[c] = xs * ws[c];
    double r = rint((double)((const float *)b->data)[c] / sc[c]);
    if (!(fabs(r) < 2147483647.0)) s = NNP_ERR_LIMIT;
    else ((int32_t *)q.data)[c] = (int32_t)r;
  }
  if (s != NNP_OK) {
    nnp_tensor_free(&q);
    nnp_free(sc);
    return s == NNP_ERR_LIMIT ? nnp_error(NNP_ERR_LIMIT, "bias does not fit int32") : s;
  }
  char n1[600], n2[600];
  int vq, vs;
  snprintf(n1, sizeof n1, "%s_quantized", g->values[bv].name);
  s = add_init(g, n1, &q, &vq);
  snprintf(n1, sizeof n1, "%s_scale", g->values[bv].name);
  if (s == NNP_OK) s = add_scalar_or_vec(g, n1, NNP_F32, n, true, sc, &vs);
  nnp_free(sc);
  NNP_TRY(s);
  int dqin[2] = {vq, vs};
  snprintf(n1, sizeof n1, "%s_DequantizeLinear", g->values[bv].name);
  snprintf(n2, sizeof n2, "%s_dequantized", g->values[bv].name);
  return add_node(g, n1, "DequantizeLinear", 2, dqin, n2, 0, out);
}

static bool is_f32_init(const nnp_graph *g, int v) {
  return v >= 0 && g->values[v].kind == NNP_VALUE_INITIALIZER && g->values[v].init &&
         g->values[v].init->dtype == NNP_F32;
}

/* The weight's channel axis when node n is one the rewrite quantizes (a Conv, Gemm or
 * MatMul with a calibrated activation input and a float32 initializer weight in the
 * common layout), -1 otherwise; *e receives the activation's range. */
static int quantizable(const nnp_graph *g, const nnp_node *n, const nnp_calib_table *t, const nnp_calib_entry **e) {
  *e = NULL;
  if (n->domain && n->domain[0]) return -1;
  bool conv = !strcmp(n->op_type, "Conv"), gemm = !strcmp(n->op_type, "Gemm"), mm = !strcmp(n->op_type, "MatMul");
  if (!(conv || gemm || mm) || n->n_inputs < 2 || n->inputs[0] < 0) return -1;
  *e = nnp_calib_table_find(t, g->values[n->inputs[0]].name);
  int wv = n->inputs[1];
  const nnp_tensor *w = is_f32_init(g, wv) ? g->values[wv].init : NULL;
  int axis = -1;
  if (w && conv) axis = 0;
  if (w && gemm && w->rank == 2) axis = nnp_attr_int(n, "transB", 0) ? 0 : 1;
  if (w && mm && w->rank == 2) axis = 1;
  if (gemm && nnp_attr_int(n, "transA", 0)) axis = -1; /* keep the rewrite to the common layout */
  return *e ? axis : -1;
}

nnp_status nnp_qdq_layers(nnp_graph *g, const nnp_calib_table *t, int **nodes, int *n) {
  *nodes = NULL;
  *n = 0;
  int *idx = nnp_malloc(((size_t)g->n_nodes + 1) * sizeof *idx);
  if (!idx) return nnp_error(NNP_ERR_NOMEM, "out of memory listing quantizable layers");
  int count = 0;
  nnp_status s = NNP_OK;
  for (int i = 0; s == NNP_OK && i < g->n_nodes; i++) {
    const nnp_calib_entry *e;
    if (quantizable(g, &g->nodes[i], t, &e) < 0) continue;
    idx[count++] = i;
    nnp_node *nd = &g->nodes[i];
    if (nd->name && nd->name[0]) continue;
    /* keep_fp32 names layers: an unnamed one gets "<op>_node<index>" */
    char name[64];
    snprintf(name, sizeof name, "%s_node%d", nd->op_type, i);
    nnp_free(nd->name);
    nd->name = nnp_strdup(name);
    if (!nd->name) s = nnp_error(NNP_ERR_NOMEM, "out of memory naming layers");
  }
  if (s != NNP_OK) {
    nnp_free(idx);
    return s;
  }
  *nodes = idx;
  *n = count;
  return NNP_OK;
}

/* Float weights replaced by their int8 form are no longer read: free them, and make the
 * value undeclared so the exporter writes neither an initializer nor a value_info. */
static void drop_unused_initializers(nnp_graph *g) {
  bool *used = nnp_calloc((size_t)g->n_values + 1, sizeof *used);
  if (!used) return; /* keeping them is harmless */
  for (int i = 0; i < g->n_nodes; i++)
    for (int k = 0; k < g->nodes[i].n_inputs; k++)
      if (g->nodes[i].inputs[k] >= 0) used[g->nodes[i].inputs[k]] = true;
  for (int k = 0; k < g->n_outputs; k++) used[g->outputs[k]] = true;
  for (int v = 0; v < g->n_values; v++) {
    nnp_value *val = &g->values[v];
    if (used[v] || val->kind != NNP_VALUE_INITIALIZER || !val->init) continue;
    nnp_tensor_free(val->init);
    nnp_free(val->init);
    val->init = NULL;
    val->kind = NNP_VALUE_INTERMEDIATE;
    val->dtype = NNP_UNDEFINED;
    val->rank = -1;
  }
  nnp_free(used);
}

/* ---- BatchNormalization folding ----------------------------------------------------
 * A BatchNormalization right after a Conv (its only consumer) is folded into the Conv's
 * weights and bias before quantizing: per-channel weight scales are then computed on the
 * weights that actually run, and the Conv's output is what ORT and OpenVINO expect to
 * see between a DequantizeLinear and the next QuantizeLinear (an unfolded BN between
 * them blocks their QLinearConv fusion). */

static const float *f32_init_vec(const nnp_graph *g, int v, int64_t n) {
  if (v < 0 || v >= g->n_values) return NULL;
  const nnp_value *val = &g->values[v];
  if (val->kind != NNP_VALUE_INITIALIZER || !val->init || val->init->dtype != NNP_F32 || val->init->rank != 1 ||
      val->init->dims[0] != n)
    return NULL;
  return val->init->data;
}

nnp_status nnp_qdq_fold_batchnorm(nnp_graph *g, int *folded) {
  *folded = 0;
  for (int bi = 0; bi < g->n_nodes; bi++) {
    nnp_node *bn = &g->nodes[bi];
    if (strcmp(bn->op_type, "BatchNormalization") || (bn->domain && bn->domain[0]) || bn->n_inputs != 5 ||
        bn->n_outputs < 1 || nnp_attr_int(bn, "training_mode", 0) != 0)
      continue;
    int y = bn->inputs[0];
    if (y < 0 || g->values[y].producer < 0 || pass_uses(g, y) != 1) continue;
    int ci = g->values[y].producer;
    nnp_node *cv = &g->nodes[ci];
    if (strcmp(cv->op_type, "Conv") || (cv->domain && cv->domain[0]) || cv->n_inputs < 2 || cv->n_outputs != 1)
      continue;
    int wv = cv->inputs[1];
    if (!is_f32_init(g, wv) || g->values[wv].init->rank < 3) continue;
    const nnp_tensor *w = g->values[wv].init;
    int64_t m = w->dims[0], per = nnp_tensor_numel(w) / (m ? m : 1);
    const float *gam = f32_init_vec(g, bn->inputs[1], m), *beta = f32_init_vec(g, bn->inputs[2], m);
    const float *mean = f32_init_vec(g, bn->inputs[3], m), *var = f32_init_vec(g, bn->inputs[4], m);
    const float *b0 = cv->n_inputs >= 3 && cv->inputs[2] >= 0 ? f32_init_vec(g, cv->inputs[2], m) : NULL;
    if (!gam || !beta || !mean || !var || (cv->n_inputs >= 3 && cv->inputs[2] >= 0 && !b0)) continue;
    float eps = nnp_attr_float(bn, "epsilon", 1e-5f);
    nnp_tensor nw = {NNP_F32, w->rank, {0}, NULL}, nb = {NNP_F32, 1, {m}, NULL};
    memcpy(nw.dims, w->dims, sizeof nw.dims);
    NNP_TRY(nnp_tensor_alloc(&nw));
    nnp_status s = nnp_tensor_alloc(&nb);
    if (s != NNP_OK) {
      nnp_tensor_free(&nw);
      return s;
    }
    for (int64_t c = 0; c < m; c++) {
      float k = gam[c] / sqrtf(var[c] + eps);
      for (int64_t j = 0; j < per; j++) ((float *)nw.data)[c * per + j] = ((const float *)w->data)[c * per + j] * k;
      ((float *)nb.data)[c] = ((b0 ? b0[c] : 0.0f) - mean[c]) * k + beta[c];
    }
    char name[600];
    int vw, vb;
    snprintf(name, sizeof name, "%s_bnfolded", g->values[wv].name);
    NNP_TRY(add_init(g, name, &nw, &vw));
    snprintf(name, sizeof name, "%s_bias_bnfolded", g->nodes[bi].name ? g->nodes[bi].name : g->values[y].name);
    if (nnp_graph_find_value(g, name) >= 0) snprintf(name, sizeof name, "%s_bias_bnfolded", g->values[y].name);
    NNP_TRY(add_init(g, name, &nb, &vb));
    cv = &g->nodes[ci];
    bn = &g->nodes[bi];
    if (cv->n_inputs < 3) {
      int *ni = nnp_realloc(cv->inputs, 3 * sizeof *ni);
      if (!ni) return nnp_error(NNP_ERR_NOMEM, "out of memory folding BatchNormalization");
      cv->inputs = ni;
      cv->n_inputs = 3;
    }
    cv->inputs[1] = vw;
    cv->inputs[2] = vb;
    cv->outputs[0] = bn->outputs[0];
    g->values[y].dtype = NNP_UNDEFINED; /* orphaned: no value_info for it */
    g->values[y].rank = -1;
    pass_remove_node(g, bi);
    (*folded)++;
    /* node indices moved: producers and order are recomputed before the next search */
    NNP_TRY(nnp_graph_toposort(g));
    bi = -1;
  }
  return NNP_OK;
}

nnp_status nnp_qdq_rewrite(nnp_graph *g, const nnp_calib_table *t, const char *const *keep_fp32, int n_keep,
                           nnp_qdq_report *rep) {
  memset(rep, 0, sizeof *rep);
  if (g->opset < 13)
    return nnp_error(NNP_ERR_UNSUPPORTED, "QDQ export needs opset >= 13 (per-axis DequantizeLinear); the model has %lld",
                     (long long)g->opset);
  int n_folded;
  NNP_TRY(nnp_qdq_fold_batchnorm(g, &n_folded));
  rep->folded_bn = n_folded;
  int n_orig = g->n_nodes;
  act_qdq *memo = nnp_calloc((size_t)g->n_values + 1, sizeof *memo);
  bool *qnode = nnp_calloc((size_t)n_orig + 1, sizeof *qnode);
  float *scales = NULL;
  size_t scales_cap = 0;
  int n_memo = 0;
  nnp_status s = memo && qnode ? NNP_OK : nnp_error(NNP_ERR_NOMEM, "out of memory for the QDQ rewrite");
  for (int i = 0; s == NNP_OK && i < n_orig; i++) {
    nnp_node *n = &g->nodes[i];
    bool conv = !strcmp(n->op_type, "Conv"), gemm = !strcmp(n->op_type, "Gemm");
    if ((n->domain && n->domain[0]) || !(conv || gemm || !strcmp(n->op_type, "MatMul"))) continue;
    bool keep = false;
    for (int k = 0; k < n_keep && !keep; k++) keep = n->name && !strcmp(n->name, keep_fp32[k]);
    const nnp_calib_entry *e;
    int axis = quantizable(g, n, t, &e);
    if (keep || axis < 0) {
      rep->skipped++;
      continue;
    }
    int wv = n->inputs[1];
    int nodename_i = i;
    act_qdq *a;
    s = activation_dq(g, e, g->nodes[nodename_i].inputs[0], memo, &n_memo, &a);
    if (s != NNP_OK) break;
    int x_dq = a->dq;
    float xs = a->scale;
    size_t ch = (size_t)g->values[wv].init->dims[axis];
    if (ch > scales_cap) {
      float *ns = nnp_realloc(scales, ch * sizeof *ns);
      if (!ns) {
        s = nnp_error(NNP_ERR_NOMEM, "out of memory for weight scales");
        break;
      }
      scales = ns;
      scales_cap = ch;
    }
    int w_dq;
    int bv = g->nodes[nodename_i].n_inputs >= 3 ? g->nodes[nodename_i].inputs[2] : -1;
    bool int32_bias = (conv || gemm) && is_f32_init(g, bv) && g->values[bv].init->rank == 1 &&
                      (size_t)g->values[bv].init->dims[0] == ch;
    s = weight_dq(g, wv, axis, int32_bias ? g->values[bv].init : NULL, xs, scales, &w_dq);
    if (s != NNP_OK) break;
    n = &g->nodes[nodename_i]; /* nodes may have moved */
    n->inputs[0] = x_dq;
    n->inputs[1] = w_dq;
    if (int32_bias) {
      int b_dq;
      nnp_status bs = bias_dq(g, bv, xs, scales, &b_dq);
      if (bs == NNP_OK) g->nodes[nodename_i].inputs[2] = b_dq;
      else if (bs != NNP_ERR_LIMIT) s = bs;
    }
    rep->quantized++;
    qnode[nodename_i] = true;
  }
  /* Residual Adds: when every input of a two-input Add is a quantized layer's output
   * (with a calibrated range) or an activation that already has a Q/DQ pair, the Add
   * reads the dequantized values, and those layer outputs get their own pair. ORT and
   * OpenVINO then see DQ -> Conv -> Q (their QLinearConv pattern) and DQ -> Add -> Q,
   * instead of a float Conv output that keeps the Conv in FP32. */
  for (int i = 0; s == NNP_OK && i < n_orig; i++) {
    const nnp_node *n = &g->nodes[i];
    if (strcmp(n->op_type, "Add") || (n->domain && n->domain[0]) || n->n_inputs != 2) continue;
    const nnp_calib_entry *ent[2] = {NULL, NULL};
    bool ok = true;
    for (int k = 0; k < 2 && ok; k++) {
      int v = n->inputs[k];
      bool has_pair = false;
      for (int j = 0; j < n_memo && !has_pair; j++) has_pair = memo[j].value == v;
      int prod = v >= 0 ? g->values[v].producer : -1;
      ent[k] = v >= 0 ? nnp_calib_table_find(t, g->values[v].name) : NULL;
      ok = ent[k] && (has_pair || (prod >= 0 && prod < n_orig && qnode[prod]));
    }
    for (int k = 0; ok && s == NNP_OK && k < 2; k++) {
      act_qdq *a;
      s = activation_dq(g, ent[k], g->nodes[i].inputs[k], memo, &n_memo, &a);
      if (s == NNP_OK) g->nodes[i].inputs[k] = a->dq;
    }
  }
  /* Global average pools after a quantized layer: a network's head (Conv [-> Relu | Clip]
   * -> GlobalAveragePool, as MobileNet and EfficientNet end) reads a Q/DQ pair, so the
   * head Conv ends in a QuantizeLinear and runs INT8 too (fuse-qdq makes it one
   * QLinearConv) instead of staying in FP32 for want of one. The pair's range is the
   * Conv output's calibrated range clamped to the activation's bounds. */
  for (int i = 0; s == NNP_OK && i < n_orig; i++) {
    const nnp_node *n = &g->nodes[i];
    if (strcmp(n->op_type, "GlobalAveragePool") || (n->domain && n->domain[0]) || n->n_inputs != 1) continue;
    int v = n->inputs[0], prod = v >= 0 ? g->values[v].producer : -1;
    float lo = -INFINITY, hi = INFINITY;
    if (prod >= 0 && prod < n_orig && !qnode[prod]) { /* an activation between */
      const nnp_node *a = &g->nodes[prod];
      bool relu = !strcmp(a->op_type, "Relu"), clip = !strcmp(a->op_type, "Clip") && pass_clip_bounds(g, a, &lo, &hi);
      if (relu) lo = 0;
      if ((!relu && !clip) || (a->domain && a->domain[0]) || a->n_inputs < 1 || pass_uses(g, a->inputs[0]) != 1)
        continue;
      prod = a->inputs[0] >= 0 ? g->values[a->inputs[0]].producer : -1;
      if (prod < 0 || prod >= n_orig || !qnode[prod]) continue;
    } else if (prod < 0 || prod >= n_orig) {
      continue;
    }
    const nnp_calib_entry *ce = nnp_calib_table_find(t, g->values[g->nodes[prod].outputs[0]].name);
    if (!ce) continue;
    nnp_calib_entry clamped = {.name = ce->name, .lo = ce->lo > lo ? ce->lo : lo, .hi = ce->hi < hi ? ce->hi : hi};
    if (!(clamped.lo <= clamped.hi)) continue;
    act_qdq *a;
    s = activation_dq(g, &clamped, v, memo, &n_memo, &a);
    if (s == NNP_OK) g->nodes[i].inputs[0] = a->dq;
  }
  nnp_free(qnode);
  nnp_free(memo);
  nnp_free(scales);
  if (s == NNP_OK) s = nnp_graph_toposort(g);
  if (s == NNP_OK) drop_unused_initializers(g);
  return s;
}
