/* Gemm and MatMul -> kernels/gemm.h, when B is a float32 constant (the weights of a
 * fully connected layer): B is packed once here, A per run into scratch. */
#include <string.h>

#include "kernels/dispatch.h"
#include "kernels/gemm.h"
#include "nnperf/alloc.h"
#include "ops/fast_ops.h"
#include "ops/internal_ops.h"
#include "ops/op_util.h"

typedef struct fast_gemm {
  int64_t M, N, K, sam, sak; /* A(m, k) = A[m*sam + k*sak] */
  float *bpack;
  int bias_kind;       /* Gemm's C as a bias: per column, per row, or a full residual */
  const float *bias;   /* constant C for a row/column bias */
  bool c_residual;     /* C is M x N: added as the epilogue's residual, read at run */
  bool r_residual;     /* FusedGemm's input 3 (R): the epilogue's residual, read at run */
  int act;             /* FusedGemm's activation (nnp_act), NNP_ACT_NONE for Gemm */
  float act_min, act_max;
  bool generic;
} fast_gemm;

static void fast_gemm_destroy(void *p) {
  fast_gemm *f = p;
  if (!f) return;
  nnp_aligned_free(f->bpack);
  nnp_free(f);
}

static nnp_status fast_gemm_run(void *p, nnp_op_ctx *ctx) {
  const fast_gemm *f = p;
  float *ap = ctx->scratch;
  nnp_sgemm_pack_a_pool(f->M, f->K, ctx->in[0]->data, f->sam, f->sak, ap, ctx->pool);
  nnp_epilogue ep = {.bias = f->bias, .bias_kind = f->bias_kind, .act = f->act, .act_min = f->act_min,
                     .act_max = f->act_max};
  if (f->c_residual || f->r_residual) {
    ep.residual = ctx->in[f->c_residual ? 2 : 3]->data;
    ep.ld_res = f->N;
  }
  nnp_sgemm_packed_ex(f->M, f->N, f->K, ap, f->bpack, ctx->out[0]->data, f->N, &ep, ctx->pool, f->generic);
  return NNP_OK;
}

/* B(k, n) = B[k*sbk + n*sbn], packed now. */
static nnp_status make(const nnp_tensor *b, int64_t M, int64_t N, int64_t K, int64_t sam, int64_t sak, int64_t sbk,
                       int64_t sbn, bool generic, fast_gemm **out) {
  fast_gemm *f = nnp_calloc(1, sizeof *f);
  if (!f) return nnp_error(NNP_ERR_NOMEM, "out of memory packing GEMM weights");
  *f = (fast_gemm){.M = M, .N = N, .K = K, .sam = sam, .sak = sak, .generic = nnp_dispatch_portable(NNP_KF_GEMM, generic)};
  f->bpack = nnp_aligned_alloc(nnp_sgemm_packed_b_floats(K, N) * sizeof(float) + 1);
  if (!f->bpack) {
    nnp_free(f);
    return nnp_error(NNP_ERR_NOMEM, "out of memory packing GEMM weights");
  }
  nnp_sgemm_pack_b(K, N, b->data, sbk, sbn, f->bpack);
  *out = f;
  return NNP_OK;
}

static void finish(fast_gemm *f, const char *op, nnp_fast_kernel *out) {
  out->run = fast_gemm_run;
  out->destroy = fast_gemm_destroy;
  out->state = f;
  out->scratch_needed = nnp_sgemm_packed_a_floats(f->M, f->K) * sizeof(float);
  /* the tile that runs: nnp_sgemm_tile_fast takes AVX-512 where the dispatch does */
  static const char *names[2][3] = {{"gemm.packed.generic", "gemm.packed.avx2", "gemm.packed.avx512"},
                                    {"matmul.packed.generic", "matmul.packed.avx2", "matmul.packed.avx512"}};
  out->name = names[op[0] != 'G'][f->generic ? 0 : nnp_dispatch_isa(NNP_KF_GEMM) == NNP_ISA_AVX512 ? 2 : 1];
}

