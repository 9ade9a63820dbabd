/* The blocked-layout internal ops (ops/internal_ops.h), made only by the blocked-layout
 * pass (ir/passes/blocked_layout.c):
 *
 *  - ToBlocked(X): NCHW float32 -> N x ceil(C/16) x H x W x 16, padded channels zero;
 *  - FromBlocked(X), attribute `channels` (the real C): the inverse;
 *  - BlockedConv(X, W, [B], [R]): FusedConv (same attributes and epilogue) on blocked X
 *    and R, blocked Y; W and B stay in ONNX layout (the fast kernel packs them). With
 *    attribute `nchw_input` 1, X is plain NCHW (a network input with at most
 *    NNP_BCONV_NCHW_MAX_C channels, kernels/blocked_conv_nchw_in.h): no ToBlocked before it;
 *  - BlockedMaxPool(X), MaxPool's attributes plus `channels`: MaxPool on blocked X and Y
 *    (no Indices output).
 *
 * BlockedConv's reference kernel unblocks X and R, runs FusedConv's reference kernel and
 * reblocks Y (BlockedMaxPool likewise with MaxPool's), so the blocked kernels are checked against the same oracle as every other
 * convolution, and the pass changes no output bit on the reference kernels. */
#include <string.h>

#include "kernels/blocked_conv.h"
#include "kernels/blocked_conv_nchw_in.h"
#include "kernels/blocked_pool.h"
#include "kernels/dispatch.h"
#include "nnperf/alloc.h"
#include "ops/conv_desc.h"
#include "ops/fast_ops.h"
#include "ops/internal_ops.h"
#include "ops/op_util.h"

static size_t align64(size_t n) { return (n + 63) & ~(size_t)63; }

static bool is_blocked(const nnp_tensor *t) { return t->dtype == NNP_F32 && t->rank == 5 && t->dims[4] == NNP_BLOCK; }

/* The NCHW shape of a blocked tensor with c real channels (data NULL). */
static nnp_tensor unblocked_shape(const nnp_tensor *t, int64_t c) {
  nnp_tensor u = {.dtype = NNP_F32, .rank = 4, .dims = {t->dims[0], c, t->dims[2], t->dims[3]}};
  return u;
}

static nnp_tensor blocked_shape(const nnp_tensor *t) {
  nnp_tensor b = {.dtype = NNP_F32, .rank = 5, .dims = {t->dims[0], nnp_blocks(t->dims[1]), t->dims[2], t->dims[3], NNP_BLOCK}};
  return b;
}

/* ---- ToBlocked / FromBlocked ---- */

static nnp_status infer_to_blocked(nnp_op_ctx *ctx) {
  const nnp_tensor *x = ctx->in[0];
  if (x->dtype != NNP_F32 || x->rank != 4) return nnp_error(NNP_ERR_UNSUPPORTED, "ToBlocked takes NCHW float32");
  const nnp_tensor b = blocked_shape(x);
  nnp_set_shape(ctx->out[0], NNP_F32, b.rank, b.dims);
  return NNP_OK;
}

static nnp_status ref_to_blocked(nnp_op_ctx *ctx) {
  const nnp_tensor *x = ctx->in[0];
  nnp_nchw_to_blocked(x->data, ctx->out[0]->data, x->dims[0], x->dims[1], x->dims[2] * x->dims[3], NULL);
  return NNP_OK;
}

static nnp_status infer_from_blocked(nnp_op_ctx *ctx) {
  const nnp_tensor *x = ctx->in[0];
  const int64_t c = nnp_attr_int(ctx->node, "channels", -1);
  if (!is_blocked(x) || c < 1 || nnp_blocks(c) != x->dims[1])
    return nnp_error(NNP_ERR_SHAPE, "FromBlocked: input is not NCHW16c with %lld channels", (long long)c);
  const nnp_tensor u = unblocked_shape(x, c);
  nnp_set_shape(ctx->out[0], NNP_F32, u.rank, u.dims);
  return NNP_OK;
}

static nnp_status ref_from_blocked(nnp_op_ctx *ctx) {
  const nnp_tensor *y = ctx->out[0];
  nnp_blocked_to_nchw(ctx->in[0]->data, y->data, y->dims[0], y->dims[1], y->dims[2] * y->dims[3], NULL);
  return NNP_OK;
}

