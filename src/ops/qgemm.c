/* QGemm (internal op, ops/internal_ops.h): a quantized Gemm / MatMul with an int8 weight,
 * made by the fuse-qdq pass (ir/passes/fuse_qdq_gemm.c) from DequantizeLinear(a),
 * DequantizeLinear(w)[, DequantizeLinear(bias)] -> Gemm | MatMul [-> Relu | Clip]
 * [-> QuantizeLinear]. Inputs as ONNX Runtime's com.microsoft QGemm: A (uint8, R x K),
 * A_scale, A_zero_point (scalars), B (int8: K x N, or N x K with transB = 1), B_scale
 * and B_zero_point (one, or one per output column n), C (int32 bias of N, optional),
 * Y_scale and Y_zero_point (scalar; both absent: float32 output). With
 *   acc(r, n) = sum_k (A(r, k) - a_zp) (B(k, n) - b_zp(n)) + C(n):
 *  - uint8 Y = clamp(rintf((float)acc * (a_scale * b_scale(n) / y_scale)) + y_zp) to
 *    [0, 255] or the fused activation's `nnperf_clamp` [lo, hi] (as QLinearConv);
 *  - float32 Y = (float)acc * (a_scale * b_scale(n)): the dequantized product, what the
 *    unfused DQ -> Gemm computes up to float rounding (exact int32 sums here).
 * The fast path (kernels/qgemv.h) packs the constant weight once; its sums are exact, so
 * it matches this reference bit for bit. */
#include <math.h>
#include <string.h>

#include "kernels/dispatch.h"
#include "kernels/qgemv.h"
#include "nnperf/alloc.h"
#include "ops/internal_ops.h"
#include "ops/op_util.h"

static bool scalar_of(const nnp_tensor *t, nnp_dtype dt) { return t && t->dtype == dt && nnp_tensor_numel(t) == 1; }
static bool per_n(const nnp_tensor *t, nnp_dtype dt, int64_t n) {
  return t && t->dtype == dt && (nnp_tensor_numel(t) == 1 || nnp_tensor_numel(t) == n);
}

/* R, K, N of the product; B(k, n) = B[k*sbk + n*sbn]. */
typedef struct qgemm_dims {
  int64_t R, K, N, sbk, sbn;
} qgemm_dims;

static void dims_of(const nnp_op_ctx *ctx, qgemm_dims *d) {
  const nnp_tensor *a = ctx->in[0], *b = ctx->in[3];
  bool tb = nnp_attr_int(ctx->node, "transB", 0) != 0;
  d->R = a->dims[0];
  d->K = a->dims[1];
  d->N = tb ? b->dims[0] : b->dims[1];
  d->sbk = tb ? 1 : d->N;
  d->sbn = tb ? d->K : 1;
}

static bool u8_output(const nnp_op_ctx *ctx) { return nnp_in(ctx, 7) != NULL; }

static nnp_status infer_qgemm(nnp_op_ctx *ctx) {
  const nnp_tensor *a = ctx->in[0], *b = nnp_in(ctx, 3);
  if (!a || !b || !nnp_out(ctx, 0)) return nnp_error(NNP_ERR_SHAPE, "QGemm needs A, B and an output");
  for (int k = 1; k < 6; k++)
    if (!nnp_in(ctx, k)) return nnp_error(NNP_ERR_SHAPE, "QGemm: input %d is required", k);
  if (a->dtype != NNP_U8 || a->rank != 2 || b->dtype != NNP_I8 || b->rank != 2)
    return nnp_error(NNP_ERR_UNSUPPORTED, "QGemm supports a 2-D uint8 A and a 2-D int8 B only");
  if (nnp_attr_int(ctx->node, "transA", 0) != 0 || nnp_attr_float(ctx->node, "alpha", 1.0f) != 1.0f)
    return nnp_error(NNP_ERR_UNSUPPORTED, "QGemm supports transA = 0 and alpha = 1 only");
  qgemm_dims d;
  dims_of(ctx, &d);
  bool tb = nnp_attr_int(ctx->node, "transB", 0) != 0;
  if ((tb ? b->dims[1] : b->dims[0]) != d.K)
    return nnp_error(NNP_ERR_SHAPE, "QGemm: A is %lld x %lld but B's K is %lld", (long long)d.R, (long long)d.K,
                     (long long)(tb ? b->dims[1] : b->dims[0]));
  if (!scalar_of(ctx->in[1], NNP_F32) || !scalar_of(ctx->in[2], NNP_U8) || !per_n(ctx->in[4], NNP_F32, d.N) ||
      !per_n(ctx->in[5], NNP_I8, d.N))
    return nnp_error(NNP_ERR_UNSUPPORTED, "QGemm: scalar float32 A_scale and uint8 A_zero_point, float32 B_scale "
                     "and int8 B_zero_point of 1 or N elements only");
  const nnp_tensor *c = nnp_in(ctx, 6);
  if (c && (c->dtype != NNP_I32 || nnp_tensor_numel(c) != d.N))
    return nnp_error(NNP_ERR_UNSUPPORTED, "QGemm: C must be an int32 bias of N = %lld elements", (long long)d.N);
  if (u8_output(ctx) != (nnp_in(ctx, 8) != NULL) ||
      (u8_output(ctx) && (!scalar_of(ctx->in[7], NNP_F32) || !scalar_of(ctx->in[8], NNP_U8))))
    return nnp_error(NNP_ERR_UNSUPPORTED, "QGemm: Y_scale (float32) and Y_zero_point (uint8) come together");
  int64_t yd[2] = {d.R, d.N};
  nnp_set_shape(ctx->out[0], u8_output(ctx) ? NNP_U8 : NNP_F32, 2, yd);
  return NNP_OK;
}