nnp_status nnp_prepare_gemm(const nnp_op_ctx *ctx, bool generic, nnp_fast_kernel *out) {
  const nnp_tensor *a = ctx->in[0], *b = ctx->in[1], *c = nnp_in(ctx, 2);
  memset(out, 0, sizeof *out);
  if (a->dtype != NNP_F32 || a->rank != 2 || b->rank != 2 || !b->data) return NNP_OK;
  if (nnp_attr_float(ctx->node, "alpha", 1.0f) != 1.0f) return NNP_OK;
  float beta = nnp_attr_float(ctx->node, "beta", 1.0f);
  bool ta = nnp_attr_int(ctx->node, "transA", 0) != 0, tb = nnp_attr_int(ctx->node, "transB", 0) != 0;
  int64_t M = ctx->out[0]->dims[0], N = ctx->out[0]->dims[1], K = a->dims[ta ? 0 : 1];
  if (M == 0 || N == 0 || K == 0) return NNP_OK;
  int kind = NNP_BIAS_NONE;
  bool residual = false;
  /* FusedGemm (internal_ops.h): Gemm + optional residual R (input 3) + activation */
  const nnp_tensor *r = ctx->n_in > 3 ? ctx->in[3] : NULL;
  nnp_act act = NNP_ACT_NONE;
  float lo = 0, hi = 0;
  if (ctx->node->op == NNP_OP_FUSED_GEMM) NNP_TRY(nnp_fused_activation(ctx->node, &act, &lo, &hi));
  if (c && beta != 0.0f) {
    if (beta != 1.0f) return NNP_OK;
    int64_t cm = c->rank == 2 ? c->dims[0] : 1, cn = c->rank >= 1 ? c->dims[c->rank - 1] : 1;
    if (cm == M && cn == N && c->rank == 2 && !(M == 1 && N == 1)) residual = true;
    else if (cm == 1 && cn == N && c->data && N > 1) kind = NNP_BIAS_COL;
    else if (cm == M && cn == 1 && c->data && c->rank == 2 && M > 1) kind = NNP_BIAS_ROW;
    else return NNP_OK;
  }
  if (r && (residual || r->dtype != NNP_F32 || !nnp_tensor_same_shape(r, ctx->out[0]))) return NNP_OK;
  fast_gemm *f;
  NNP_TRY(make(b, M, N, K, ta ? 1 : K, ta ? M : 1, tb ? 1 : N, tb ? K : 1, generic, &f));
  f->bias_kind = kind;
  f->bias = kind != NNP_BIAS_NONE ? c->data : NULL;
  f->c_residual = residual;
  f->r_residual = r != NULL;
  f->act = act;
  f->act_min = lo;
  f->act_max = hi;
  finish(f, "Gemm", out);
  return NNP_OK;
}

nnp_status nnp_prepare_matmul(const nnp_op_ctx *ctx, bool generic, nnp_fast_kernel *out) {
  const nnp_tensor *a = ctx->in[0], *b = ctx->in[1];
  memset(out, 0, sizeof *out);
  const bool fused = ctx->node->op == NNP_OP_FUSED_MATMUL; /* + bias (input 2), [R], activation */
  if (fused && (b->rank != 2 || !b->data)) return NNP_OK;  /* the pass makes none such: the reference */
  if (b->rank != 2 || !b->data) return nnp_prepare_batched_matmul(ctx, generic, out); /* ops/fast_bmm.c */
  if (a->dtype != NNP_F32 || a->rank < 2) return NNP_OK;
  int64_t K = a->dims[a->rank - 1], N = b->dims[1], M = 1;
  for (int i = 0; i < a->rank - 1; i++) M *= a->dims[i];
  if (M == 0 || N == 0 || K == 0) return NNP_OK;
  nnp_act act = NNP_ACT_NONE;
  float lo = 0, hi = 0;
  if (fused) {
    if (!ctx->in[2]->data) return NNP_OK; /* a run-time bias: the reference */
    NNP_TRY(nnp_fused_activation(ctx->node, &act, &lo, &hi));
  }
  fast_gemm *f;
  NNP_TRY(make(b, M, N, K, K, 1, N, 1, generic, &f));
  if (fused) {
    f->bias_kind = NNP_BIAS_COL;
    f->bias = ctx->in[2]->data;
    f->r_residual = ctx->n_in > 3 && ctx->in[3];
    f->act = act;
    f->act_min = lo;
    f->act_max = hi;
  }
  finish(f, "MatMul", out);
  return NNP_OK;
}