/* The reorders' fast kernels: the same code split over the plan's threads. */
static nnp_status run_to_blocked(void *state, nnp_op_ctx *ctx) {
  (void)state;
  const nnp_tensor *x = ctx->in[0];
  nnp_nchw_to_blocked(x->data, ctx->out[0]->data, x->dims[0], x->dims[1], x->dims[2] * x->dims[3], ctx->pool);
  return NNP_OK;
}

static nnp_status run_from_blocked(void *state, nnp_op_ctx *ctx) {
  (void)state;
  const nnp_tensor *y = ctx->out[0];
  nnp_blocked_to_nchw(ctx->in[0]->data, y->data, y->dims[0], y->dims[1], y->dims[2] * y->dims[3], ctx->pool);
  return NNP_OK;
}

static nnp_status prepare_reorder(const nnp_op_ctx *ctx, bool generic, nnp_fast_kernel *out) {
  (void)generic;
  memset(out, 0, sizeof *out);
  const bool to = ctx->node->op == NNP_OP_TO_BLOCKED;
  out->run = to ? run_to_blocked : run_from_blocked;
  out->name = to ? "reorder.to_nchw16c" : "reorder.from_nchw16c";
  return NNP_OK;
}

/* ---- BlockedConv ---- */

/* The FusedConv this node stands for, on NCHW tensors: x's NCHW shape (real channels from
 * W: C = W.dims[1] * group), inputs W and B as given, no residual (checked apart). */
typedef struct nchw_view {
  nnp_tensor x, y, r;
  const nnp_tensor *in[4];
  nnp_tensor *out[1];
  nnp_op_ctx ctx;
} nchw_view;

static bool nchw_input(const nnp_op_ctx *ctx) { return nnp_attr_int(ctx->node, "nchw_input", 0) != 0; }

static nnp_status make_view(const nnp_op_ctx *ctx, nchw_view *v) {
  const nnp_tensor *x = ctx->in[0], *w = ctx->in[1];
  const bool plain = nchw_input(ctx);
  if (!(plain ? x->dtype == NNP_F32 && x->rank == 4 : is_blocked(x)) || w->dtype != NNP_F32 || w->rank != 4)
    return nnp_error(NNP_ERR_UNSUPPORTED, "BlockedConv takes %s float32 X and 4-D float32 W",
                     plain ? "NCHW" : "NCHW16c");
  const int64_t group = nnp_attr_int(ctx->node, "group", 1);
  const int64_t c = w->dims[1] * group;
  if (group < 1 || (plain ? x->dims[1] != c : nnp_blocks(c) != x->dims[1]))
    return nnp_error(NNP_ERR_SHAPE, "BlockedConv: X has %lld channel%s, W wants %lld channels",
                     (long long)x->dims[1], plain ? "s" : " blocks", (long long)c);
  memset(v, 0, sizeof *v);
  v->x = plain ? *x : unblocked_shape(x, c);
  v->in[0] = &v->x;
  v->in[1] = w;
  v->in[2] = nnp_in(ctx, 2);
  v->in[3] = NULL;
  v->out[0] = &v->y;
  v->ctx = *ctx;
  v->ctx.in = v->in;
  v->ctx.n_in = ctx->n_in < 3 ? ctx->n_in : 3;
  v->ctx.out = v->out;
  v->ctx.n_out = 1;
  return NNP_OK;
}

static nnp_status infer_blocked_conv(nnp_op_ctx *ctx) {
  nchw_view v;
  NNP_TRY(make_view(ctx, &v));
  NNP_TRY(nnp_op_fused_conv.infer(&v.ctx));
  const nnp_tensor yb = blocked_shape(&v.y);
  nnp_set_shape(ctx->out[0], NNP_F32, yb.rank, yb.dims);
  const nnp_tensor *r = nnp_in(ctx, 3);
  if (r && (r->dtype != NNP_F32 || !nnp_tensor_same_shape(r, ctx->out[0])))
    return nnp_error(NNP_ERR_SHAPE, "BlockedConv: the residual must have the output's type and shape");
  /* the reference kernel's NCHW copies of X (unless X is NCHW already), Y and R, then
   * FusedConv's own scratch */
  const size_t xy = (nchw_input(ctx) ? 0 : align64(nnp_tensor_nbytes(&v.x))) + align64(nnp_tensor_nbytes(&v.y));
  ctx->scratch_needed = xy + (r ? align64(nnp_tensor_nbytes(&v.y)) : 0) + v.ctx.scratch_needed;
  return NNP_OK;
}

