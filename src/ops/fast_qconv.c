/* QLinearConv -> kernels/qgemm.h (group 1) or kernels/qdwconv.h (depthwise: group = C =
 * M): uint8 activations x int8 weights, 2-D, with
 * constant weights, scales and zero points (what nnperf's QDQ export and the fuse-qdq
 * pass produce). Weights are packed once with their per-channel zero points subtracted
 * and K reordered channel-innermost; each run writes im2col straight into the packed-B
 * layout with x's zero point subtracted (padding becomes 0, i.e. the zero point), then
 * one INT8 GEMM per image
 * writes uint8 Y with the requantize epilogue. Anything else (int8 activations, other groups,
 * run-time scales) declines to the reference kernel in ops/quant.c. */
#include <string.h>

#include "kernels/conv.h"
#include "kernels/dispatch.h"
#include "kernels/qdwconv.h"
#include "kernels/qgemm.h"
#include "nnperf/alloc.h"
#include "ops/conv_desc.h"
#include "ops/fast_ops.h"
#include "ops/op_util.h"

typedef struct fast_qconv {
  nnp_conv2d_desc d;
  int64_t cp;   /* channels rounded up to even: an odd C gets a phantom channel of zero weights */
  int64_t K, N; /* GEMM: M = d.m rows (output channels), K = cp*kh*kw, N = oh*ow */
  int16_t *apack;
  float *mult;
  int32_t *bias; /* NULL: none */
  int32_t xzp;
  nnp_qepilogue ep;
  bool generic;      /* im2col: the portable C loops */
  nnp_qgemm_isa isa; /* the GEMM tile */
} fast_qconv;

static void fast_qconv_destroy(void *p) {
  fast_qconv *f = p;
  if (!f) return;
  nnp_aligned_free(f->apack);
  nnp_free(f->mult);
  nnp_free(f->bias);
  nnp_free(f);
}

typedef struct im2col_job {
  const fast_qconv *f;
  const uint8_t *x; /* one image */
  int16_t *bp;
} im2col_job;

/* Column panels [q0, q1) of the packed B. K runs channel-innermost, k = tap*C + ch (the
 * weights are permuted to match at prepare), so a k pair (k, k+1) is two channels under
 * one tap (an odd C is padded with a phantom channel whose weights are 0): the 16 columns' offsets into a channel plane and their padding
 * mask are computed once per tap and serve every channel pair, and where the 16 inputs
 * are consecutive in one row (stride 1, no padding) the AVX2 path widens, shifts and
 * interleaves two channels' 16 bytes at once (elsewhere it gathers the 16 bytes first). B(k, n) = x(ch, oy*sh - ph + ky*dh, ...) -
 * xzp; padding is 0 (the zero point). */
static void im2col_range(void *p, int64_t q0, int64_t q1) {
  const im2col_job *j = p;
  const fast_qconv *f = j->f;
  const nnp_conv2d_desc *d = &f->d;
  int64_t K2 = (f->K + 1) / 2, khw = d->kh * d->kw, plane = d->h * d->w, C = d->c;
  const int16_t zp = (int16_t)f->xzp;
  for (int64_t q = q0; q < q1; q++) {
    int16_t *panel = j->bp + q * NNP_QGEMM_NR * 2 * K2;
    int64_t iy0[NNP_QGEMM_NR], ix0[NNP_QGEMM_NR];
    int nc = 0;
    for (int c = 0; c < NNP_QGEMM_NR; c++) {
      int64_t n = q * NNP_QGEMM_NR + c;
      if (n < f->N) nc = c + 1;
      iy0[c] = n < f->N ? (n / d->ow) * d->sh - d->ph : 0;
      ix0[c] = n < f->N ? (n % d->ow) * d->sw - d->pw : 0;
    }
    if (f->K & 1) { /* the odd tail's partner row is zero */
      int16_t *row = panel + (K2 - 1) * NNP_QGEMM_NR * 2 + 1;
      for (int c = 0; c < NNP_QGEMM_NR; c++) row[c * 2] = 0;
    }
    for (int64_t tap = 0; tap < khw; tap++) {
      int64_t dy = (tap / d->kw) * d->dh, dx = (tap % d->kw) * d->dw;
      int64_t off[NNP_QGEMM_NR];
      bool in[NNP_QGEMM_NR], all = nc == NNP_QGEMM_NR, contig;
      for (int c = 0; c < NNP_QGEMM_NR; c++) {
        int64_t iy = iy0[c] + dy, ix = ix0[c] + dx;
        in[c] = c < nc && iy >= 0 && iy < d->h && ix >= 0 && ix < d->w;
        off[c] = in[c] ? iy * d->w + ix : 0;
        all = all && in[c];
      }
      contig = all;
      for (int c = 1; c < NNP_QGEMM_NR; c++) contig = contig && off[c] == off[0] + c;
      int16_t *row = panel + (tap * f->cp >> 1) * NNP_QGEMM_NR * 2;
      if (!f->generic) {
        if (contig) nnp_qim2col_pairs_avx2(j->x + off[0], plane, C, zp, row);
        else nnp_qim2col_pairs_gather_avx2(j->x, plane, C, off, in, (uint8_t)f->xzp, row);
        continue;
      }
      for (int64_t ch = 0; ch < C; ch += 2, row += NNP_QGEMM_NR * 2) {
        const uint8_t *s0 = j->x + ch * plane, *s1 = ch + 1 < C ? s0 + plane : s0; /* phantom: any value */
        for (int c = 0; c < NNP_QGEMM_NR; c++) {
          row[c * 2] = in[c] ? (int16_t)(s0[off[c]] - zp) : 0;
          row[c * 2 + 1] = in[c] ? (int16_t)(s1[off[c]] - zp) : 0;
        }
      }
    }
  }
}

