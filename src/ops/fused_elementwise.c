/* FusedElementwise reference kernel (ops/internal_ops.h): one pass over the output per
 * instruction, each with the formula of the op it replaces (ops/unary.c, ops/binary.c),
 * so a fused chain is bit-identical to the unfused one; the saving is the intermediate
 * tensors (memory traffic and arena space), not arithmetic. */
#include <math.h>
#include <string.h>

#include "ops/fast_ops.h"
#include "ops/internal_ops.h"
#include "ops/op_util.h"

static bool binary_op(int64_t op) { return op >= NNP_EW_ADD && op <= NNP_EW_RDIV; }
static bool unary_op(int64_t op) { return op >= NNP_EW_RELU && op <= NNP_EW_ERF; }

static nnp_status read_program(const nnp_op_ctx *ctx, const int64_t **prog, int *n, const float **params) {
  int np = nnp_attr_ints(ctx->node, "program", prog);
  int nf = nnp_attr_floats(ctx->node, "params", params);
  if (np <= 0 || np % 2) return nnp_error(NNP_ERR_FORMAT, "attribute 'program' needs (opcode, operand) pairs");
  if (nf != np) return nnp_error(NNP_ERR_FORMAT, "attribute 'params' needs two floats per instruction");
  *n = np / 2;
  for (int k = 0; k < *n; k++) {
    int64_t op = (*prog)[2 * k], arg = (*prog)[2 * k + 1];
    if (binary_op(op) ? (arg < 1 || arg >= ctx->n_in || !ctx->in[arg]) : !unary_op(op) || arg != -1)
      return nnp_error(NNP_ERR_FORMAT, "instruction %d (opcode %lld, operand %lld) is invalid", k, (long long)op,
                       (long long)arg);
  }
  return NNP_OK;
}

static nnp_status infer_fused_elementwise(nnp_op_ctx *ctx) {
  const int64_t *prog;
  const float *params;
  int n;
  NNP_TRY(read_program(ctx, &prog, &n, &params));
  const nnp_tensor *x = ctx->in[0];
  for (int i = 0; i < ctx->n_in; i++) {
    const nnp_tensor *t = ctx->in[i];
    if (!t || t->dtype != NNP_F32) return nnp_error(NNP_ERR_UNSUPPORTED, "fused ops support float32 only");
    if (i > 0 && !nnp_tensor_same_shape(t, x) && nnp_tensor_numel(t) != 1)
      return nnp_error(NNP_ERR_SHAPE, "input %d is neither input 0's shape nor one element", i);
  }
  nnp_copy_shape(ctx->out[0], x);
  return NNP_OK;
}

#define LOOP(expr)                                                  \
  for (int64_t i = 0; i < len; i++) {                               \
    const float b = bs ? bd[0] : bd[i];                             \
    (void)b;                                                        \
    float a = y[i];                                                 \
    y[i] = (expr);                                                  \
  }

static nnp_status ref_fused_elementwise(nnp_op_ctx *ctx) {
  const int64_t *prog;
  const float *params;
  int n;
  NNP_TRY(read_program(ctx, &prog, &n, &params));
  float *y = ctx->out[0]->data;
  const int64_t len = nnp_tensor_numel(ctx->out[0]);
  if (y != ctx->in[0]->data) memcpy(y, ctx->in[0]->data, (size_t)len * sizeof *y);
  for (int k = 0; k < n; k++) {
    const int64_t op = prog[2 * k], arg = prog[2 * k + 1];
    const nnp_tensor *bt = arg >= 0 ? ctx->in[arg] : ctx->in[0];
    const float *bd = bt->data; /* unary ops: a valid pointer, never read */
    const bool bs = arg < 0 || nnp_tensor_numel(bt) == 1;
    const float lo = params[2 * k], hi = params[2 * k + 1];
    switch (op) {
      case NNP_EW_ADD: LOOP(a + b) break;
      case NNP_EW_SUB: LOOP(a - b) break;
      case NNP_EW_RSUB: LOOP(b - a) break;
      case NNP_EW_MUL: LOOP(a * b) break;
      case NNP_EW_DIV: LOOP(a / b) break;
      case NNP_EW_RDIV: LOOP(b / a) break;
      case NNP_EW_RELU: LOOP(a < 0 ? 0.0f : a) break;
      case NNP_EW_SIGMOID: LOOP(a >= 0 ? 1.0f / (1.0f + expf(-a)) : expf(a) / (1.0f + expf(a))) break;
      case NNP_EW_TANH: LOOP(tanhf(a)) break;
      case NNP_EW_ERF: LOOP(erff(a)) break;
      case NNP_EW_NEG: LOOP(-a) break;
      case NNP_EW_CLIP: LOOP((a < lo ? lo : a) > hi ? hi : (a < lo ? lo : a)) break;
      case NNP_EW_HARD_SWISH: {
        LOOP(a * ((a * (1.0f / 6.0f) + 0.5f) < 0 ? 0.0f : ((a * (1.0f / 6.0f) + 0.5f) > 1 ? 1.0f : (a * (1.0f / 6.0f) + 0.5f))))
        break;
      }
      default: return nnp_error(NNP_ERR_INTERNAL, "FusedElementwise: bad opcode");
    }
  }
  return NNP_OK;
}

const nnp_op_info nnp_op_fused_elementwise = {.name = "FusedElementwise", .min_inputs = 1, .max_inputs = 16,
                                              .min_outputs = 1, .max_outputs = 1,
                                              .infer = infer_fused_elementwise, .ref = ref_fused_elementwise,
                                              .prepare = nnp_prepare_fused_elementwise};