static nnp_status ref_blocked_conv(nnp_op_ctx *ctx) {
  nchw_view v;
  NNP_TRY(make_view(ctx, &v));
  nnp_tensor *yb = ctx->out[0];
  const nnp_tensor *rb = nnp_in(ctx, 3);
  v.y = unblocked_shape(yb, v.in[1]->dims[0]);
  char *s = ctx->scratch;
  size_t used = 0;
  const int64_t hw = v.x.dims[2] * v.x.dims[3], ohw = v.y.dims[2] * v.y.dims[3];
  if (!nchw_input(ctx)) {
    v.x.data = s + used;
    used += align64(nnp_tensor_nbytes(&v.x));
    nnp_blocked_to_nchw(ctx->in[0]->data, v.x.data, v.x.dims[0], v.x.dims[1], hw, NULL);
  }
  v.y.data = s + used;
  used += align64(nnp_tensor_nbytes(&v.y));
  if (rb) {
    v.r = v.y;
    v.r.data = s + used;
    used += align64(nnp_tensor_nbytes(&v.y));
    nnp_blocked_to_nchw(rb->data, v.r.data, v.y.dims[0], v.y.dims[1], ohw, NULL);
    v.in[3] = &v.r;
    v.ctx.n_in = 4;
  }
  if (used > ctx->scratch_size) return nnp_error(NNP_ERR_INTERNAL, "BlockedConv: scratch too small");
  v.ctx.scratch = s + used;
  v.ctx.scratch_size = ctx->scratch_size - used;
  NNP_TRY(nnp_op_fused_conv.ref(&v.ctx));
  nnp_nchw_to_blocked(v.y.data, yb->data, v.y.dims[0], v.y.dims[1], ohw, NULL);
  return NNP_OK;
}

/* ---- BlockedConv's fast kernel: kernels/blocked_conv.h ---- */

static nnp_status run_blocked_conv(void *state, nnp_op_ctx *ctx) {
  const nnp_tensor *r = nnp_in(ctx, 3);
  nnp_bconv_run(state, ctx->in[0]->data, ctx->out[0]->data, r ? r->data : NULL, ctx->scratch, ctx->pool);
  return NNP_OK;
}

static void destroy_blocked_conv(void *state) { nnp_bconv_destroy(state); }

static nnp_status run_blocked_conv_nchw(void *state, nnp_op_ctx *ctx) {
  const nnp_tensor *r = nnp_in(ctx, 3);
  nnp_bconv_nchw_run(state, ctx->in[0]->data, ctx->out[0]->data, r ? r->data : NULL, ctx->pool);
  return NNP_OK;
}

static void destroy_blocked_conv_nchw(void *state) { nnp_bconv_nchw_destroy(state); }

