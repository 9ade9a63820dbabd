/* QuantizeLinear (float32 -> uint8) and DequantizeLinear (uint8 -> float32) with constant
 * scalar scale and zero point -> kernels/qeltwise.h: the precision boundaries of an INT8
 * graph (its input, the float tail). Per-axis parameters, int8 / int32 data and run-time
 * scales stay with the reference kernels of ops/quant.c. */
#include <string.h>

#include "kernels/dispatch.h"
#include "kernels/qeltwise.h"
#include "nnperf/alloc.h"
#include "ops/fast_ops.h"
#include "ops/op_util.h"

typedef struct fast_q {
  bool quantize, generic;
  float scale;
  int32_t zp;
} fast_q;

static void fast_q_destroy(void *p) { nnp_free(p); }

static nnp_status fast_q_run(void *s, nnp_op_ctx *ctx) {
  const fast_q *f = s;
  int64_t n = nnp_tensor_numel(ctx->out[0]);
  if (f->quantize) nnp_quantize_u8(ctx->in[0]->data, ctx->out[0]->data, n, f->scale, f->zp, ctx->pool, f->generic);
  else nnp_dequantize_u8(ctx->in[0]->data, ctx->out[0]->data, n, f->scale, f->zp, ctx->pool, f->generic);
  return NNP_OK;
}

nnp_status nnp_prepare_quantize(const nnp_op_ctx *ctx, bool generic, nnp_fast_kernel *out) {
  memset(out, 0, sizeof *out);
  bool quantize = !strcmp(ctx->node->op_type, "QuantizeLinear");
  const nnp_tensor *x = ctx->in[0], *s = nnp_in(ctx, 1), *zp = nnp_in(ctx, 2), *y = ctx->out[0];
  if (!s || !zp || !s->data || !zp->data || s->dtype != NNP_F32 || zp->dtype != NNP_U8) return NNP_OK;
  if (nnp_tensor_numel(s) != 1 || nnp_tensor_numel(zp) != 1) return NNP_OK;
  if (quantize ? x->dtype != NNP_F32 || y->dtype != NNP_U8 : x->dtype != NNP_U8 || y->dtype != NNP_F32) return NNP_OK;
  fast_q *f = nnp_calloc(1, sizeof *f);
  if (!f) return nnp_error(NNP_ERR_NOMEM, "out of memory preparing %s", ctx->node->op_type);
  *f = (fast_q){.quantize = quantize, .generic = nnp_dispatch_portable(NNP_KF_QELTWISE, generic),
                .scale = *(const float *)s->data, .zp = *(const uint8_t *)zp->data};
  out->run = fast_q_run;
  out->destroy = fast_q_destroy;
  out->state = f;
  out->name = quantize ? (f->generic ? "quantize.u8.generic" : "quantize.u8.avx2")
                       : (f->generic ? "dequantize.u8.generic" : "dequantize.u8.avx2");
  return NNP_OK;
}
