/* Gemm and MatMul.
 *
 * Both reduce to the reference GEMM nnp_gemm_ref (ops/gemm_ref.h): Y += A * B with B
 * row-major and A addressed through two strides (so transA costs nothing).
 * Gemm with transB = 1 (B stored N x K, the usual layout of fully connected weights)
 * transposes B one panel of GEMM_PANEL_COLS columns at a time into scratch (K x
 * GEMM_PANEL_COLS, so the scratch stays small even for large weights) and runs the GEMM
 * on each panel, unless A has fewer than GEMM_NT_ROWS rows: a matrix-vector product gains
 * nothing from the copy and uses dot products (i, j, k) over the contiguous k instead.
 *
 * Types: float32, float64, int32, int64, uint32, uint64. Integer products accumulate in
 * the unsigned type of the same width, so overflow wraps (as numpy does) instead of being
 * undefined behaviour. */
#include <string.h>

#include "ops/fast_ops.h"
#include "ops/gemm_ref.h"
#include "ops/op_util.h"

/* Width of a transposed panel of B: the GEMM's column block, so the GEMM on a panel is
 * exactly one block wide. */
#define GEMM_PANEL_COLS NNP_GEMM_REF_NB
#define GEMM_NT_ROWS 4

/* Y(i, j) = sum_k A(i, k) * Bt[j*K + k] (B given as N x K). */
#define DEFINE_GEMM_NT(SUF, T, ACC)                                                       \
  static void gemm_nt_##SUF(int64_t M, int64_t N, int64_t K, const T *A, int64_t sai,   \
                            int64_t sak, const T *Bt, T *Y, int64_t ldy) {               \
    for (int64_t i = 0; i < M; i++)                                                       \
      for (int64_t j = 0; j < N; j++) {                                                   \
        const T *b = Bt + j * K;                                                          \
        ACC acc = 0;                                                                      \
        for (int64_t k = 0; k < K; k++) acc += (ACC)A[i * sai + k * sak] * (ACC)b[k];     \
        Y[i * ldy + j] = (T)acc;                                                          \
      }                                                                                   \
  }

DEFINE_GEMM_NT(f32, float, float)
DEFINE_GEMM_NT(f64, double, double)
DEFINE_GEMM_NT(i32, int32_t, uint32_t)
DEFINE_GEMM_NT(i64, int64_t, uint64_t)
DEFINE_GEMM_NT(u32, uint32_t, uint32_t)
DEFINE_GEMM_NT(u64, uint64_t, uint64_t)

static nnp_status check_types(const nnp_op_ctx *ctx) {
  const nnp_tensor *a = ctx->in[0], *b = nnp_in(ctx, 1);
  if (!a || !b || !nnp_out(ctx, 0))
    return nnp_error(NNP_ERR_SHAPE, "inputs A and B and output Y are required");
  NNP_TRY(nnp_check_dtype(a, "input A", NNP_F32, NNP_F64, NNP_I32, NNP_I64, NNP_U32, NNP_U64,
                          NNP_UNDEFINED));
  if (b->dtype != a->dtype)
    return nnp_error(NNP_ERR_SHAPE, "inputs have different types %s and %s",
                     nnp_dtype_name(a->dtype), nnp_dtype_name(b->dtype));
  return NNP_OK;
}

static void gemm_nt(nnp_dtype dt, int64_t M, int64_t N, int64_t K, const void *A, int64_t sai,
                    int64_t sak, const void *Bt, void *Y, int64_t ldy) {
  switch (dt) {
    case NNP_F32: gemm_nt_f32(M, N, K, A, sai, sak, Bt, Y, ldy); break;
    case NNP_F64: gemm_nt_f64(M, N, K, A, sai, sak, Bt, Y, ldy); break;
    case NNP_I32: gemm_nt_i32(M, N, K, A, sai, sak, Bt, Y, ldy); break;
    case NNP_I64: gemm_nt_i64(M, N, K, A, sai, sak, Bt, Y, ldy); break;
    case NNP_U32: gemm_nt_u32(M, N, K, A, sai, sak, Bt, Y, ldy); break;
    case NNP_U64: gemm_nt_u64(M, N, K, A, sai, sak, Bt, Y, ldy); break;
    default: break;
  }
}

/* ---------------------------------------------------------------------------------
 * Gemm: Y = alpha * A' B' + beta * C, A' = transA ? A^T : A (M x K), B' likewise
 * (K x N), C unidirectionally broadcast to (M, N). C is optional from opset 11; in
 * older opsets an absent C is accepted too (it means zero). The opset < 7 'broadcast'
 * attribute is not needed: broadcasting C is always allowed. */