static nnp_status prepare_blocked_conv(const nnp_op_ctx *ctx, bool generic, nnp_fast_kernel *out) {
  memset(out, 0, sizeof *out);
  const nnp_tensor *x = ctx->in[0], *w = ctx->in[1], *b = nnp_in(ctx, 2), *y = ctx->out[0];
  if (!w->data || (b && !b->data) || nnp_tensor_numel(x) == 0 || nnp_tensor_numel(y) == 0) return NNP_OK;
  nnp_act act;
  float lo, hi;
  NNP_TRY(nnp_fused_activation(ctx->node, &act, &lo, &hi));
  nnp_conv2d_desc d = {.n = x->dims[0], .h = x->dims[2], .w = x->dims[3], .m = w->dims[0], .oh = y->dims[2],
                       .ow = y->dims[3], .kh = w->dims[2], .kw = w->dims[3]};
  d.group = nnp_attr_int(ctx->node, "group", 1);
  d.c = w->dims[1] * d.group;
  if (d.group < 1 || !nnp_bconv_groups_fit(&d)) return NNP_OK; /* groups not of whole blocks: the reference */
  bool window_ok;
  NNP_TRY(nnp_conv2d_read_window(ctx->node, &d, &window_ok));
  if (!window_ok) return NNP_OK;
  if (nchw_input(ctx)) { /* the pass only asks for it where the kernel takes it */
    if (d.group != 1 || d.c > NNP_BCONV_NCHW_MAX_C) return NNP_OK;
    nnp_bconv_nchw_kernel *kn = NULL;
    NNP_TRY(nnp_bconv_nchw_prepare(&d, w->data, b ? b->data : NULL, act, lo, hi, generic, &kn));
    out->run = run_blocked_conv_nchw;
    out->destroy = destroy_blocked_conv_nchw;
    out->state = kn;
    out->name = kn->generic ? "conv2d.blocked_nchw_in.generic"
                : kn->avx2  ? "conv2d.blocked_nchw_in.avx2"
                            : "conv2d.blocked_nchw_in.avx512";
    return NNP_OK;
  }
  nnp_bconv_kernel *k = NULL;
  NNP_TRY(nnp_bconv_prepare(&d, w->data, b ? b->data : NULL, act, lo, hi, generic, &k));
  /* [depthwise][generic, avx2, avx512] */
  static const char *names[2][3] = {{"conv2d.blocked.generic", "conv2d.blocked.avx2", "conv2d.blocked.avx512"},
                                    {"conv2d.blocked_dw.generic", "conv2d.blocked_dw.avx2", "conv2d.blocked_dw.avx512"}};
  const int tiles = nnp_bconv_generic(k) ? 0 : nnp_bconv_avx2(k) ? 1 : 2;
  out->run = run_blocked_conv;
  out->destroy = destroy_blocked_conv;
  out->state = k;
  out->scratch_needed = nnp_bconv_scratch_bytes(k);
  out->name = nnp_bconv_winograd(k) ? "conv2d.blocked_winograd.avx512"
                                     : names[nnp_bconv_depthwise(k)][tiles];
  return NNP_OK;
}

/* ---- BlockedMaxPool ---- */

static nnp_status pool_view(const nnp_op_ctx *ctx, nchw_view *v) {
  const nnp_tensor *x = ctx->in[0];
  const int64_t c = nnp_attr_int(ctx->node, "channels", -1);
  if (!is_blocked(x) || c < 1 || nnp_blocks(c) != x->dims[1])
    return nnp_error(NNP_ERR_SHAPE, "%s: input is not NCHW16c with %lld channels", ctx->node->op_type, (long long)c);
  memset(v, 0, sizeof *v);
  v->x = unblocked_shape(x, c);
  v->in[0] = &v->x;
  v->out[0] = &v->y;
  v->ctx = *ctx;
  v->ctx.in = v->in;
  v->ctx.n_in = 1;
  v->ctx.out = v->out;
  v->ctx.n_out = 1;
  return NNP_OK;
}

/* BlockedMaxPool's and BlockedAveragePool's shape: the NCHW op's (nchw) on the view */
static nnp_status infer_blocked_pool(nnp_op_ctx *ctx, const nnp_op_info *nchw) {
  nchw_view v;
  NNP_TRY(pool_view(ctx, &v));
  NNP_TRY(nchw->infer(&v.ctx));
  if (v.y.rank != 4) return nnp_error(NNP_ERR_UNSUPPORTED, "%s: 2-D only", ctx->node->op_type);
  const nnp_tensor yb = blocked_shape(&v.y);
  nnp_set_shape(ctx->out[0], NNP_F32, yb.rank, yb.dims);
  ctx->scratch_needed =
      align64(nnp_tensor_nbytes(&v.x)) + align64(nnp_tensor_nbytes(&v.y)) + v.ctx.scratch_needed;
  return NNP_OK;
}

static nnp_status infer_blocked_max_pool(nnp_op_ctx *ctx) { return infer_blocked_pool(ctx, &nnp_op_max_pool); }
static nnp_status infer_blocked_avg_pool(nnp_op_ctx *ctx) { return infer_blocked_pool(ctx, &nnp_op_average_pool); }

