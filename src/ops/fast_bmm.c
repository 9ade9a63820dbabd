/* Batched MatMul with both operands computed at run time (attention's Q.K^T and attn.V
 * in ViT and Swin: [B, heads, M, K] x [B, heads, K, N]) -> kernels/gemm.h: each batch's
 * A and B packed into scratch, then the packed SGEMM. Profiles of vit_b_16 and swin_t
 * (docs/kernels.md) showed these on the reference kernel at 12-16% of the run. Covers
 * float32 operands of equal rank >= 3 with identical batch dimensions (no broadcast);
 * anything else declines, and the reference kernel runs.
 *
 * With at least as many batches as threads, the threads split the batches, each packing
 * and multiplying its own in its own scratch slot: Swin's windows make many small
 * products (192 of 49 x 32 x 49 in its first stage), each too small to split, and packed
 * on one thread while the other waited. */
#include <string.h>

#include "kernels/dispatch.h"
#include "kernels/gemm.h"
#include "nnperf/alloc.h"
#include "ops/fast_ops.h"
#include "ops/op_util.h"

typedef struct fast_bmm {
  int64_t batches, M, N, K;
  int64_t slots;       /* scratch slots: the threads split the batches when > 1 */
  int64_t slot_floats; /* packed A and B of one batch */
  bool generic;
} fast_bmm;

typedef struct bmm_job {
  const fast_bmm *f;
  const float *a, *b;
  float *y, *scratch;
} bmm_job;

/* Batch i: packed into slot, multiplied by the caller's thread alone (tp NULL) or split
 * over tp's threads. */
static void one_batch(const fast_bmm *f, const bmm_job *j, int64_t i, float *slot, nnp_threadpool *tp) {
  float *ap = slot, *bp = ap + nnp_sgemm_packed_a_floats(f->M, f->K);
  nnp_sgemm_pack_a(f->M, f->K, j->a + i * f->M * f->K, f->K, 1, ap);
  nnp_sgemm_pack_b(f->K, f->N, j->b + i * f->K * f->N, f->N, 1, bp);
  nnp_sgemm_packed_ex(f->M, f->N, f->K, ap, bp, j->y + i * f->M * f->N, f->N, NULL, tp, f->generic);
}

/* Task s: the contiguous share s of the batches, in scratch slot s. */
static void batch_share(void *p, int64_t s0, int64_t s1) {
  const bmm_job *j = p;
  const fast_bmm *f = j->f;
  for (int64_t s = s0; s < s1; s++)
    for (int64_t i = s * f->batches / f->slots; i < (s + 1) * f->batches / f->slots; i++)
      one_batch(f, j, i, j->scratch + s * f->slot_floats, NULL);
}

static nnp_status fast_bmm_run(void *p, nnp_op_ctx *ctx) {
  const fast_bmm *f = p;
  bmm_job j = {.f = f, .a = ctx->in[0]->data, .b = ctx->in[1]->data, .y = ctx->out[0]->data, .scratch = ctx->scratch};
  if (f->slots > 1 && nnp_threadpool_threads(ctx->pool) > 1) {
    nnp_threadpool_run(ctx->pool, batch_share, &j, f->slots);
    return NNP_OK;
  }
  for (int64_t i = 0; i < f->batches; i++) one_batch(f, &j, i, j.scratch, ctx->pool);
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
  fast_bmm *f = nnp_calloc(1, sizeof *f);
  if (!f) return nnp_error(NNP_ERR_NOMEM, "out of memory preparing a batched MatMul");
  *f = (fast_bmm){.batches = batches, .M = M, .N = N, .K = K, .generic = nnp_dispatch_portable(NNP_KF_GEMM, generic)};
  /* 64-byte aligned slots (the packed panels are read with aligned loads) */
  f->slot_floats = ((int64_t)(nnp_sgemm_packed_a_floats(M, K) + nnp_sgemm_packed_b_floats(K, N)) + 15) / 16 * 16;
  const int64_t threads = nnp_threadpool_threads(ctx->pool);
  f->slots = batches >= threads ? threads : 1;
  out->run = fast_bmm_run;
  out->destroy = nnp_free;
  out->state = f;
  out->scratch_needed = (size_t)(f->slots * f->slot_floats) * sizeof(float);
  out->name = f->generic ? "matmul.batched.generic" : "matmul.batched.avx2";
  return NNP_OK;
}