static nnp_status gemm_flag(const nnp_node *node, const char *name, bool *out) {
  int64_t v = nnp_attr_int(node, name, 0);
  if (v != 0 && v != 1)
    return nnp_error(NNP_ERR_SHAPE, "attribute '%s' = %lld must be 0 or 1", name, (long long)v);
  *out = v == 1;
  return NNP_OK;
}

static nnp_status infer_gemm(nnp_op_ctx *ctx) {
  const nnp_tensor *a = ctx->in[0], *b = ctx->in[1], *c = nnp_in(ctx, 2);
  NNP_TRY(check_types(ctx));
  if (a->rank != 2 || b->rank != 2)
    return nnp_error(NNP_ERR_SHAPE, "A and B must be 2-D, got ranks %d and %d", a->rank, b->rank);
  bool ta = false, tb = false;
  NNP_TRY(gemm_flag(ctx->node, "transA", &ta));
  NNP_TRY(gemm_flag(ctx->node, "transB", &tb));
  int64_t m = a->dims[ta ? 1 : 0], k = a->dims[ta ? 0 : 1];
  int64_t kb = b->dims[tb ? 1 : 0], n = b->dims[tb ? 0 : 1];
  if (k != kb)
    return nnp_error(NNP_ERR_SHAPE, "inner dimensions differ: A' is %lldx%lld, B' is %lldx%lld",
                     (long long)m, (long long)k, (long long)kb, (long long)n);
  if (c) {
    if (c->dtype != a->dtype)
      return nnp_error(NNP_ERR_SHAPE, "C has type %s, A has %s", nnp_dtype_name(c->dtype),
                       nnp_dtype_name(a->dtype));
    bool ok = c->rank <= 2;
    if (c->rank >= 1 && c->dims[c->rank - 1] != 1 && c->dims[c->rank - 1] != n) ok = false;
    if (c->rank == 2 && c->dims[0] != 1 && c->dims[0] != m) ok = false;
    if (!ok) {
      char buf[64];
      return nnp_error(NNP_ERR_SHAPE, "C of shape %s does not broadcast to %lldx%lld",
                       nnp_shape_str(c->rank, c->dims, buf, sizeof buf), (long long)m, (long long)n);
    }
  }
  if (!nnp_dtype_is_float(a->dtype)) {
    /* Integer Gemm stays exact: only alpha = 1 and beta in {0, 1} are meaningful. */
    float alpha = nnp_attr_float(ctx->node, "alpha", 1.0f), beta = nnp_attr_float(ctx->node, "beta", 1.0f);
    if (alpha != 1.0f || (beta != 0.0f && beta != 1.0f))
      return nnp_error(NNP_ERR_UNSUPPORTED,
                       "integer Gemm supports only alpha = 1 and beta = 0 or 1 (got %g, %g)",
                       (double)alpha, (double)beta);
  }
  int64_t dims[2] = {m, n};
  size_t nb;
  NNP_TRY(nnp_shape_nbytes(a->dtype, 2, dims, &nb));
  nnp_set_shape(ctx->out[0], a->dtype, 2, dims);
  if (tb && m >= GEMM_NT_ROWS) /* one transposed panel of B */
    ctx->scratch_needed =
        (size_t)k * (size_t)(n < GEMM_PANEL_COLS ? n : GEMM_PANEL_COLS) * nnp_dtype_size(a->dtype);
  return NNP_OK;
}

/* Rows [j0, j0+nb) of Bt (N x K) -> panel (K x nb), for 4- and 8-byte elements (every
 * Gemm type). */
#define DEFINE_PANEL(BITS)                                                                \
  static void panel_##BITS(const uint##BITS##_t *bt, int64_t k, int64_t j0, int64_t nb,   \
                           uint##BITS##_t *panel) {                                       \
    for (int64_t j = 0; j < nb; j++) {                                                    \
      const uint##BITS##_t *row = bt + (j0 + j) * k;                                      \
      for (int64_t kk = 0; kk < k; kk++) panel[kk * nb + j] = row[kk];                    \
    }                                                                                     \
  }
DEFINE_PANEL(32)
DEFINE_PANEL(64)

/* Y = alpha * Y + beta * C, float types. */
#define DEFINE_GEMM_EPI_F(SUF, T)                                                         \
  static void gemm_epi_##SUF(T *y, int64_t M, int64_t N, T alpha, T beta, const T *c,    \
                             int64_t csi, int64_t csj) {                                  \
    for (int64_t i = 0; i < M; i++)                                                       \
      for (int64_t j = 0; j < N; j++) {                                                   \
        T v = alpha * y[i * N + j];                                                       \
        if (c) v += beta * c[i * csi + j * csj];                                          \
        y[i * N + j] = v;                                                                 \
      }                                                                                   \
  }
DEFINE_GEMM_EPI_F(f32, float)
DEFINE_GEMM_EPI_F(f64, double)