static nnp_status fast_qconv_run(void *p, nnp_op_ctx *ctx) {
  const fast_qconv *f = p;
  const nnp_conv2d_desc *d = &f->d;
  int16_t *bp = ctx->scratch;
  const uint8_t *x = ctx->in[0]->data;
  uint8_t *y = ctx->out[0]->data;
  int64_t panels = (f->N + NNP_QGEMM_NR - 1) / NNP_QGEMM_NR;
  for (int64_t n = 0; n < d->n; n++) {
    im2col_job j = {.f = f, .x = x + n * d->c * d->h * d->w, .bp = bp};
    nnp_threadpool_run(ctx->pool, im2col_range, &j, panels);
    nnp_qgemm_packed_isa(d->m, f->N, f->K, f->apack, bp, y + n * d->m * f->N, f->N, &f->ep, ctx->pool, f->isa);
  }
  return NNP_OK;
}

/* A constant scalar-or-per-channel parameter; false when absent from load-time data. */
static bool const_param(const nnp_tensor *t, nnp_dtype dt, int64_t channels) {
  if (!t || !t->data || t->dtype != dt) return false;
  int64_t n = nnp_tensor_numel(t);
  return n == 1 || (channels > 0 && n == channels);
}

/* The u8 x s8 layout for AVX-512 VNNI (vpdpbusd, kernels/qgemm.h) when every weight zero
 * point is 0: K channel-innermost in groups of 4 channels (C rounded up to 4 with phantom
 * channels of zero weight), activations raw bytes (padding = x_zp), and the x zero point
 * folded into the bias: bias[m] - x_zp * sum_k w[m, k]. */
typedef struct fast_qconv8 {
  nnp_conv2d_desc d;
  int64_t c4, K, N;
  int8_t *apack;
  float *mult;
  int32_t *bias;
  uint8_t xzp;
  nnp_qepilogue ep;
} fast_qconv8;

static void fast_qconv8_destroy(void *p) {
  fast_qconv8 *f = p;
  if (!f) return;
  nnp_aligned_free(f->apack);
  nnp_free(f->mult);
  nnp_free(f->bias);
  nnp_free(f);
}

typedef struct im2col8_job {
  const fast_qconv8 *f;
  const uint8_t *x;
  uint8_t *bp;
  bool runs_ok; /* AVX-512BW: nnp_qim2col4_runs_avx512 */
} im2col8_job;