/* the reference: the NCHW op's reference between the reorders, in scratch */
static nnp_status ref_blocked_pool(nnp_op_ctx *ctx, const nnp_op_info *nchw) {
  nchw_view v;
  NNP_TRY(pool_view(ctx, &v));
  nnp_tensor *yb = ctx->out[0];
  v.y = unblocked_shape(yb, v.x.dims[1]);
  char *s = ctx->scratch;
  const size_t nx = align64(nnp_tensor_nbytes(&v.x)), used = nx + align64(nnp_tensor_nbytes(&v.y));
  if (used > ctx->scratch_size) return nnp_error(NNP_ERR_INTERNAL, "%s: scratch too small", ctx->node->op_type);
  v.x.data = s;
  v.y.data = s + nx;
  nnp_blocked_to_nchw(ctx->in[0]->data, v.x.data, v.x.dims[0], v.x.dims[1], v.x.dims[2] * v.x.dims[3], NULL);
  v.ctx.scratch = s + used;
  v.ctx.scratch_size = ctx->scratch_size - used;
  NNP_TRY(nchw->ref(&v.ctx));
  nnp_nchw_to_blocked(v.y.data, yb->data, v.y.dims[0], v.y.dims[1], v.y.dims[2] * v.y.dims[3], NULL);
  return NNP_OK;
}

static nnp_status ref_blocked_max_pool(nnp_op_ctx *ctx) { return ref_blocked_pool(ctx, &nnp_op_max_pool); }
static nnp_status ref_blocked_avg_pool(nnp_op_ctx *ctx) { return ref_blocked_pool(ctx, &nnp_op_average_pool); }

/* BlockedMaxPool's and BlockedAveragePool's fast kernel: the window (a.p; the average's
 * end pads and divisor rule) and which pool */
typedef struct blocked_pool_state {
  nnp_avgpool2d_desc a;
  bool average, generic;
} blocked_pool_state;

static nnp_status run_blocked_pool(void *state, nnp_op_ctx *ctx) {
  const blocked_pool_state *s = state;
  if (s->average) nnp_avgpool2d_blocked(&s->a, ctx->in[0]->data, ctx->out[0]->data, s->generic, ctx->pool);
  else nnp_maxpool2d_blocked(&s->a.p, ctx->in[0]->data, ctx->out[0]->data, s->generic, ctx->pool);
  return NNP_OK;
}

/* The fast kernels take what nnp_prepare_pool's 2-D MaxPool and AveragePool take: no
 * dilation, explicit or VALID padding; anything else stays on the reference. */
static nnp_status prepare_blocked_pool(const nnp_op_ctx *ctx, bool generic, bool average, nnp_fast_kernel *out) {
  memset(out, 0, sizeof *out);
  const nnp_tensor *x = ctx->in[0], *y = ctx->out[0];
  if (nnp_tensor_numel(x) == 0 || nnp_tensor_numel(y) == 0) return NNP_OK;
  nnp_avgpool2d_desc a = {.p = {.planes = x->dims[0] * x->dims[1], .h = x->dims[2], .w = x->dims[3],
                                .oh = y->dims[2], .ow = y->dims[3]}};
  bool ok;
  if (average) NNP_TRY(nnp_avgpool2d_window(ctx->node, &a, &ok));
  else NNP_TRY(nnp_maxpool2d_window(ctx->node, &a.p, &ok));
  if (!ok) return NNP_OK;
  blocked_pool_state *state = nnp_malloc(sizeof *state);
  if (!state) return nnp_error(NNP_ERR_NOMEM, "out of memory preparing %s", ctx->node->op_type);
  const nnp_isa pick = nnp_dispatch_pick(NNP_KF_BLOCKED_POOL, generic); /* the rows nnp_*pool2d_blocked run */
  *state = (blocked_pool_state){.a = a, .average = average, .generic = pick == NNP_ISA_GENERIC};
  /* [average][generic, avx2, avx512], as the conv's names */
  static const char *const names[2][3] = {
      {"pool.max2d.blocked.generic", "pool.max2d.blocked.avx2", "pool.max2d.blocked.avx512"},
      {"pool.avg2d.blocked.generic", "pool.avg2d.blocked.avx2", "pool.avg2d.blocked.avx512"}};
  const int rows = pick == NNP_ISA_GENERIC ? 0 : pick == NNP_ISA_AVX2 ? 1 : 2;
  out->run = run_blocked_pool;
  out->destroy = nnp_free;
  out->state = state;
  out->name = names[average][rows];
  return NNP_OK;
}

static nnp_status prepare_blocked_max_pool(const nnp_op_ctx *ctx, bool generic, nnp_fast_kernel *out) {
  return prepare_blocked_pool(ctx, generic, false, out);
}
static nnp_status prepare_blocked_avg_pool(const nnp_op_ctx *ctx, bool generic, nnp_fast_kernel *out) {
  return prepare_blocked_pool(ctx, generic, true, out);
}

