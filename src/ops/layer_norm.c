/* FusedLayerNorm(X, [Scale], [B]), attribute `epsilon`: layer normalisation over X's last
 * axis, made by the fuse-elementwise pass (ir/passes/fuse_layernorm.c) from the nine ops
 * torch exports LayerNorm as below opset 17:
 *   mean = ReduceMean(x), d = x - mean, var = ReduceMean(d^2), y = d / sqrt(var + eps),
 *   then y * Scale + B.
 * Those ran on the reference kernels, one pass over the activations each (ViT and Swin:
 * ReduceMean alone was 6-7% of their steps at 2 threads).
 *
 * One kernel, the reference's too: per row the same float operations in the same order
 * as the ops it replaces (ReduceMean's sums in double, rounded to float; d^2 rounded to
 * float, as Pow's output; the Div, then the Mul and the Add, each rounded), so the fused
 * graph differs from the unfused one only by the order of the double sums (8 partial
 * sums here, one in ReduceMean). The fast kernel splits the rows over the threads. */
#include <math.h>
#include <string.h>

#include "ops/fast_ops.h"
#include "ops/internal_ops.h"
#include "ops/op_util.h"

static nnp_status check(const nnp_op_ctx *ctx, int64_t *rows, int64_t *c) {
  const nnp_tensor *x = ctx->in[0];
  if (x->dtype != NNP_F32 || x->rank < 1) return nnp_error(NNP_ERR_UNSUPPORTED, "FusedLayerNorm: X must be float32");
  *c = x->dims[x->rank - 1];
  *rows = *c ? nnp_tensor_numel(x) / *c : 0;
  for (int k = 1; k < ctx->n_in; k++) {
    const nnp_tensor *p = ctx->in[k];
    if (p && (p->dtype != NNP_F32 || nnp_tensor_numel(p) != *c))
      return nnp_error(NNP_ERR_SHAPE, "FusedLayerNorm: input %d must hold %lld float32 values (X's last axis)", k,
                       (long long)*c);
  }
  return NNP_OK;
}

static nnp_status infer_layer_norm(nnp_op_ctx *ctx) {
  int64_t rows, c;
  NNP_TRY(check(ctx, &rows, &c));
  nnp_set_shape(ctx->out[0], NNP_F32, ctx->in[0]->rank, ctx->in[0]->dims);
  return NNP_OK;
}

typedef struct ln_job {
  const float *x, *scale, *bias;
  float *y;
  int64_t c;
  float eps;
} ln_job;

/* The mean of n float values (or of their squares, rounded to float each) as ReduceMean
 * computes it: a double sum, divided, rounded to float. 8 partial sums: they vectorise. */
static float mean_of(const float *v, int64_t n, float shift, bool square) {
  double acc[8] = {0};
  int64_t j = 0;
  for (; j + 8 <= n; j += 8)
    for (int l = 0; l < 8; l++) {
      const float d = v[j + l] - shift;
      acc[l] += square ? (double)(float)(d * d) : (double)d;
    }
  double s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
  for (; j < n; j++) {
    const float d = v[j] - shift;
    s += square ? (double)(float)(d * d) : (double)d;
  }
  return (float)(s / (double)n);
}

static void ln_rows(void *p, int64_t b, int64_t e) {
  const ln_job *j = p;
  for (int64_t r = b; r < e; r++) {
    const float *x = j->x + r * j->c;
    float *y = j->y + r * j->c;
    const float mean = mean_of(x, j->c, 0.0f, false);
    const float sd = sqrtf(mean_of(x, j->c, mean, true) + j->eps);
    for (int64_t i = 0; i < j->c; i++) {
      float v = (x[i] - mean) / sd;
      if (j->scale) v = v * j->scale[i];
      if (j->bias) v = v + j->bias[i];
      y[i] = v;
    }
  }
}

static nnp_status run(const nnp_op_ctx *ctx, nnp_threadpool *pool) {
  int64_t rows, c;
  NNP_TRY(check(ctx, &rows, &c));
  const nnp_tensor *s = nnp_in(ctx, 1), *b = nnp_in(ctx, 2);
  ln_job j = {.x = ctx->in[0]->data, .scale = s ? s->data : NULL, .bias = b ? b->data : NULL,
              .y = ctx->out[0]->data, .c = c, .eps = nnp_attr_float(ctx->node, "epsilon", 1e-5f)};
  nnp_threadpool_run(pool, ln_rows, &j, rows);
  return NNP_OK;
}

static nnp_status ref_layer_norm(nnp_op_ctx *ctx) { return run(ctx, NULL); }

static nnp_status run_layer_norm(void *state, nnp_op_ctx *ctx) {
  (void)state;
  return run(ctx, ctx->pool);
}

static nnp_status prepare_layer_norm(const nnp_op_ctx *ctx, bool generic, nnp_fast_kernel *out) {
  (void)generic;
  memset(out, 0, sizeof *out);
  if (nnp_tensor_numel(ctx->out[0]) == 0) return NNP_OK;
  out->run = run_layer_norm;
  out->name = "layer_norm.rows";
  return NNP_OK;
}

const nnp_op_info nnp_op_fused_layer_norm = {
    .name = "FusedLayerNorm", .min_inputs = 1, .max_inputs = 3, .min_outputs = 1, .max_outputs = 1,
    .infer = infer_layer_norm, .ref = ref_layer_norm, .prepare = prepare_layer_norm};