/* Y += C, integer types (alpha = beta = 1), wrapping. */
#define DEFINE_GEMM_EPI_I(SUF, T, U)                                                      \
  static void gemm_epi_##SUF(T *y, int64_t M, int64_t N, const T *c, int64_t csi,        \
                             int64_t csj) {                                               \
    for (int64_t i = 0; i < M; i++)                                                       \
      for (int64_t j = 0; j < N; j++)                                                     \
        y[i * N + j] = (T)((U)y[i * N + j] + (U)c[i * csi + j * csj]);                    \
  }
DEFINE_GEMM_EPI_I(i32, int32_t, uint32_t)
DEFINE_GEMM_EPI_I(i64, int64_t, uint64_t)
DEFINE_GEMM_EPI_I(u32, uint32_t, uint32_t)
DEFINE_GEMM_EPI_I(u64, uint64_t, uint64_t)

static nnp_status ref_gemm(nnp_op_ctx *ctx) {
  const nnp_tensor *a = ctx->in[0], *b = ctx->in[1], *c = nnp_in(ctx, 2);
  nnp_tensor *y = ctx->out[0];
  bool ta = nnp_attr_int(ctx->node, "transA", 0) == 1, tb = nnp_attr_int(ctx->node, "transB", 0) == 1;
  float alpha = nnp_attr_float(ctx->node, "alpha", 1.0f), beta = nnp_attr_float(ctx->node, "beta", 1.0f);
  const int64_t M = y->dims[0], N = y->dims[1], K = a->dims[ta ? 0 : 1];
  const int64_t sai = ta ? 1 : K, sak = ta ? M : 1;
  const nnp_dtype dt = a->dtype;
  if (tb && M < GEMM_NT_ROWS) {
    gemm_nt(dt, M, N, K, a->data, sai, sak, b->data, y->data, N);
  } else {
    memset(y->data, 0, nnp_tensor_nbytes(y));
    if (!tb) {
      nnp_gemm_ref(dt, M, N, K, a->data, sai, sak, b->data, N, y->data, N);
    } else {
      const size_t es = nnp_dtype_size(dt);
      if (ctx->scratch_size < (size_t)K * (size_t)(N < GEMM_PANEL_COLS ? N : GEMM_PANEL_COLS) * es)
        return nnp_error(NNP_ERR_INTERNAL, "Gemm scratch too small");
      for (int64_t j0 = 0; j0 < N; j0 += GEMM_PANEL_COLS) {
        const int64_t nb = N - j0 < GEMM_PANEL_COLS ? N - j0 : GEMM_PANEL_COLS;
        if (es == 4) panel_32(b->data, K, j0, nb, ctx->scratch);
        else panel_64(b->data, K, j0, nb, ctx->scratch);
        nnp_gemm_ref(dt, M, nb, K, a->data, sai, sak, ctx->scratch, nb,
                     (char *)y->data + (size_t)j0 * es, N);
      }
    }
  }
  /* beta = 0 ignores C entirely (as onnxruntime does), even if it holds NaN. */
  const void *cp = c && beta != 0.0f ? c->data : NULL;
  int64_t csi = 0, csj = 0;
  if (cp) {
    csj = c->rank >= 1 && c->dims[c->rank - 1] != 1 ? 1 : 0;
    csi = c->rank == 2 && c->dims[0] != 1 ? c->dims[1] : 0;
  }
  switch (dt) {
    case NNP_F32: gemm_epi_f32(y->data, M, N, alpha, beta, cp, csi, csj); break;
    case NNP_F64: gemm_epi_f64(y->data, M, N, alpha, beta, cp, csi, csj); break;
    case NNP_I32: if (cp) gemm_epi_i32(y->data, M, N, cp, csi, csj); break;
    case NNP_I64: if (cp) gemm_epi_i64(y->data, M, N, cp, csi, csj); break;
    case NNP_U32: if (cp) gemm_epi_u32(y->data, M, N, cp, csi, csj); break;
    case NNP_U64: if (cp) gemm_epi_u64(y->data, M, N, cp, csi, csj); break;
    default: return nnp_error(NNP_ERR_INTERNAL, "Gemm: unexpected type");
  }
  return NNP_OK;
}

const nnp_op_info nnp_op_gemm = {.name = "Gemm", .min_inputs = 2, .max_inputs = 3,
                                 .min_outputs = 1, .max_outputs = 1,
                                 .infer = infer_gemm, .ref = ref_gemm, .prepare = nnp_prepare_gemm};

/* ---------------------------------------------------------------------------------
 * MatMul, numpy semantics: a 1-D A is a row (1 x K) and a 1-D B a column (K x 1), the
 * added axis removed from the result; leading (batch) axes broadcast. */

typedef struct matmul_geom {
  int64_t m, n, k;
  int brank;                    /* rank of the broadcast batch shape */
  int64_t bdims[NNP_MAX_RANK];  /* broadcast batch shape */
  int64_t astr[NNP_MAX_RANK];   /* per batch axis: step of A's matrix offset (0 = broadcast) */
  int64_t bstr[NNP_MAX_RANK];
} matmul_geom;

