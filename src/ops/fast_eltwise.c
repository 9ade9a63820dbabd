/* Relu, Clip, Sigmoid, HardSwish, HardSigmoid, same-shape Add and Mul, and Add/Mul of an
 * [N,C,H,W] value with a per-channel one or of any value with one along its last axis ->
 * kernels/eltwise.h: float32 only; Clip only with load-time bounds. Other broadcasts
 * stay reference. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "kernels/eltwise.h"
#include "nnperf/alloc.h"
#include "ops/fast_ops.h"
#include "ops/op_util.h"

/* fast_elt's binop where the op is not a binary one (an nnp_binop, >= 0, otherwise) */
enum { ELT_UNARY = -1 /* ep's activation */, ELT_HARD_SIGMOID = -2 /* alpha, beta */ };

typedef struct fast_elt {
  nnp_epilogue ep;
  int binop; /* an nnp_binop, ELT_UNARY or ELT_HARD_SIGMOID */
  float alpha, beta;
  int64_t n;
  /* per-channel broadcast: input `big` is [N,C,H,W], the other [N,C,1,1] (per_image),
   * [1,C,1,1] or [C,1,1]; channels 0 for the same-shape case */
  int big, per_image;
  int64_t planes, channels, hw;
  int64_t rows, row_len; /* last-axis broadcast: `big` is rows x row_len, the other row_len */
} fast_elt;

static void fast_elt_destroy(void *p) { nnp_free(p); }

static nnp_status fast_elt_run(void *p, nnp_op_ctx *ctx) {
  const fast_elt *f = p;
  if (f->binop == ELT_HARD_SIGMOID)
    nnp_eltwise_hard_sigmoid(ctx->in[0]->data, ctx->out[0]->data, f->n, f->alpha, f->beta, ctx->pool);
  else if (f->binop == ELT_UNARY) nnp_eltwise_act(ctx->in[0]->data, ctx->out[0]->data, f->n, &f->ep, ctx->pool);
  else if (f->row_len)
    nnp_eltwise_row_binary((nnp_binop)f->binop, ctx->in[f->big]->data, ctx->in[1 - f->big]->data, ctx->out[0]->data,
                           f->rows, f->row_len, ctx->pool);
  else if (f->channels)
    nnp_eltwise_channel_binary((nnp_binop)f->binop, ctx->in[f->big]->data, ctx->in[1 - f->big]->data,
                               ctx->out[0]->data, f->planes, f->channels, f->hw, f->per_image, ctx->pool);
  else nnp_eltwise_binary((nnp_binop)f->binop, ctx->in[0]->data, ctx->in[1]->data, ctx->out[0]->data, f->n, NULL,
                          ctx->pool);
  return NNP_OK;
}

static nnp_status make(const nnp_op_ctx *ctx, int act, float lo, float hi, int binop, const char *name,
                       nnp_fast_kernel *out) {
  fast_elt *f = nnp_calloc(1, sizeof *f);
  if (!f) return nnp_error(NNP_ERR_NOMEM, "out of memory preparing %s", name);
  f->ep.act = act;
  f->ep.act_min = lo;
  f->ep.act_max = hi;
  f->binop = binop;
  f->n = nnp_tensor_numel(ctx->out[0]);
  out->run = fast_elt_run;
  out->destroy = fast_elt_destroy;
  out->state = f;
  out->name = name;
  return NNP_OK;
}