static void im2col8_range(void *p, int64_t q0, int64_t q1) {
  const im2col8_job *j = p;
  const fast_qconv8 *f = j->f;
  const nnp_conv2d_desc *d = &f->d;
  int64_t K4 = f->K / 4, khw = d->kh * d->kw, plane = d->h * d->w;
  for (int64_t q = q0; q < q1; q++) {
    uint8_t *panel = j->bp + q * NNP_QGEMM_NR * 4 * K4;
    int64_t iy0[NNP_QGEMM_NR], ix0[NNP_QGEMM_NR];
    int nc = 0;
    for (int c = 0; c < NNP_QGEMM_NR; c++) {
      int64_t n = q * NNP_QGEMM_NR + c;
      if (n < f->N) nc = c + 1;
      iy0[c] = n < f->N ? (n / d->ow) * d->sh - d->ph : 0;
      ix0[c] = n < f->N ? (n % d->ow) * d->sw - d->pw : 0;
    }
    for (int64_t tap = 0; tap < khw; tap++) {
      int64_t dy = (tap / d->kw) * d->dh, dx = (tap % d->kw) * d->dw;
      int64_t off[NNP_QGEMM_NR];
      bool in[NNP_QGEMM_NR], all = nc == NNP_QGEMM_NR, contig;
      for (int c = 0; c < NNP_QGEMM_NR; c++) {
        int64_t iy = iy0[c] + dy, ix = ix0[c] + dx;
        in[c] = c < nc && iy >= 0 && iy < d->h && ix >= 0 && ix < d->w;
        off[c] = in[c] ? iy * d->w + ix : 0;
        all = all && in[c];
      }
      contig = all;
      for (int c = 1; c < NNP_QGEMM_NR; c++) contig = contig && off[c] == off[0] + c;
      uint8_t *row = panel + (tap * f->c4 / 4) * NNP_QGEMM_NR * 4;
      if (contig) {
        nnp_qim2col4_avx2(j->x + off[0], plane, d->c, f->c4, row);
        continue;
      }
      /* the columns as runs of consecutive offsets (a wrap onto the next output row,
       * the padding): a few masked loads per channel where the AVX-512BW path has them */
      int64_t shift[4];
      uint16_t lanes[4];
      int runs = 0;
      for (int c = 0; c < NNP_QGEMM_NR && runs <= 4; c++) {
        if (!in[c]) continue;
        if (c > 0 && in[c - 1] && off[c] == off[c - 1] + 1) {
          lanes[runs - 1] |= (uint16_t)(1u << c);
          continue;
        }
        if (runs < 4) shift[runs] = off[c] - c, lanes[runs] = (uint16_t)(1u << c);
        runs++;
      }
      if (j->runs_ok && runs <= 4) nnp_qim2col4_runs_avx512(j->x, plane, d->c, f->c4, shift, lanes, runs, f->xzp, row);
      else nnp_qim2col4_gather_avx2(j->x, plane, d->c, f->c4, off, in, f->xzp, row);
    }
  }
}

static nnp_status fast_qconv8_run(void *p, nnp_op_ctx *ctx) {
  const fast_qconv8 *f = p;
  const nnp_conv2d_desc *d = &f->d;
  uint8_t *bp = ctx->scratch;
  const uint8_t *x = ctx->in[0]->data;
  uint8_t *y = ctx->out[0]->data;
  int64_t panels = (f->N + NNP_QGEMM_NR - 1) / NNP_QGEMM_NR;
  for (int64_t n = 0; n < d->n; n++) {
    im2col8_job j = {.f = f, .x = x + n * d->c * d->h * d->w, .bp = bp, .runs_ok = nnp_dispatch_isa(NNP_KF_QIM2COL) == NNP_ISA_AVX512};
    nnp_threadpool_run(ctx->pool, im2col8_range, &j, panels);
    nnp_qgemm4_packed(d->m, f->N, f->K, f->apack, bp, y + n * d->m * f->N, f->N, &f->ep, ctx->pool, true);
  }
  return NNP_OK;
}

