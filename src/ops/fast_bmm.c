/* Batched MatMul with both operands computed at run time (attention's Q.K^T and attn.V
 * in ViT and Swin: [B, heads, M, K] x [B, heads, K, N]) -> kernels/gemm.h: each batch's
 * A and B packed into scratch, then the packed SGEMM. Profiles of vit_b_16 and swin_t
 * (docs/kernels.md) showed these on the reference kernel at 12-16% of the run. Covers
 * float32 operands of equal rank >= 3 with identical batch dimensions (no broadcast);
 * anything else declines, and the reference kernel runs. The batches run as
 * nnp_sgemm_batched (kernels/gemm.h): split over the threads where there are enough. */
#include <string.h>

#include "kernels/dispatch.h"
#include "kernels/gemm.h"
#include "nnperf/alloc.h"
#include "ops/fast_ops.h"
#include "ops/op_util.h"

static nnp_status fast_bmm_run(void *p, nnp_op_ctx *ctx) {
  nnp_sgemm_batched_run(p, ctx->in[0]->data, ctx->in[1]->data, ctx->out[0]->data, ctx->scratch, ctx->pool);
  return NNP_OK;
}

/* Called by nnp_prepare_matmul when B is not a constant 2-D matrix. */
nnp_status nnp_prepare_batched_matmul(const nnp_op_ctx *ctx, bool generic, nnp_fast_kernel *out) {
  const nnp_tensor *a = ctx->in[0], *b = ctx->in[1];
  memset(out, 0, sizeof *out);
  if (a->dtype != NNP_F32 || b->dtype != NNP_F32 || a->rank < 3 || b->rank != a->rank) return NNP_OK;
  int64_t batches = 1;
  for (int d = 0; d < a->rank - 2; d++) {
    if (a->dims[d] != b->dims[d]) return NNP_OK;
    batches *= a->dims[d];
  }
  const int64_t M = a->dims[a->rank - 2], K = a->dims[a->rank - 1], N = b->dims[b->rank - 1];
  if (batches == 0 || M == 0 || N == 0 || K == 0 || b->dims[b->rank - 2] != K) return NNP_OK;
  nnp_sgemm_batched *f = nnp_calloc(1, sizeof *f);
  if (!f) return nnp_error(NNP_ERR_NOMEM, "out of memory preparing a batched MatMul");
  *f = (nnp_sgemm_batched){.M = M, .N = N, .K = K, .sam = K, .sak = 1, .sbk = N, .sbn = 1, .ldc = N, .n_dims = 1,
                           .dims = {batches}, .a_str = {M * K}, .b_str = {K * N}, .c_str = {M * N}};
  nnp_batched_matmul_kernel(f, ctx, generic, "matmul.batched.generic", "matmul.batched.avx2", "matmul.batched.avx512",
                            out);
  return NNP_OK;
}

void nnp_batched_matmul_kernel(nnp_sgemm_batched *f, const nnp_op_ctx *ctx, bool generic, const char *name_generic,
                               const char *name_avx2, const char *name_avx512, nnp_fast_kernel *out) {
  f->generic = nnp_dispatch_portable(NNP_KF_GEMM, generic);
  out->run = fast_bmm_run;
  out->destroy = nnp_free;
  out->state = f;
  out->scratch_needed = nnp_sgemm_batched_plan(f, nnp_threadpool_threads(ctx->pool));
  out->name = f->generic                                       ? name_generic
              : nnp_dispatch_isa(NNP_KF_GEMM) == NNP_ISA_AVX512 ? name_avx512
                                                                : name_avx2;
}
