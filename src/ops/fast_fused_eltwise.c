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
#include "ops/op_util.h"

enum { MAX_INSTR = NNP_EWPROG_MAX_INSTR, BLOCK = 1024 };

typedef struct fused_ew {
  int n;
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

static nnp_status fused_ew_run(void *state, nnp_op_ctx *ctx) {
  const fused_ew *f = state;
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
  out->name = "eltwise.fused.avx2";
  return NNP_OK;
}
