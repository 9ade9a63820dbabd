/* Conv -> kernels/conv.h: float32 2-D convolutions with constant weights and bias. */
#include <string.h>

#include "kernels/conv.h"
#include "nnperf/alloc.h"
#include "ops/conv_desc.h"
#include "ops/fast_ops.h"
#include "ops/internal_ops.h"
#include "ops/op_util.h"

typedef struct fast_conv {
  nnp_conv2d_kernel *k;
  const float *bias; /* the graph's initializer (the plan borrows the graph) */
  bool residual;     /* FusedConv's input 3 (R), read at run */
  int act;           /* FusedConv's activation (nnp_act), NNP_ACT_NONE for Conv */
  float act_min, act_max;
} fast_conv;

static void fast_conv_destroy(void *p) {
  fast_conv *f = p;
  if (!f) return;
  nnp_conv2d_destroy(f->k);
  nnp_free(f);
}

static nnp_status fast_conv_run(void *p, nnp_op_ctx *ctx) {
  const fast_conv *f = p;
  nnp_epilogue ep = {.bias = f->bias, .bias_kind = f->bias ? NNP_BIAS_ROW : NNP_BIAS_NONE, .act = f->act,
                     .act_min = f->act_min, .act_max = f->act_max};
  if (f->residual) ep.residual = ctx->in[3]->data;
  nnp_conv2d_run(f->k, ctx->in[0]->data, ctx->out[0]->data, &ep, ctx->scratch, ctx->pool);
  return NNP_OK;
}

nnp_status nnp_prepare_conv(const nnp_op_ctx *ctx, bool generic, nnp_fast_kernel *out) {
  const nnp_tensor *x = ctx->in[0], *w = ctx->in[1], *b = nnp_in(ctx, 2);
  const nnp_tensor *y = ctx->out[0];
  memset(out, 0, sizeof *out);
  if (x->dtype != NNP_F32 || x->rank != 4 || !w->data || (b && !b->data)) return NNP_OK;
  /* FusedConv (internal_ops.h): Conv + optional residual R (input 3) + activation */
  const nnp_tensor *r = ctx->n_in > 3 ? ctx->in[3] : NULL;
  nnp_act act = NNP_ACT_NONE;
  float lo = 0, hi = 0;
  if (ctx->node->op == NNP_OP_FUSED_CONV) NNP_TRY(nnp_fused_activation(ctx->node, &act, &lo, &hi));
  if (r && (r->dtype != NNP_F32 || !nnp_tensor_same_shape(r, y))) return NNP_OK;
  nnp_conv2d_desc d = {.n = x->dims[0], .c = x->dims[1], .h = x->dims[2], .w = x->dims[3], .m = y->dims[1],
                       .oh = y->dims[2], .ow = y->dims[3], .kh = w->dims[2], .kw = w->dims[3]};
  d.group = nnp_attr_int(ctx->node, "group", 1);
  bool window_ok;
  NNP_TRY(nnp_conv2d_read_window(ctx->node, &d, &window_ok));
  if (!window_ok) return NNP_OK;
  if (nnp_tensor_numel(x) == 0 || nnp_tensor_numel(y) == 0) return NNP_OK;
  fast_conv *f = nnp_calloc(1, sizeof *f);
  if (!f) return nnp_error(NNP_ERR_NOMEM, "out of memory preparing Conv");
  nnp_status s = nnp_conv2d_prepare(&d, w->data, generic, &f->k);
  if (s != NNP_OK) {
    nnp_free(f);
    return s;
  }
  f->bias = b ? b->data : NULL;
  f->residual = r != NULL;
  f->act = act;
  f->act_min = lo;
  f->act_max = hi;
  out->run = fast_conv_run;
  out->destroy = fast_conv_destroy;
  out->state = f;
  out->scratch_needed = nnp_conv2d_scratch_bytes(f->k);
  out->name = nnp_conv2d_kernel_name(f->k);
  return NNP_OK;
}