/* ---- BlockedGlobalAveragePool: blocked X, NCHW Y ---- */

static nnp_status infer_blocked_gap(nnp_op_ctx *ctx) {
  nchw_view v;
  NNP_TRY(pool_view(ctx, &v));
  NNP_TRY(nnp_op_global_average_pool.infer(&v.ctx));
  nnp_set_shape(ctx->out[0], NNP_F32, v.y.rank, v.y.dims);
  ctx->scratch_needed = align64(nnp_tensor_nbytes(&v.x)) + v.ctx.scratch_needed;
  return NNP_OK;
}

static nnp_status ref_blocked_gap(nnp_op_ctx *ctx) {
  nchw_view v;
  NNP_TRY(pool_view(ctx, &v));
  const size_t nx = align64(nnp_tensor_nbytes(&v.x));
  if (nx > ctx->scratch_size) return nnp_error(NNP_ERR_INTERNAL, "BlockedGlobalAveragePool: scratch too small");
  v.x.data = ctx->scratch;
  nnp_blocked_to_nchw(ctx->in[0]->data, v.x.data, v.x.dims[0], v.x.dims[1], v.x.dims[2] * v.x.dims[3], NULL);
  v.ctx.out = ctx->out; /* Y is NCHW already */
  v.ctx.scratch = (char *)ctx->scratch + nx;
  v.ctx.scratch_size = ctx->scratch_size - nx;
  return nnp_op_global_average_pool.ref(&v.ctx);
}

static nnp_status run_blocked_gap(void *state, nnp_op_ctx *ctx) {
  (void)state;
  const nnp_tensor *x = ctx->in[0];
  nnp_global_avgpool_blocked(x->dims[0], nnp_attr_int(ctx->node, "channels", 0), x->dims[2] * x->dims[3], x->data,
                             ctx->out[0]->data, ctx->pool);
  return NNP_OK;
}

/* One kernel for every CPU: a sum per lane in double, as the NCHW kernel's. */
static nnp_status prepare_blocked_gap(const nnp_op_ctx *ctx, bool generic, nnp_fast_kernel *out) {
  (void)generic;
  memset(out, 0, sizeof *out);
  if (nnp_tensor_numel(ctx->in[0]) == 0 || nnp_tensor_numel(ctx->out[0]) == 0) return NNP_OK;
  out->run = run_blocked_gap;
  out->name = "pool.global_avg.blocked";
  return NNP_OK;
}

const nnp_op_info nnp_op_to_blocked = {.name = "ToBlocked", .min_inputs = 1, .max_inputs = 1, .min_outputs = 1,
                                       .max_outputs = 1, .infer = infer_to_blocked, .ref = ref_to_blocked,
                                       .prepare = prepare_reorder};
const nnp_op_info nnp_op_from_blocked = {.name = "FromBlocked", .min_inputs = 1, .max_inputs = 1, .min_outputs = 1,
                                         .max_outputs = 1, .infer = infer_from_blocked, .ref = ref_from_blocked,
                                         .prepare = prepare_reorder};
const nnp_op_info nnp_op_blocked_conv = {.name = "BlockedConv", .min_inputs = 2, .max_inputs = 4,
                                         .min_outputs = 1, .max_outputs = 1, .infer = infer_blocked_conv,
                                         .ref = ref_blocked_conv, .prepare = prepare_blocked_conv};
const nnp_op_info nnp_op_blocked_max_pool = {.name = "BlockedMaxPool", .min_inputs = 1, .max_inputs = 1,
                                             .min_outputs = 1, .max_outputs = 1, .infer = infer_blocked_max_pool,
                                             .ref = ref_blocked_max_pool, .prepare = prepare_blocked_max_pool};
const nnp_op_info nnp_op_blocked_average_pool = {.name = "BlockedAveragePool", .min_inputs = 1, .max_inputs = 1,
                                                 .min_outputs = 1, .max_outputs = 1, .infer = infer_blocked_avg_pool,
                                                 .ref = ref_blocked_avg_pool, .prepare = prepare_blocked_avg_pool};
const nnp_op_info nnp_op_blocked_global_average_pool = {
    .name = "BlockedGlobalAveragePool", .min_inputs = 1, .max_inputs = 1, .min_outputs = 1, .max_outputs = 1,
    .infer = infer_blocked_gap, .ref = ref_blocked_gap, .prepare = prepare_blocked_gap};