static nnp_status prepare_u8(const nnp_op_ctx *ctx, const nnp_conv2d_desc *cd, nnp_fast_kernel *out) {
  const nnp_tensor *xs = ctx->in[1], *xz = ctx->in[2], *w = ctx->in[3], *ws = ctx->in[4], *ys = ctx->in[6],
                   *yz = ctx->in[7], *b = nnp_in(ctx, 8);
  int64_t M = cd->m, khw = cd->kh * cd->kw, K0 = cd->c * khw;
  fast_qconv8 *f = nnp_calloc(1, sizeof *f);
  if (!f) return nnp_error(NNP_ERR_NOMEM, "out of memory preparing QLinearConv");
  f->d = *cd;
  f->c4 = (cd->c + 3) & ~(int64_t)3;
  f->K = f->c4 * khw;
  f->N = cd->oh * cd->ow;
  f->xzp = ((const uint8_t *)xz->data)[0];
  f->apack = nnp_aligned_alloc(nnp_qgemm4_packed_a_bytes(M, f->K));
  f->mult = nnp_malloc((size_t)M * sizeof(float));
  f->bias = nnp_malloc((size_t)M * sizeof(int32_t));
  int8_t *wt = nnp_calloc((size_t)(M * f->K), 1);
  if (!f->apack || !f->mult || !f->bias || !wt) {
    nnp_free(wt);
    fast_qconv8_destroy(f);
    return nnp_error(NNP_ERR_NOMEM, "out of memory preparing QLinearConv");
  }
  const float *wsv = ws->data;
  const int8_t *wv = w->data;
  float xsv = *(const float *)xs->data, ysv = *(const float *)ys->data;
  bool ws_per = nnp_tensor_numel(ws) > 1;
  for (int64_t m = 0; m < M; m++) {
    f->mult[m] = xsv * wsv[ws_per ? m : 0] / ysv; /* the reference's float32 expression */
    int64_t sum = 0;
    for (int64_t ch = 0; ch < cd->c; ch++)
      for (int64_t tap = 0; tap < khw; tap++) {
        int8_t v = wv[m * K0 + ch * khw + tap];
        wt[m * f->K + tap * f->c4 + ch] = v;
        sum += v;
      }
    /* |sum| <= 127 * K and 255 * that fit int32 for K < 66000; checked by the caller */
    f->bias[m] = (b ? ((const int32_t *)b->data)[m] : 0) - (int32_t)(f->xzp * sum);
  }
  nnp_qgemm4_pack_a(M, f->K, wt, f->K, f->apack);
  nnp_free(wt);
  f->ep = (nnp_qepilogue){.bias = f->bias, .mult = f->mult, .zp = ((const uint8_t *)yz->data)[0], .qmin = 0,
                          .qmax = 255};
  const int64_t *cl = NULL;
  if (nnp_attr_ints(ctx->node, "nnperf_clamp", &cl) == 2 && cl[0] >= 0 && cl[1] <= 255 && cl[0] <= cl[1]) {
    f->ep.qmin = (int32_t)cl[0];
    f->ep.qmax = (int32_t)cl[1];
  }
  out->run = fast_qconv8_run;
  out->destroy = fast_qconv8_destroy;
  out->state = f;
  out->scratch_needed = nnp_qgemm4_packed_b_bytes(f->K, f->N) + 64;
  out->name = "qlinearconv.im2col.u8.avx512vnni";
  return NNP_OK;
}

/* Depthwise (group = C = M, one filter per channel) -> kernels/qdwconv.h. */
typedef struct fast_qdw {
  nnp_qdw_desc d;
  int64_t n;
  int16_t *w; /* c x kh*kw, weight zero point subtracted */
  float *mult;
  int32_t *bias, xzp;
  nnp_qepilogue ep;
  bool generic;
} fast_qdw;

static void fast_qdw_destroy(void *p) {
  fast_qdw *f = p;
  if (!f) return;
  nnp_free(f->w);
  nnp_free(f->mult);
  nnp_free(f->bias);
  nnp_free(f);
}

static nnp_status fast_qdw_run(void *p, nnp_op_ctx *ctx) {
  const fast_qdw *f = p;
  const nnp_qdw_desc *d = &f->d;
  const uint8_t *x = ctx->in[0]->data;
  uint8_t *y = ctx->out[0]->data;
  for (int64_t n = 0; n < f->n; n++)
    nnp_qdwconv(d, x + n * d->c * d->h * d->w, f->xzp, f->w, y + n * d->c * d->oh * d->ow, &f->ep, ctx->pool,
                f->generic);
  return NNP_OK;
}

