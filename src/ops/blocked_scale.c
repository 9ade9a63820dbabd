/* BlockedChannelMul(X, S), attribute `channels` (X's real C): Y = X * S with X and Y
 * blocked (NCHW16c) and S one value per channel, [N, C, 1, 1] or [1, C, 1, 1] or
 * [C, 1, 1] plain, or the blocked twin of [N, C, 1, 1] (what a BlockedConv on the
 * squeeze-and-excitation branch writes). Made by the blocked-layout pass from the
 * channel-broadcast Mul of a squeeze-and-excitation block (EfficientNet, RegNetY,
 * MobileNetV3), which otherwise took the feature map out of the blocked layout and back
 * (a FromBlocked and a ToBlocked per block: 13% of efficientnet_b0's steps at 2 threads).
 *
 * One kernel, the reference's too: each element is x * s, the product the NCHW Mul
 * computes, so the pass changes no output bit. Padded lanes stay 0 (0 * s; S's padded
 * lanes, when blocked, are 0 as well).
 *
 * BlockedBatchNorm(X, scale, B, mean, var), attributes `channels`, `epsilon` and
 * `activation` (Relu or absent): inference batch normalisation on blocked X and Y, the
 * same loop with y = x * a + b per channel (a = scale / sqrt(var + eps), b = B - mean * a,
 * worked out in double and rounded to float as the NCHW fast kernel does), then the Relu.
 * DenseNet normalises every concatenation before its convolutions (BN -> ReLU -> conv):
 * each of densenet121's 58 dense layers took its input out of the blocked layout and
 * back for it (a FromBlocked and a ToBlocked: 20% of its steps at 2 threads). Padded lanes
 * get a = b = 0 and stay 0. */
#include <math.h>
#include <string.h>

#include "kernels/blocked_conv.h"
#include "ops/fast_ops.h"
#include "ops/internal_ops.h"
#include "nnperf/alloc.h"
#include "ops/op_util.h"

static bool is_blocked5(const nnp_tensor *t) { return t->dtype == NNP_F32 && t->rank == 5 && t->dims[4] == NNP_BLOCK; }

/* How S is indexed: the scale of channel c of image n is s[n * image_stride + offset(c)]. */
typedef struct scale_view {
  int64_t n, cb, hw, c;
  int64_t s_image; /* floats per image of S: 0 when S is shared by the batch */
  bool s_blocked;  /* S in NCHW16c: channel c at (c / 16) * 16 + c % 16 == c of the padded row */
} scale_view;

static nnp_status view_of(const nnp_op_ctx *ctx, scale_view *v) {
  const nnp_tensor *x = ctx->in[0], *s = ctx->in[1];
  v->c = nnp_attr_int(ctx->node, "channels", -1);
  if (!is_blocked5(x) || v->c < 1 || nnp_blocks(v->c) != x->dims[1])
    return nnp_error(NNP_ERR_SHAPE, "BlockedChannelMul: X is not NCHW16c with %lld channels", (long long)v->c);
  v->n = x->dims[0];
  v->cb = x->dims[1];
  v->hw = x->dims[2] * x->dims[3];
  if (s->dtype != NNP_F32) return nnp_error(NNP_ERR_UNSUPPORTED, "BlockedChannelMul: S must be float32");
  v->s_blocked = is_blocked5(s);
  const int64_t per_image = v->s_blocked ? v->cb * NNP_BLOCK : v->c, numel = nnp_tensor_numel(s);
  const bool plane1 = v->s_blocked ? s->dims[2] == 1 && s->dims[3] == 1 && s->dims[1] == v->cb
                                   : numel == v->c || numel == v->n * v->c;
  if (!plane1 || (numel != per_image && numel != v->n * per_image))
    return nnp_error(NNP_ERR_SHAPE, "BlockedChannelMul: S is not one value per channel of %lld channels",
                     (long long)v->c);
  v->s_image = numel == per_image ? 0 : per_image;
  return NNP_OK;
}

static nnp_status infer_blocked_channel_mul(nnp_op_ctx *ctx) {
  scale_view v;
  NNP_TRY(view_of(ctx, &v));
  nnp_set_shape(ctx->out[0], NNP_F32, 5, ctx->in[0]->dims);
  return NNP_OK;
}