nnp_status nnp_prepare_eltwise_act(const nnp_op_ctx *ctx, bool generic, nnp_fast_kernel *out) {
  memset(out, 0, sizeof *out);
  const nnp_tensor *x = ctx->in[0];
  if (x->dtype != NNP_F32 || !nnp_tensor_same_shape(x, ctx->out[0])) return NNP_OK;
  const char *op = ctx->node->op_type;
  if (!strcmp(op, "Relu")) return make(ctx, NNP_ACT_RELU, 0, 0, ELT_UNARY, "eltwise.relu", out);
  if (!strcmp(op, "Sigmoid")) return make(ctx, NNP_ACT_SIGMOID, 0, 0, ELT_UNARY, "eltwise.sigmoid", out);
  if (!strcmp(op, "HardSwish")) return make(ctx, NNP_ACT_HARDSWISH, 0, 0, ELT_UNARY, "eltwise.hardswish", out);
  if (!strcmp(op, "HardSigmoid")) { /* the reference's defaults */
    NNP_TRY(make(ctx, NNP_ACT_NONE, 0, 0, ELT_HARD_SIGMOID, "eltwise.hardsigmoid", out));
    fast_elt *f = out->state;
    f->alpha = nnp_attr_float(ctx->node, "alpha", 0.2f);
    f->beta = nnp_attr_float(ctx->node, "beta", 0.5f);
    return NNP_OK;
  }
  if (!strcmp(op, "Clip")) {
    float lo, hi;
    if (ctx->opset < 11) {
      lo = nnp_attr_float(ctx->node, "min", -FLT_MAX);
      hi = nnp_attr_float(ctx->node, "max", FLT_MAX);
    } else {
      const nnp_tensor *tmin = nnp_in(ctx, 1), *tmax = nnp_in(ctx, 2);
      if ((tmin && !tmin->data) || (tmax && !tmax->data)) return NNP_OK; /* run-time bounds */
      lo = tmin ? *(const float *)tmin->data : -INFINITY;
      hi = tmax ? *(const float *)tmax->data : INFINITY;
    }
    return make(ctx, NNP_ACT_CLIP, lo, hi, ELT_UNARY, "eltwise.clip", out);
  }
  return NNP_OK;
}

/* Whether small is one value along big's last axis: [..., 1, n] (leading 1s) or [n]. */
static bool along_last(const nnp_tensor *big, const nnp_tensor *small) {
  if (big->rank < 1 || small->rank < 1 || small->rank > big->rank) return false;
  const int64_t n = big->dims[big->rank - 1];
  if (small->dims[small->rank - 1] != n || n < 2) return false;
  for (int i = 0; i + 1 < small->rank; i++)
    if (small->dims[i] != 1) return false;
  return true;
}

/* Add/Mul of a value with one along its last axis (either input order). */
static nnp_status prepare_row_binary(const nnp_op_ctx *ctx, int binop, nnp_fast_kernel *out) {
  const nnp_tensor *a = ctx->in[0], *b = ctx->in[1], *y = ctx->out[0];
  int big = -1;
  if (nnp_tensor_same_shape(a, y) && along_last(a, b)) big = 0;
  else if (nnp_tensor_same_shape(b, y) && along_last(b, a)) big = 1;
  if (big < 0) return NNP_OK;
  NNP_TRY(make(ctx, NNP_ACT_NONE, 0, 0, binop, binop == NNP_BINOP_MUL ? "eltwise.mul.row" : "eltwise.add.row", out));
  fast_elt *f = out->state;
  f->big = big;
  f->row_len = y->dims[y->rank - 1];
  f->rows = nnp_tensor_numel(y) / f->row_len;
  return NNP_OK;
}

/* Add/Mul of [N,C,H,W] with a per-channel value (either input order), else with one
 * along the last axis. */
static nnp_status prepare_channel_binary(const nnp_op_ctx *ctx, int binop, nnp_fast_kernel *out) {
  const nnp_tensor *a = ctx->in[0], *b = ctx->in[1], *y = ctx->out[0];
  int per_image = 0, big = -1;
  if (nnp_tensor_same_shape(a, y) && nnp_per_channel_of(a, b, &per_image)) big = 0;
  else if (nnp_tensor_same_shape(b, y) && nnp_per_channel_of(b, a, &per_image)) big = 1;
  if (big < 0) return prepare_row_binary(ctx, binop, out);
  NNP_TRY(make(ctx, NNP_ACT_NONE, 0, 0, binop, binop == NNP_BINOP_MUL ? "eltwise.mul.channel" : "eltwise.add.channel",
               out));
  fast_elt *f = out->state;
  f->big = big;
  f->per_image = per_image;
  f->channels = y->dims[1];
  f->planes = y->dims[0] * y->dims[1];
  f->hw = y->dims[2] * y->dims[3];
  return NNP_OK;
}