/* The epilogue's constants: mult (uint8) or scale (float32) per n, the clamp. */
static nnp_status epilogue_of(const nnp_op_ctx *ctx, int64_t N, float *per, nnp_qepilogue *ep) {
  const nnp_tensor *bs = ctx->in[4];
  float as = *(const float *)ctx->in[1]->data;
  bool u8 = u8_output(ctx);
  float ys = u8 ? *(const float *)ctx->in[7]->data : 1.0f;
  for (int64_t n = 0; n < N; n++) {
    float s = ((const float *)bs->data)[nnp_tensor_numel(bs) == 1 ? 0 : n];
    per[n] = u8 ? as * s / ys : as * s; /* QLinearConv's float32 expression */
  }
  const nnp_tensor *c = nnp_in(ctx, 6);
  *ep = (nnp_qepilogue){.bias = c ? c->data : NULL, .mult = per, .zp = u8 ? *(const uint8_t *)ctx->in[8]->data : 0,
                        .qmin = 0, .qmax = 255};
  const int64_t *cl = NULL;
  if (nnp_attr_ints(ctx->node, "nnperf_clamp", &cl) == 2) {
    if (!(cl[0] >= 0 && cl[1] <= 255 && cl[0] <= cl[1]))
      return nnp_error(NNP_ERR_FORMAT, "QGemm: nnperf_clamp must be 0 <= lo <= hi <= 255");
    ep->qmin = (int32_t)cl[0];
    ep->qmax = (int32_t)cl[1];
  }
  return NNP_OK;
}

static void store_one(const nnp_op_ctx *ctx, const nnp_qepilogue *ep, int64_t i, int64_t n, int32_t acc) {
  if (u8_output(ctx)) {
    ((uint8_t *)ctx->out[0]->data)[i] = nnp_qrequant(acc, ep, n);
  } else {
    int32_t s = acc + (ep->bias ? ep->bias[n] : 0);
    ((float *)ctx->out[0]->data)[i] = (float)s * ep->mult[n];
  }
}

static nnp_status ref_qgemm(nnp_op_ctx *ctx) {
  qgemm_dims d;
  dims_of(ctx, &d);
  float *per = nnp_malloc((size_t)(d.N > 0 ? d.N : 1) * sizeof(float));
  if (!per) return nnp_error(NNP_ERR_NOMEM, "out of memory running QGemm");
  nnp_qepilogue ep;
  nnp_status s = epilogue_of(ctx, d.N, per, &ep);
  const uint8_t *a = ctx->in[0]->data;
  const int8_t *b = ctx->in[3]->data, *bz = ctx->in[5]->data;
  int32_t az = *(const uint8_t *)ctx->in[2]->data;
  bool bz_per = nnp_tensor_numel(ctx->in[5]) > 1;
  for (int64_t r = 0; s == NNP_OK && r < d.R; r++)
    for (int64_t n = 0; n < d.N; n++) {
      int32_t acc = 0, z = bz[bz_per ? n : 0];
      for (int64_t k = 0; k < d.K; k++) acc += ((int32_t)a[r * d.K + k] - az) * ((int32_t)b[k * d.sbk + n * d.sbn] - z);
      store_one(ctx, &ep, r * d.N + n, n, acc);
    }
  nnp_free(per);
  return s;
}