static nnp_status prepare_depthwise(const nnp_op_ctx *ctx, const nnp_conv2d_desc *cd, bool generic,
                                    nnp_fast_kernel *out) {
  const nnp_tensor *xs = ctx->in[1], *xz = ctx->in[2], *w = ctx->in[3], *ws = ctx->in[4], *wz = ctx->in[5],
                   *ys = ctx->in[6], *yz = ctx->in[7], *b = nnp_in(ctx, 8);
  int64_t C = cd->c, khw = cd->kh * cd->kw;
  fast_qdw *f = nnp_calloc(1, sizeof *f);
  if (!f) return nnp_error(NNP_ERR_NOMEM, "out of memory preparing QLinearConv");
  f->d = (nnp_qdw_desc){.c = C, .h = cd->h, .w = cd->w, .oh = cd->oh, .ow = cd->ow, .kh = cd->kh, .kw = cd->kw,
                        .sh = cd->sh, .sw = cd->sw, .ph = cd->ph, .pw = cd->pw, .dh = cd->dh, .dw = cd->dw};
  f->n = cd->n;
  f->generic = nnp_dispatch_portable(NNP_KF_QDWCONV, generic);
  f->xzp = ((const uint8_t *)xz->data)[0];
  f->w = nnp_malloc((size_t)(C * khw) * sizeof(int16_t));
  f->mult = nnp_malloc((size_t)C * sizeof(float));
  if (b) f->bias = nnp_malloc((size_t)C * sizeof(int32_t));
  if (!f->w || !f->mult || (b && !f->bias)) {
    fast_qdw_destroy(f);
    return nnp_error(NNP_ERR_NOMEM, "out of memory preparing QLinearConv");
  }
  const float *wsv = ws->data;
  float xsv = *(const float *)xs->data, ysv = *(const float *)ys->data;
  bool ws_per = nnp_tensor_numel(ws) > 1, wz_per = nnp_tensor_numel(wz) > 1;
  const int8_t *wv = w->data;
  for (int64_t m = 0; m < C; m++) {
    f->mult[m] = xsv * wsv[ws_per ? m : 0] / ysv; /* the reference's float32 expression */
    int32_t zp = ((const int8_t *)wz->data)[wz_per ? m : 0];
    for (int64_t t = 0; t < khw; t++) f->w[m * khw + t] = (int16_t)(wv[m * khw + t] - zp);
  }
  if (b) memcpy(f->bias, b->data, (size_t)C * sizeof(int32_t));
  f->ep = (nnp_qepilogue){.bias = f->bias, .mult = f->mult, .zp = ((const uint8_t *)yz->data)[0], .qmin = 0,
                          .qmax = 255};
  const int64_t *cl = NULL;
  if (nnp_attr_ints(ctx->node, "nnperf_clamp", &cl) == 2 && cl[0] >= 0 && cl[1] <= 255 && cl[0] <= cl[1]) {
    f->ep.qmin = (int32_t)cl[0];
    f->ep.qmax = (int32_t)cl[1];
  }
  out->run = fast_qdw_run;
  out->destroy = fast_qdw_destroy;
  out->state = f;
  out->name = f->generic                       ? "qlinearconv.depthwise.generic"
              : nnp_dispatch_isa(NNP_KF_QDWCONV) == NNP_ISA_AVX512_VNNI ? "qlinearconv.depthwise.avx512vnni"
                                               : "qlinearconv.depthwise.avx2";
  return NNP_OK;
}