static nnp_status matmul_parse(const nnp_tensor *a, const nnp_tensor *b, matmul_geom *g,
                               int *out_rank, int64_t *out_dims) {
  if (a->rank < 1 || b->rank < 1)
    return nnp_error(NNP_ERR_SHAPE, "MatMul inputs must have rank >= 1 (got %d and %d)", a->rank,
                     b->rank);
  memset(g, 0, sizeof *g);
  g->m = a->rank >= 2 ? a->dims[a->rank - 2] : 1;
  g->k = a->dims[a->rank - 1];
  int64_t kb = b->dims[b->rank >= 2 ? b->rank - 2 : 0];
  g->n = b->rank >= 2 ? b->dims[b->rank - 1] : 1;
  if (g->k != kb)
    return nnp_error(NNP_ERR_SHAPE, "inner dimensions differ: A has K = %lld, B has K = %lld",
                     (long long)g->k, (long long)kb);
  int ra = a->rank > 2 ? a->rank - 2 : 0, rb = b->rank > 2 ? b->rank - 2 : 0;
  NNP_TRY(nnp_broadcast_shapes(ra, a->dims, rb, b->dims, &g->brank, g->bdims));
  /* Matrix offsets: walk the batch axes innermost-first with each input's own strides. */
  int64_t sa = g->m * g->k, sb = g->k * g->n;
  for (int i = g->brank - 1; i >= 0; i--) {
    int ia = i - (g->brank - ra), ib = i - (g->brank - rb);
    int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
    g->astr[i] = da == 1 ? 0 : sa;
    g->bstr[i] = db == 1 ? 0 : sb;
    sa *= da;
    sb *= db;
  }
  int r = 0;
  for (int i = 0; i < g->brank; i++) out_dims[r++] = g->bdims[i];
  if (a->rank >= 2) out_dims[r++] = g->m;
  if (b->rank >= 2) out_dims[r++] = g->n;
  if (r > NNP_MAX_RANK) return nnp_error(NNP_ERR_LIMIT, "MatMul result rank %d exceeds %d", r, NNP_MAX_RANK);
  *out_rank = r;
  return NNP_OK;
}

static nnp_status infer_matmul(nnp_op_ctx *ctx) {
  const nnp_tensor *a = ctx->in[0], *b = ctx->in[1];
  NNP_TRY(check_types(ctx));
  matmul_geom g;
  int r;
  int64_t dims[NNP_MAX_RANK + 2];
  NNP_TRY(matmul_parse(a, b, &g, &r, dims));
  size_t nb;
  NNP_TRY(nnp_shape_nbytes(a->dtype, r, dims, &nb));
  nnp_set_shape(ctx->out[0], a->dtype, r, dims);
  return NNP_OK;
}

static nnp_status ref_matmul(nnp_op_ctx *ctx) {
  const nnp_tensor *a = ctx->in[0], *b = ctx->in[1];
  nnp_tensor *y = ctx->out[0];
  matmul_geom g;
  int r;
  int64_t dims[NNP_MAX_RANK + 2];
  NNP_TRY(matmul_parse(a, b, &g, &r, dims));
  const size_t es = nnp_dtype_size(a->dtype);
  memset(y->data, 0, nnp_tensor_nbytes(y));
  int64_t nbatch = 1;
  for (int i = 0; i < g.brank; i++) nbatch *= g.bdims[i];
  int64_t idx[NNP_MAX_RANK] = {0};
  int64_t ao = 0, bo = 0; /* element offsets of the current batch's matrices */
  const char *ap = a->data, *bp = b->data;
  char *yp = y->data;
  for (int64_t bi = 0; bi < nbatch; bi++) {
    nnp_gemm_ref(a->dtype, g.m, g.n, g.k, ap + (size_t)ao * es, g.k, 1, bp + (size_t)bo * es, g.n,
                 yp + (size_t)(bi * g.m * g.n) * es, g.n);
    /* Advance the batch multi-index (last axis fastest) and the two offsets. */
    for (int i = g.brank - 1; i >= 0; i--) {
      ao += g.astr[i];
      bo += g.bstr[i];
      if (++idx[i] < g.bdims[i]) break;
      ao -= g.astr[i] * g.bdims[i];
      bo -= g.bstr[i] * g.bdims[i];
      idx[i] = 0;
    }
  }
  return NNP_OK;
}

const nnp_op_info nnp_op_matmul = {.name = "MatMul", .min_inputs = 2, .max_inputs = 2,
                                   .min_outputs = 1, .max_outputs = 1,
                                   .infer = infer_matmul, .ref = ref_matmul, .prepare = nnp_prepare_matmul};