nnp_status nnp_prepare_eltwise_binary(const nnp_op_ctx *ctx, bool generic, nnp_fast_kernel *out) {
  memset(out, 0, sizeof *out);
  const nnp_tensor *a = ctx->in[0], *b = ctx->in[1];
  if (a->dtype != NNP_F32 || b->dtype != NNP_F32 || ctx->out[0]->dtype != NNP_F32) return NNP_OK;
  const bool add = !strcmp(ctx->node->op_type, "Add"), mul = !strcmp(ctx->node->op_type, "Mul");
  if (!add && !mul) return NNP_OK;
  if (!nnp_tensor_same_shape(a, b) || !nnp_tensor_same_shape(a, ctx->out[0]))
    return prepare_channel_binary(ctx, mul ? NNP_BINOP_MUL : NNP_BINOP_ADD, out);
  if (!strcmp(ctx->node->op_type, "Add")) return make(ctx, NNP_ACT_NONE, 0, 0, NNP_BINOP_ADD, "eltwise.add", out);
  if (!strcmp(ctx->node->op_type, "Mul")) return make(ctx, NNP_ACT_NONE, 0, 0, NNP_BINOP_MUL, "eltwise.mul", out);
  return NNP_OK;
}

nnp_prepare_fn nnp_op_prepare(int op) {
  const nnp_op_info *info = nnp_op_get(op);
  return info ? info->prepare : NULL;
}

/* Inference BatchNormalization left after fold-batchnorm (one not after a conv: DenseNet's
 * pre-activation BN, 5% of densenet121 on the reference kernel): float32, constant
 * per-channel parameters, folded once here to y = x * a[c] + b[c] with a and b computed
 * in double as the reference does, then rounded to float (the reference keeps them in
 * double per element: results agree within float rounding, not bit for bit). */
typedef struct fast_bn {
  float *a, *b;
  int64_t planes, channels, hw;
  bool relu; /* FusedBatchNorm's Relu */
} fast_bn;

static void fast_bn_destroy(void *p) {
  fast_bn *f = p;
  nnp_free(f->a);
  nnp_free(f->b);
  nnp_free(f);
}

static nnp_status fast_bn_run(void *p, nnp_op_ctx *ctx) {
  const fast_bn *f = p;
  nnp_eltwise_channel_affine(ctx->in[0]->data, f->a, f->b, ctx->out[0]->data, f->planes, f->channels, f->hw,
                             f->relu, ctx->pool);
  return NNP_OK;
}

void nnp_bn_coefficients(const nnp_op_ctx *ctx, int64_t c, float *a, float *b) {
  const double eps = nnp_attr_float(ctx->node, "epsilon", 1e-5f);
  for (int64_t k = 0; k < c; k++) {
    const double ak = nnp_tensor_get_f64(ctx->in[1], k) / sqrt(nnp_tensor_get_f64(ctx->in[4], k) + eps);
    a[k] = (float)ak;
    b[k] = (float)(nnp_tensor_get_f64(ctx->in[2], k) - nnp_tensor_get_f64(ctx->in[3], k) * ak);
  }
}

static nnp_status prepare_bn(const nnp_op_ctx *ctx, bool relu, nnp_fast_kernel *out) {
  memset(out, 0, sizeof *out);
  const nnp_tensor *x = ctx->in[0];
  if (x->dtype != NNP_F32 || x->rank < 2 || ctx->n_out > 1 || nnp_tensor_numel(x) == 0) return NNP_OK;
  const int64_t C = x->dims[1];
  for (int i = 1; i <= 4; i++)
    if (!ctx->in[i]->data || nnp_tensor_numel(ctx->in[i]) != C) return NNP_OK; /* run-time or per-element */
  fast_bn *f = nnp_calloc(1, sizeof *f);
  if (f) f->a = nnp_malloc((size_t)C * sizeof(float)), f->b = nnp_malloc((size_t)C * sizeof(float));
  if (!f || !f->a || !f->b) {
    if (f) fast_bn_destroy(f);
    return nnp_error(NNP_ERR_NOMEM, "out of memory preparing BatchNormalization");
  }
  nnp_bn_coefficients(ctx, C, f->a, f->b);
  f->relu = relu;
  f->channels = C;
  f->planes = x->dims[0] * C;
  f->hw = nnp_tensor_numel(x) / f->planes;
  out->run = fast_bn_run;
  out->destroy = fast_bn_destroy;
  out->state = f;
  out->name = relu ? "eltwise.batchnorm.relu" : "eltwise.batchnorm";
  return NNP_OK;
}

nnp_status nnp_prepare_batch_norm(const nnp_op_ctx *ctx, bool generic, nnp_fast_kernel *out) {
  (void)generic;
  return prepare_bn(ctx, false, out);
}

nnp_status nnp_prepare_fused_batch_norm(const nnp_op_ctx *ctx, bool generic, nnp_fast_kernel *out) {
  (void)generic;
  return prepare_bn(ctx, true, out); /* infer checked that the activation is Relu */
}