nnp_status nnp_prepare_qlinear_conv(const nnp_op_ctx *ctx, bool generic, nnp_fast_kernel *out) {
  memset(out, 0, sizeof *out);
  if (ctx->n_in < 8) return NNP_OK;
  const nnp_tensor *x = ctx->in[0], *xs = ctx->in[1], *xz = ctx->in[2], *w = ctx->in[3], *ws = ctx->in[4],
                   *wz = ctx->in[5], *ys = ctx->in[6], *yz = ctx->in[7], *b = nnp_in(ctx, 8);
  const nnp_tensor *y = ctx->out[0];
  if (!x || !w || !xs || !xz || !ws || !wz || !ys || !yz) return NNP_OK;
  if (x->dtype != NNP_U8 || x->rank != 4 || w->dtype != NNP_I8 || w->rank != 4 || !w->data) return NNP_OK;
  int64_t M = y->dims[1];
  if (!const_param(xs, NNP_F32, 0) || !const_param(xz, NNP_U8, 0) || !const_param(ys, NNP_F32, 0) ||
      !const_param(yz, NNP_U8, 0) || !const_param(ws, NNP_F32, M) || !const_param(wz, NNP_I8, M))
    return NNP_OK;
  if (b && (!b->data || b->dtype != NNP_I32 || nnp_tensor_numel(b) != M)) return NNP_OK;
  int64_t group = nnp_attr_int(ctx->node, "group", 1);
  bool depthwise = group > 1 && group == x->dims[1] && M == group && w->dims[1] == 1;
  if (group != 1 && !depthwise) return NNP_OK;
  nnp_conv2d_desc d = {.n = x->dims[0], .c = x->dims[1], .h = x->dims[2], .w = x->dims[3], .m = M,
                       .oh = y->dims[2], .ow = y->dims[3], .kh = w->dims[2], .kw = w->dims[3], .group = 1};
  bool window_ok;
  NNP_TRY(nnp_conv2d_read_window(ctx->node, &d, &window_ok));
  if (!window_ok) return NNP_OK;
  if (nnp_tensor_numel(x) == 0 || nnp_tensor_numel(y) == 0 || (!depthwise && w->dims[1] != d.c)) return NNP_OK;
  if (depthwise) return prepare_depthwise(ctx, &d, generic, out);
  if (!generic && nnp_qgemm_best_isa() == NNP_QGEMM_VNNI && d.c * d.kh * d.kw < 60000) {
    bool sym = true; /* every weight zero point 0: the u8 x s8 layout applies */
    for (int64_t k = 0; k < nnp_tensor_numel(wz); k++) sym = sym && ((const int8_t *)wz->data)[k] == 0;
    if (sym) return prepare_u8(ctx, &d, out);
  }

  fast_qconv *f = nnp_calloc(1, sizeof *f);
  if (!f) return nnp_error(NNP_ERR_NOMEM, "out of memory preparing QLinearConv");
  f->d = d;
  f->cp = (d.c + 1) & ~(int64_t)1;
  f->K = f->cp * d.kh * d.kw;
  f->N = d.oh * d.ow;
  f->generic = nnp_dispatch_portable(NNP_KF_QGEMM, generic);
  f->isa = f->generic ? NNP_QGEMM_GENERIC : nnp_qgemm_best_isa();
  f->xzp = ((const uint8_t *)xz->data)[0];
  f->apack = nnp_aligned_alloc(nnp_qgemm_packed_a_elems(M, f->K) * sizeof(int16_t));
  f->mult = nnp_malloc((size_t)M * sizeof(float));
  int32_t *wzp = nnp_malloc((size_t)M * sizeof(int32_t));
  if (b) f->bias = nnp_malloc((size_t)M * sizeof(int32_t));
  if (!f->apack || !f->mult || !wzp || (b && !f->bias)) {
    nnp_free(wzp);
    fast_qconv_destroy(f);
    return nnp_error(NNP_ERR_NOMEM, "out of memory preparing QLinearConv");
  }
  const float *wsv = ws->data;
  float xsv = *(const float *)xs->data, ysv = *(const float *)ys->data;
  bool ws_per = nnp_tensor_numel(ws) > 1, wz_per = nnp_tensor_numel(wz) > 1;
  for (int64_t m = 0; m < M; m++) {
    /* the same float32 expression as the reference: sa * sb / ys */
    f->mult[m] = xsv * wsv[ws_per ? m : 0] / ysv;
    wzp[m] = ((const int8_t *)wz->data)[wz_per ? m : 0];
  }
  if (b) memcpy(f->bias, b->data, (size_t)M * sizeof(int32_t));
  /* K channel-innermost (k = tap*C + ch), as im2col_range writes B */
  int8_t *wt = nnp_malloc((size_t)(M * f->K));
  int64_t khw = d.kh * d.kw, K0 = d.c * khw;
  if (!wt) {
    nnp_free(wzp);
    fast_qconv_destroy(f);
    return nnp_error(NNP_ERR_NOMEM, "out of memory preparing QLinearConv");
  }
  const int8_t *wv = w->data;
  for (int64_t m = 0; m < M; m++)
    for (int64_t ch = 0; ch < f->cp; ch++) /* the phantom channel's weight is the zero point: 0 once packed */
      for (int64_t tap = 0; tap < khw; tap++)
        wt[m * f->K + tap * f->cp + ch] = ch < d.c ? wv[m * K0 + ch * khw + tap] : (int8_t)wzp[m];
  nnp_qgemm_pack_a(M, f->K, wt, f->K, wzp, f->apack);
  nnp_free(wt);
  nnp_free(wzp);
  f->ep = (nnp_qepilogue){.bias = f->bias, .mult = f->mult, .zp = ((const uint8_t *)yz->data)[0], .qmin = 0,
                          .qmax = 255};
  const int64_t *cl = NULL; /* a fused Relu / Clip (fuse-qdq): the reference clamps the same way */
  if (nnp_attr_ints(ctx->node, "nnperf_clamp", &cl) == 2 && cl[0] >= 0 && cl[1] <= 255 && cl[0] <= cl[1]) {
    f->ep.qmin = (int32_t)cl[0];
    f->ep.qmax = (int32_t)cl[1];
  }
  out->run = fast_qconv_run;
  out->destroy = fast_qconv_destroy;
  out->state = f;
  out->scratch_needed = nnp_qgemm_packed_b_elems(f->K, f->N) * sizeof(int16_t) + 64;
  out->name = f->isa == NNP_QGEMM_VNNI   ? "qlinearconv.im2col.avx512vnni"
              : f->isa == NNP_QGEMM_AVX2 ? "qlinearconv.im2col.avx2"
                                         : "qlinearconv.im2col.generic";
  return NNP_OK;
}
