/* FusedElementwise -> kernels/ewprog.h on AVX2 + FMA: float32, operands of input 0's
 * shape or one element (what infer allows), no Tanh. Declines otherwise, and without
 * AVX2 or when generic kernels are asked for: the reference kernel is the generic twin.
 * Why: efficientnet_b0's SiLU chains (Sigmoid, Mul) ran on the reference kernel, one
 * scalar expf pass and one multiply pass over each tensor: half of that model's time on
 * an AVX2 EPYC (docs/kernels.md). */
#include <string.h>

#include "kernels/dispatch.h"
#include "kernels/ewprog.h"
#include "nnperf/alloc.h"
#include "ops/fast_ops.h"
#include "ops/internal_ops.h"
#include "ops/op_util.h"

enum { MAX_INSTR = NNP_EWPROG_MAX_INSTR, BLOCK = 1024 };

typedef struct fused_ew {
  int n;
  bool gelu;   /* the program is GELU with one-element constants (nnp_ewprog_is_gelu) */
  bool avx512; /* ... run on AVX-512 */
  int64_t op[2 * MAX_INSTR];
  float params[2 * MAX_INSTR];
} fused_ew;

typedef struct ew_job {
  const nnp_ewprog *p;
  const float *x;
  float *y;
  int64_t len;
} ew_job;

static void ew_range(void *ctx, int64_t b, int64_t e) {
  const ew_job *j = ctx;
  const int64_t i1 = e * BLOCK < j->len ? e * BLOCK : j->len;
  nnp_ewprog_run_avx2(j->p, j->x, j->y, b * BLOCK, i1);
}

typedef struct gelu_job {
  const float *x;
  float *y;
  int64_t len;
  float s, a, h;
  bool avx512;
} gelu_job;

static void gelu_range(void *ctx, int64_t b, int64_t e) {
  const gelu_job *j = ctx;
  const int64_t i1 = e * BLOCK < j->len ? e * BLOCK : j->len;
  (j->avx512 ? nnp_gelu_run_avx512 : nnp_gelu_run_avx2)(j->x, j->y, b * BLOCK, i1, j->s, j->a, j->h);
}

/* Div(c) or Mul(c), Erf, Add(a), Mul(x), Mul(h): the constants are read here, where the
 * arena's addresses are known */
static void gelu_run(const fused_ew *f, nnp_op_ctx *ctx) {
  const float c = *(const float *)ctx->in[f->op[1]]->data;
  gelu_job j = {.x = ctx->in[0]->data, .y = ctx->out[0]->data, .len = nnp_tensor_numel(ctx->out[0]),
                .s = f->op[0] == NNP_EW_DIV ? 1.0f / c : c, .a = *(const float *)ctx->in[f->op[5]]->data,
                .h = *(const float *)ctx->in[f->op[9]]->data, .avx512 = f->avx512};
  nnp_threadpool_run(ctx->pool, gelu_range, &j, (j.len + BLOCK - 1) / BLOCK);
}

static nnp_status fused_ew_run(void *state, nnp_op_ctx *ctx) {
  const fused_ew *f = state;
  if (f->gelu) {
    gelu_run(f, ctx);
    return NNP_OK;
  }
  const float *b[MAX_INSTR];
  bool bs[MAX_INSTR];
  for (int k = 0; k < f->n; k++) { /* operand addresses are the arena's, known only now */
    const int64_t arg = f->op[2 * k + 1];
    b[k] = arg >= 0 ? ctx->in[arg]->data : NULL;
    bs[k] = arg >= 0 && nnp_tensor_numel(ctx->in[arg]) == 1;
  }
  const nnp_ewprog p = {.n = f->n, .op = f->op, .params = f->params, .b = b, .b_scalar = bs};
  ew_job j = {.p = &p, .x = ctx->in[0]->data, .y = ctx->out[0]->data, .len = nnp_tensor_numel(ctx->out[0])};
  nnp_threadpool_run(ctx->pool, ew_range, &j, (j.len + BLOCK - 1) / BLOCK);
  return NNP_OK;
}

static void fused_ew_destroy(void *state) { nnp_free(state); }

static bool one_element(const nnp_op_ctx *ctx, int64_t arg) {
  return arg > 0 && arg < ctx->n_in && nnp_tensor_numel(ctx->in[arg]) == 1;
}

/* Operand arg is the program's input x itself: input 0, or another input naming the same
 * value (the fusion pass gives each operand its own input) */
static bool is_x(const nnp_op_ctx *ctx, int64_t arg) {
  return arg == 0 || (arg > 0 && arg < ctx->node->n_inputs && ctx->node->inputs[arg] == ctx->node->inputs[0]);
}

/* GELU's shape with one-element constants and the Mul by x itself */
static bool gelu_program(const nnp_op_ctx *ctx, const int64_t *prog, int n) {
  return nnp_ewprog_is_gelu(prog, n) && one_element(ctx, prog[1]) && prog[3] < 0 && one_element(ctx, prog[5]) &&
         is_x(ctx, prog[7]) && one_element(ctx, prog[9]);
}

nnp_status nnp_prepare_fused_elementwise(const nnp_op_ctx *ctx, bool generic, nnp_fast_kernel *out) {
  memset(out, 0, sizeof *out);
  if (nnp_dispatch_portable(NNP_KF_FUSED_ELTWISE, generic)) return NNP_OK; /* no portable fast kernel */
  const int64_t *prog;
  const float *params;
  const int np = nnp_attr_ints(ctx->node, "program", &prog), nf = nnp_attr_floats(ctx->node, "params", &params);
  if (np <= 0 || np % 2 || np > 2 * MAX_INSTR || nf != np || !nnp_ewprog_covered(prog, np / 2)) return NNP_OK;
  for (int i = 0; i < ctx->n_in; i++)
    if (!ctx->in[i] || ctx->in[i]->dtype != NNP_F32) return NNP_OK;
  fused_ew *f = nnp_calloc(1, sizeof *f);
  if (!f) return nnp_error(NNP_ERR_NOMEM, "out of memory preparing FusedElementwise");
  f->n = np / 2;
  memcpy(f->op, prog, (size_t)np * sizeof *prog);
  memcpy(f->params, params, (size_t)nf * sizeof *params);
  out->run = fused_ew_run;
  out->destroy = fused_ew_destroy;
  out->state = f;
  f->gelu = gelu_program(ctx, prog, f->n);
  f->avx512 = nnp_dispatch_isa(NNP_KF_FUSED_ELTWISE) == NNP_ISA_AVX512;
  out->name = !f->gelu ? "eltwise.fused.avx2" : f->avx512 ? "eltwise.gelu.avx512" : "eltwise.gelu.avx2";
  return NNP_OK;
}