typedef struct scale_job {
  const scale_view *v;
  const float *x, *s;
  const float *t; /* per-channel shift (BatchNorm's b), or NULL: y = x * s */
  bool relu;
  float *y;
} scale_job;

/* Task t: block cb = t % v->cb of image t / v->cb, all its pixels. */
static void scale_blocks(void *p, int64_t begin, int64_t end) {
  const scale_job *j = p;
  const scale_view *v = j->v;
  for (int64_t t = begin; t < end; t++) {
    const int64_t n = t / v->cb, b = t % v->cb;
    float s[NNP_BLOCK];
    for (int l = 0; l < NNP_BLOCK; l++) {
      const int64_t c = b * NNP_BLOCK + l;
      s[l] = c < v->c ? j->s[n * v->s_image + c] : 0.0f; /* blocked or plain: the same offset c */
    }
    const float *x = j->x + t * v->hw * NNP_BLOCK;
    float *y = j->y + t * v->hw * NNP_BLOCK;
    if (!j->t) {
      for (int64_t q = 0; q < v->hw; q++)
        for (int l = 0; l < NNP_BLOCK; l++) y[q * NNP_BLOCK + l] = x[q * NNP_BLOCK + l] * s[l];
      continue;
    }
    float sh[NNP_BLOCK];
    for (int l = 0; l < NNP_BLOCK; l++) sh[l] = b * NNP_BLOCK + l < v->c ? j->t[b * NNP_BLOCK + l] : 0.0f;
    const float lo = j->relu ? 0.0f : -INFINITY;
    for (int64_t q = 0; q < v->hw; q++)
      for (int l = 0; l < NNP_BLOCK; l++) {
        const float r = x[q * NNP_BLOCK + l] * s[l] + sh[l];
        y[q * NNP_BLOCK + l] = r < lo ? lo : r;
      }
  }
}

static nnp_status run(const nnp_op_ctx *ctx, nnp_threadpool *pool) {
  scale_view v;
  NNP_TRY(view_of(ctx, &v));
  scale_job j = {.v = &v, .x = ctx->in[0]->data, .s = ctx->in[1]->data, .y = ctx->out[0]->data};
  nnp_threadpool_run(pool, scale_blocks, &j, v.n * v.cb);
  return NNP_OK;
}

static nnp_status ref_blocked_channel_mul(nnp_op_ctx *ctx) { return run(ctx, NULL); }

static nnp_status run_blocked_channel_mul(void *state, nnp_op_ctx *ctx) {
  (void)state;
  return run(ctx, ctx->pool);
}

static nnp_status prepare_blocked_channel_mul(const nnp_op_ctx *ctx, bool generic, nnp_fast_kernel *out) {
  (void)generic;
  memset(out, 0, sizeof *out);
  if (nnp_tensor_numel(ctx->out[0]) == 0) return NNP_OK;
  out->run = run_blocked_channel_mul;
  out->name = "eltwise.mul.channel.blocked";
  return NNP_OK;
}

/* ---- BlockedBatchNorm ---- */

static nnp_status bn_view(const nnp_op_ctx *ctx, scale_view *v) {
  const nnp_tensor *x = ctx->in[0];
  v->c = nnp_attr_int(ctx->node, "channels", -1);
  if (!is_blocked5(x) || v->c < 1 || nnp_blocks(v->c) != x->dims[1])
    return nnp_error(NNP_ERR_SHAPE, "BlockedBatchNorm: X is not NCHW16c with %lld channels", (long long)v->c);
  for (int i = 1; i <= 4; i++)
    if (ctx->in[i]->dtype != NNP_F32 || nnp_tensor_numel(ctx->in[i]) != v->c)
      return nnp_error(NNP_ERR_SHAPE, "BlockedBatchNorm: input %d is not one float32 per channel of %lld", i,
                       (long long)v->c);
  v->n = x->dims[0];
  v->cb = x->dims[1];
  v->hw = x->dims[2] * x->dims[3];
  v->s_image = 0;
  v->s_blocked = false;
  return NNP_OK;
}

static bool bn_relu(const nnp_op_ctx *ctx) {
  const nnp_attr *a = nnp_node_attr(ctx->node, "activation");
  return a && a->type == NNP_ATTR_STRING && a->s && !strcmp(a->s, "Relu");
}

static nnp_status infer_blocked_batch_norm(nnp_op_ctx *ctx) {
  scale_view v;
  NNP_TRY(bn_view(ctx, &v));
  nnp_set_shape(ctx->out[0], NNP_F32, 5, ctx->in[0]->dims);
  return NNP_OK;
}