typedef struct fast_qgemm {
  int64_t R, K, N, kpad;
  int16_t *w;
  float *per;
  int32_t *bias, xzp;
  nnp_qepilogue ep;
  bool u8, generic;
} fast_qgemm;

static void fast_qgemm_destroy(void *p) {
  fast_qgemm *f = p;
  if (!f) return;
  nnp_aligned_free(f->w);
  nnp_free(f->per);
  nnp_free(f->bias);
  nnp_free(f);
}

static nnp_status fast_qgemm_run(void *p, nnp_op_ctx *ctx) {
  const fast_qgemm *f = p;
  int16_t *x = ctx->scratch;
  nnp_qgemv_widen_x(f->R, f->K, ctx->in[0]->data, f->xzp, x);
  nnp_qgemv_out o = {.u8 = f->u8 ? ctx->out[0]->data : NULL, .ep = &f->ep, .f32 = f->u8 ? NULL : ctx->out[0]->data,
                     .bias = f->bias, .scale = f->per};
  nnp_qgemv(f->R, f->N, f->kpad, x, f->w, &o, ctx->pool, f->generic);
  return NNP_OK;
}

static nnp_status prepare_qgemm(const nnp_op_ctx *ctx, bool generic, nnp_fast_kernel *out) {
  memset(out, 0, sizeof *out);
  for (int k = 1; k < ctx->n_in; k++)
    if (nnp_in(ctx, k) && !nnp_in(ctx, k)->data) return NNP_OK; /* run-time weights: the reference */
  qgemm_dims d;
  dims_of(ctx, &d);
  if (d.K >= 30000) return NNP_OK; /* int32 sums: K * 255 * 255 must stay far below 2^31 */
  fast_qgemm *f = nnp_calloc(1, sizeof *f);
  if (!f) return nnp_error(NNP_ERR_NOMEM, "out of memory preparing QGemm");
  f->R = d.R;
  f->K = d.K;
  f->N = d.N;
  f->kpad = nnp_qgemv_kpad(d.K);
  f->u8 = u8_output(ctx);
  f->generic = nnp_dispatch_portable(NNP_KF_QGEMV, generic);
  f->xzp = *(const uint8_t *)ctx->in[2]->data;
  f->w = nnp_aligned_alloc((size_t)(d.N * f->kpad) * sizeof(int16_t) + 64);
  f->per = nnp_malloc((size_t)(d.N > 0 ? d.N : 1) * sizeof(float));
  int32_t *wzp = nnp_malloc((size_t)(d.N > 0 ? d.N : 1) * sizeof(int32_t));
  const nnp_tensor *c = nnp_in(ctx, 6);
  if (c) f->bias = nnp_malloc((size_t)d.N * sizeof(int32_t));
  nnp_status s = f->w && f->per && wzp && (!c || f->bias) ? NNP_OK : nnp_error(NNP_ERR_NOMEM, "out of memory preparing QGemm");
  if (s == NNP_OK) s = epilogue_of(ctx, d.N, f->per, &f->ep);
  if (s == NNP_OK) {
    const nnp_tensor *bz = ctx->in[5];
    for (int64_t n = 0; n < d.N; n++) wzp[n] = ((const int8_t *)bz->data)[nnp_tensor_numel(bz) == 1 ? 0 : n];
    nnp_qgemv_pack_w(d.N, d.K, ctx->in[3]->data, d.sbn, d.sbk, wzp, f->w);
    if (c) memcpy(f->bias, c->data, (size_t)d.N * sizeof(int32_t));
    f->ep.bias = f->bias; /* owned copies: the plan may free its constants */
  }
  nnp_free(wzp);
  if (s != NNP_OK) {
    fast_qgemm_destroy(f);
    return s;
  }
  out->run = fast_qgemm_run;
  out->destroy = fast_qgemm_destroy;
  out->state = f;
  out->scratch_needed = (size_t)(d.R * f->kpad) * sizeof(int16_t) + 64;
  out->name = f->generic ? "qgemm.gemv.generic" : "qgemm.gemv.avx2";
  return NNP_OK;
}

const nnp_op_info nnp_op_qgemm = {.name = "QGemm", .min_inputs = 6, .max_inputs = 9, .min_outputs = 1,
                                  .max_outputs = 1, .infer = infer_qgemm, .ref = ref_qgemm,
                                  .prepare = prepare_qgemm};
