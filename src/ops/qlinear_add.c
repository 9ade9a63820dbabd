/* QLinearAdd (internal op, ops/internal_ops.h): the quantized residual add of a QDQ graph,
 * made by the fuse-qdq pass from DequantizeLinear(a), DequantizeLinear(b) -> Add [-> Relu]
 * -> QuantizeLinear. Inputs as ONNX Runtime's com.microsoft QLinearAdd: A, A_scale,
 * A_zero_point, B, B_scale, B_zero_point, C_scale, C_zero_point; uint8 A, B and C of one
 * shape, scalar float32 scales and uint8 zero points; attributes `activation` "Relu" or
 * "Clip" with `activation_params` [min, max] (optional, as FusedConv's). The kernel computes, per element, exactly the float32 operations of the
 * unfused nodes (kernels/qeltwise.h), so the fusion changes no output bit; the prepare
 * hook picks the AVX2 body of the same kernel. */
#include <math.h>
#include <string.h>

#include "kernels/dispatch.h"
#include "kernels/qeltwise.h"
#include "nnperf/alloc.h"
#include "ops/fast_ops.h"
#include "ops/internal_ops.h"
#include "ops/op_util.h"

static bool scalar_of(const nnp_tensor *t, nnp_dtype dt) { return t && t->dtype == dt && nnp_tensor_numel(t) == 1; }

static nnp_status infer_qlinear_add(nnp_op_ctx *ctx) {
  const nnp_tensor *a = ctx->in[0], *b = nnp_in(ctx, 3);
  if (!b || !nnp_out(ctx, 0)) return nnp_error(NNP_ERR_SHAPE, "QLinearAdd needs A, B and an output");
  for (int k = 0; k < 8; k++)
    if (!nnp_in(ctx, k)) return nnp_error(NNP_ERR_SHAPE, "QLinearAdd: input %d is required", k);
  if (a->dtype != NNP_U8 || b->dtype != NNP_U8 || !nnp_tensor_same_shape(a, b))
    return nnp_error(NNP_ERR_UNSUPPORTED, "QLinearAdd supports uint8 A and B of one shape only");
  for (int k = 1; k < 8; k = k == 4 ? 6 : k + 3) /* scale, zero point at 1-2, 4-5, 6-7 */
    if (!scalar_of(ctx->in[k], NNP_F32) || !scalar_of(ctx->in[k + 1], NNP_U8))
      return nnp_error(NNP_ERR_UNSUPPORTED, "QLinearAdd supports scalar float32 scales and uint8 zero points only");
  nnp_act act;
  float lo, hi;
  NNP_TRY(nnp_fused_activation(ctx->node, &act, &lo, &hi));
  if (act != NNP_ACT_NONE && act != NNP_ACT_RELU && act != NNP_ACT_CLIP)
    return nnp_error(NNP_ERR_UNSUPPORTED, "QLinearAdd: activation Relu or Clip only");
  nnp_set_shape(ctx->out[0], NNP_U8, a->rank, a->dims);
  return NNP_OK;
}

/* Parameters from the inputs; false when a scale or zero point is not known yet. */
static bool params_of(const nnp_op_ctx *ctx, nnp_qadd_params *p) {
  for (int k = 1; k < 8; k = k == 4 ? 6 : k + 3)
    if (!ctx->in[k]->data || !ctx->in[k + 1]->data) return false;
  nnp_act act;
  float lo, hi;
  if (nnp_fused_activation(ctx->node, &act, &lo, &hi) != NNP_OK) return false; /* infer reported it */
  *p = (nnp_qadd_params){.a_scale = *(const float *)ctx->in[1]->data, .a_zp = *(const uint8_t *)ctx->in[2]->data,
                         .b_scale = *(const float *)ctx->in[4]->data, .b_zp = *(const uint8_t *)ctx->in[5]->data,
                         .y_scale = *(const float *)ctx->in[6]->data, .y_zp = *(const uint8_t *)ctx->in[7]->data,
                         .act = act != NNP_ACT_NONE, .lo = act == NNP_ACT_RELU ? 0.0f : lo,
                         .hi = act == NNP_ACT_RELU ? INFINITY : hi};
  return true;
}

static nnp_status ref_qlinear_add(nnp_op_ctx *ctx) {
  nnp_qadd_params p;
  if (!params_of(ctx, &p)) return nnp_error(NNP_ERR_INTERNAL, "QLinearAdd: parameters without data");
  const uint8_t *a = ctx->in[0]->data, *b = ctx->in[3]->data;
  uint8_t *y = ctx->out[0]->data;
  int64_t n = nnp_tensor_numel(ctx->out[0]);
  for (int64_t i = 0; i < n; i++) y[i] = nnp_qadd_one(a[i], b[i], &p);
  return NNP_OK;
}

typedef struct fast_qadd {
  nnp_qadd_params p;
  bool generic;
} fast_qadd;

static void fast_qadd_destroy(void *p) { nnp_free(p); }

static nnp_status fast_qadd_run(void *s, nnp_op_ctx *ctx) {
  const fast_qadd *f = s;
  nnp_qadd_u8(ctx->in[0]->data, ctx->in[3]->data, ctx->out[0]->data, nnp_tensor_numel(ctx->out[0]), &f->p,
              ctx->pool, f->generic);
  return NNP_OK;
}

static nnp_status prepare_qlinear_add(const nnp_op_ctx *ctx, bool generic, nnp_fast_kernel *out) {
  memset(out, 0, sizeof *out);
  nnp_qadd_params p;
  if (!params_of(ctx, &p)) return NNP_OK; /* run-time scales: the reference reads them */
  fast_qadd *f = nnp_calloc(1, sizeof *f);
  if (!f) return nnp_error(NNP_ERR_NOMEM, "out of memory preparing QLinearAdd");
  f->p = p;
  f->generic = nnp_dispatch_portable(NNP_KF_QELTWISE, generic);
  out->run = fast_qadd_run;
  out->destroy = fast_qadd_destroy;
  out->state = f;
  out->name = f->generic ? "qlinearadd.generic" : "qlinearadd.avx2";
  return NNP_OK;
}

const nnp_op_info nnp_op_qlinear_add = {.name = "QLinearAdd", .min_inputs = 8, .max_inputs = 8,
                                        .min_outputs = 1, .max_outputs = 1, .infer = infer_qlinear_add,
                                        .ref = ref_qlinear_add, .prepare = prepare_qlinear_add};