static void bn_run(const nnp_op_ctx *ctx, const scale_view *v, const float *a, const float *b, nnp_threadpool *pool) {
  scale_job j = {.v = v, .x = ctx->in[0]->data, .s = a, .t = b, .relu = bn_relu(ctx), .y = ctx->out[0]->data};
  nnp_threadpool_run(pool, scale_blocks, &j, v->n * v->cb);
}

/* The reference: the NCHW reference's arithmetic (x * a + b in double, a and b unrounded)
 * and Relu's, so the pass changes no bit on the reference kernels */
static nnp_status ref_blocked_batch_norm(nnp_op_ctx *ctx) {
  scale_view v;
  NNP_TRY(bn_view(ctx, &v));
  const double eps = nnp_attr_float(ctx->node, "epsilon", 1e-5f);
  const bool relu = bn_relu(ctx);
  const float *x = ctx->in[0]->data;
  float *y = ctx->out[0]->data;
  for (int64_t t = 0; t < v.n * v.cb; t++)
    for (int l = 0; l < NNP_BLOCK; l++) {
      const int64_t c = t % v.cb * NNP_BLOCK + l;
      double a = 0, b = 0;
      if (c < v.c) {
        a = nnp_tensor_get_f64(ctx->in[1], c) / sqrt(nnp_tensor_get_f64(ctx->in[4], c) + eps);
        b = nnp_tensor_get_f64(ctx->in[2], c) - nnp_tensor_get_f64(ctx->in[3], c) * a;
      }
      for (int64_t q = 0; q < v.hw; q++) {
        const float r = (float)(x[(t * v.hw + q) * NNP_BLOCK + l] * a + b);
        y[(t * v.hw + q) * NNP_BLOCK + l] = relu && r < 0 ? 0.0f : r;
      }
    }
  return NNP_OK;
}

typedef struct bn_state {
  scale_view v;
  float *ab; /* a, then b: c floats each */
} bn_state;

static nnp_status run_blocked_batch_norm(void *state, nnp_op_ctx *ctx) {
  const bn_state *st = state;
  bn_run(ctx, &st->v, st->ab, st->ab + st->v.c, ctx->pool);
  return NNP_OK;
}

static void destroy_blocked_batch_norm(void *state) {
  bn_state *st = state;
  if (st) nnp_free(st->ab);
  nnp_free(st);
}

/* the coefficients once, where the parameters are constants */
static nnp_status prepare_blocked_batch_norm(const nnp_op_ctx *ctx, bool generic, nnp_fast_kernel *out) {
  (void)generic;
  memset(out, 0, sizeof *out);
  scale_view v;
  if (nnp_tensor_numel(ctx->out[0]) == 0 || bn_view(ctx, &v) != NNP_OK) return NNP_OK;
  for (int i = 1; i <= 4; i++)
    if (!ctx->in[i]->data) return NNP_OK;
  bn_state *st = nnp_calloc(1, sizeof *st);
  if (st) st->ab = nnp_malloc((size_t)(2 * v.c) * sizeof(float));
  if (!st || !st->ab) {
    destroy_blocked_batch_norm(st);
    return nnp_error(NNP_ERR_NOMEM, "out of memory preparing BlockedBatchNorm");
  }
  st->v = v;
  nnp_bn_coefficients(ctx, v.c, st->ab, st->ab + v.c);
  out->run = run_blocked_batch_norm;
  out->destroy = destroy_blocked_batch_norm;
  out->state = st;
  out->name = "eltwise.batchnorm.blocked";
  return NNP_OK;
}

const nnp_op_info nnp_op_blocked_batch_norm = {
    .name = "BlockedBatchNorm", .min_inputs = 5, .max_inputs = 5, .min_outputs = 1, .max_outputs = 1,
    .infer = infer_blocked_batch_norm, .ref = ref_blocked_batch_norm, .prepare = prepare_blocked_batch_norm};

const nnp_op_info nnp_op_blocked_channel_mul = {
    .name = "BlockedChannelMul", .min_inputs = 2, .max_inputs = 2, .min_outputs = 1, .max_outputs = 1,
    .infer = infer_blocked_channel_mul, .ref = ref_blocked_channel_mul, .prepare = prepare_blocked_channel_mul};
