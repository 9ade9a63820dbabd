/* Conv and ConvTranspose (1D/2D/3D, groups, dilations, strides, pads, auto_pad).
 *
 * Both ops normalise their geometry to three spatial axes (ops/spatial.h): a 1D or 2D op
 * gets leading spatial axes of size 1 (kernel 1, stride 1, no padding), so one kernel
 * serves every rank and the per-rank code is only attribute parsing. Index 2 is always
 * the innermost (contiguous) axis.
 *
 * Reference kernels, written for clarity first and cache behaviour second:
 *  - Conv is im2col + GEMM (see conv_plan below): per image and group, a chunk of output
 *    rows is unfolded into a column matrix in scratch and multiplied by the group's
 *    weights with the reference GEMM (ops/gemm_ref.h, shared with MatMul and Gemm).
 *    1x1 convolutions with unit strides and no padding skip the unfolding. resnet50's
 *    convolutions take about a second on one core this way; a direct loop nest over
 *    output rows was several times slower, most of all on the 1x1 layers with small
 *    images (tests/ops/test_conv.c keeps a direct naive loop as the cross-check).
 *  - ConvTranspose scatters: for each (n, oc, ic, kd, kh, kw) and input row it adds
 *    w * x[iw] into y[iw*s + kw*d - pad] over the valid iw range (precomputed, so the
 *    inner loop has no bounds tests).
 * Types: float32 and float64. */
#include <string.h>

#include "ops/fast_ops.h"
#include "ops/gemm_ref.h"
#include "ops/op_util.h"
#include "ops/spatial.h"

/* Geometry shared by Conv and ConvTranspose. */
typedef struct conv_geom {
  nnp_window win;            /* spatial geometry, normalised to NNP_WINDOW_AXES slots */
  int64_t n, c, m, group;    /* batch, input channels, output channels, groups */
} conv_geom;

/* Sets up g->win (spatial rank g->win.nsp) from X's and W's spatial dims and reads
 * auto_pad, strides, dilations and pads; kernel_shape, which is optional here, must
 * match W's spatial dims. */
static nnp_status conv_read_window(const nnp_op_ctx *ctx, conv_geom *g, nnp_auto_pad *mode) {
  const nnp_tensor *x = ctx->in[0], *w = ctx->in[1];
  nnp_window *win = &g->win;
  const int nsp = win->nsp, off = NNP_WINDOW_AXES - nsp;
  nnp_window_init(win, nsp, x->dims + 2, w->dims + 2);
  NNP_TRY(nnp_read_auto_pad(ctx->node, mode));
  NNP_TRY(nnp_window_read_strides_dilations_pads(ctx->node, win));
  const int64_t *ks = NULL;
  int nk = nnp_attr_ints(ctx->node, "kernel_shape", &ks);
  if (nk > 0) {
    if (nk != nsp)
      return nnp_error(NNP_ERR_SHAPE, "attribute 'kernel_shape' has %d values, expected %d", nk, nsp);
    for (int i = 0; i < nsp; i++)
      if (ks[i] != win->k[off + i])
        return nnp_error(NNP_ERR_SHAPE, "attribute 'kernel_shape'[%d] = %lld but the weight has %lld",
                         i, (long long)ks[i], (long long)win->k[off + i]);
  }
  return NNP_OK;
}

/* Effective kernel extent (k-1)*d+1 along axis i. */
static nnp_status eff_kernel(const nnp_window *win, int i, int64_t *ek) {
  if (win->k[i] < 1) return nnp_error(NNP_ERR_SHAPE, "weight has a zero-size spatial dimension");
  if (nnp_kernel_extent_overflows(win->k[i], win->d[i], ek))
    return nnp_error(NNP_ERR_LIMIT, "kernel extent overflows (kernel %lld, dilation %lld)",
                     (long long)win->k[i], (long long)win->d[i]);
  return NNP_OK;
}

/* Common tensor checks; returns the op's spatial rank in *nsp. */
static nnp_status check_io(const nnp_op_ctx *ctx, int *nsp) {
  const nnp_tensor *x = ctx->in[0], *w = nnp_in(ctx, 1), *b = nnp_in(ctx, 2);
  if (!x || !w || !nnp_out(ctx, 0))
    return nnp_error(NNP_ERR_SHAPE, "inputs X and W and output Y are required");
  NNP_TRY(nnp_check_dtype(x, "input X", NNP_F32, NNP_F64, NNP_UNDEFINED));
  if (w->dtype != x->dtype || (b && b->dtype != x->dtype))
    return nnp_error(NNP_ERR_SHAPE, "W and B must have X's type %s", nnp_dtype_name(x->dtype));
  if (x->rank < 3 || x->rank > 2 + NNP_WINDOW_AXES)
    return nnp_error(NNP_ERR_UNSUPPORTED, "input X has rank %d; only 1D, 2D and 3D (rank 3..5) are supported",
                     x->rank);
  if (w->rank != x->rank)
    return nnp_error(NNP_ERR_SHAPE, "W has rank %d but X has rank %d", w->rank, x->rank);
  if (b && b->rank != 1) return nnp_error(NNP_ERR_SHAPE, "B must be 1-D, not rank %d", b->rank);
  *nsp = x->rank - 2;
  return NNP_OK;
}

static nnp_status set_output(nnp_op_ctx *ctx, const conv_geom *g) {
  const int nsp = g->win.nsp;
  int64_t dims[2 + NNP_WINDOW_AXES];
  dims[0] = g->n;
  dims[1] = g->m;
  for (int i = 0; i < nsp; i++) dims[2 + i] = g->win.out[NNP_WINDOW_AXES - nsp + i];
  size_t nb;
  NNP_TRY(nnp_shape_nbytes(ctx->in[0]->dtype, 2 + nsp, dims, &nb));
  nnp_set_shape(ctx->out[0], ctx->in[0]->dtype, 2 + nsp, dims);
  return NNP_OK;
}

/* ---------------------------------------------------------------------------------
 * Conv */

/* Conv runs as im2col + GEMM per (image, group): the column buffer holds, for a chunk
 * of output rows, one row per (ic, kd, kh, kw) tap with the input value each output
 * position of the chunk sees through that tap (0 in the padding). Then
 * Y_g[Mg x P] += W_g[Mg x Cg*K] * col[Cg*K x P], P = positions in the chunk.
 * Chunks are whole output rows, sized so the buffer stays near CONV_COL_BYTES; a
 * 1x1 convolution with unit strides and no padding needs no buffer (X is already the
 * column matrix). */
#define CONV_COL_BYTES ((size_t)4 << 20)

typedef struct conv_plan {
  bool direct;           /* 1x1, stride 1, no padding: GEMM straight on X */
  int64_t rows;          /* output rows (od, oh pairs) per chunk */
  size_t range_elems;    /* int64s of [ow_lo, ow_hi) per kw, before the column buffer */
  size_t col_elems;      /* column buffer elements */
} conv_plan;

static nnp_status conv_plan_of(const conv_geom *g, size_t es, conv_plan *p) {
  const nnp_window *win = &g->win;
  memset(p, 0, sizeof *p);
  p->direct = true;
  for (int i = 0; i < NNP_WINDOW_AXES; i++)
    if (win->k[i] != 1 || win->s[i] != 1 || win->pb[i] != 0 || win->pe[i] != 0) p->direct = false;
  p->range_elems = (size_t)(2 * win->k[2]);
  int64_t ckk, row, rows_total = win->out[0] * win->out[1];
  if (nnp_mul_overflows(g->c / g->group, win->k[0], &ckk) ||
      nnp_mul_overflows(ckk, win->k[1], &ckk) || nnp_mul_overflows(ckk, win->k[2], &ckk) ||
      nnp_mul_overflows(ckk, win->out[2], &row) || nnp_mul_overflows(row, (int64_t)es, &row) ||
      (uint64_t)row > NNP_TENSOR_MAX_BYTES)
    return nnp_error(NNP_ERR_LIMIT, "Conv working buffer for one output row is too large");
  if (p->direct || rows_total == 0 || row == 0) {
    p->rows = rows_total;
    return NNP_OK;
  }
  p->rows = (int64_t)(CONV_COL_BYTES / (size_t)row);
  if (p->rows < 1) p->rows = 1;
  if (p->rows > rows_total) p->rows = rows_total;
  p->col_elems = (size_t)(p->rows * row) / es;
  return NNP_OK;
}

static size_t conv_scratch_bytes(const conv_plan *p, size_t es) {
  return p->range_elems * sizeof(int64_t) + p->col_elems * es;
}

/* Validates Conv's inputs and attributes and derives the geometry. Called by infer
 * and again by the kernel (cheap), so both see exactly the same numbers. */
static nnp_status conv_parse(const nnp_op_ctx *ctx, conv_geom *g) {
  const nnp_tensor *x = ctx->in[0], *w = ctx->in[1], *b = nnp_in(ctx, 2);
  memset(g, 0, sizeof *g);
  NNP_TRY(check_io(ctx, &g->win.nsp));
  const int off = NNP_WINDOW_AXES - g->win.nsp;
  g->n = x->dims[0];
  g->c = x->dims[1];
  g->m = w->dims[0];
  g->group = nnp_attr_int(ctx->node, "group", 1);
  if (g->group < 1 || g->group > (g->c > 0 ? g->c : 1))
    return nnp_error(NNP_ERR_SHAPE, "attribute 'group' = %lld is invalid for %lld input channels",
                     (long long)g->group, (long long)g->c);
  int64_t cg;
  if (nnp_mul_overflows(w->dims[1], g->group, &cg) || cg != g->c)
    return nnp_error(NNP_ERR_SHAPE, "X has %lld channels but W expects %lld x group %lld",
                     (long long)g->c, (long long)w->dims[1], (long long)g->group);
  if (g->m % g->group != 0)
    return nnp_error(NNP_ERR_SHAPE, "W has %lld output channels, not a multiple of group %lld",
                     (long long)g->m, (long long)g->group);
  if (b && b->dims[0] != g->m)
    return nnp_error(NNP_ERR_SHAPE, "B has %lld values but there are %lld output channels",
                     (long long)b->dims[0], (long long)g->m);
  nnp_auto_pad mode = NNP_AUTO_PAD_NOTSET;
  NNP_TRY(conv_read_window(ctx, g, &mode));
  for (int i = off; i < NNP_WINDOW_AXES; i++) {
    int64_t ek = 0;
    NNP_TRY(eff_kernel(&g->win, i, &ek));
    NNP_TRY(nnp_window_out_size(&g->win, i, ek, mode, false));
  }
  return NNP_OK;
}

static nnp_status infer_conv(nnp_op_ctx *ctx) {
  conv_geom g;
  conv_plan p;
  NNP_TRY(conv_parse(ctx, &g));
  NNP_TRY(set_output(ctx, &g));
  size_t es = nnp_dtype_size(ctx->in[0]->dtype);
  NNP_TRY(conv_plan_of(&g, es, &p));
  ctx->scratch_needed = conv_scratch_bytes(&p, es);
  return NNP_OK;
}

#define DEFINE_CONV_KERNEL(SUF, T)                                                        \
  static void conv_kernel_##SUF(const conv_geom *g, const conv_plan *pl, const T *x,     \
                                const T *w, const T *b, T *y, void *scratch) {            \
    NNP_WINDOW_LOCALS(&g->win);                                                           \
    const int64_t KD = g->win.k[0], KH = g->win.k[1], KW = g->win.k[2];                   \
    const int64_t cg = g->c / g->group, mg = g->m / g->group;                             \
    const int64_t in_plane = ID * IH * IW, out_plane = OD * OH * OW;                      \
    const int64_t ckk = cg * KD * KH * KW, rows_total = OD * OH;                          \
    int64_t *rw = scratch;                                                                \
    T *col = (T *)(rw + pl->range_elems);                                                 \
    /* Per tap kw: the output columns whose input column is inside X. */                  \
    for (int64_t k = 0; k < KW; k++)                                                      \
      nnp_in_bounds_range(k * dw - pw, sw, OW, IW, &rw[2 * k], &rw[2 * k + 1]);           \
    for (int64_t n = 0; n < g->n; n++)                                                    \
      for (int64_t gi = 0; gi < g->group; gi++) {                                         \
        const T *xg = x + (n * g->c + gi * cg) * in_plane;                                \
        const T *wg = w + gi * mg * ckk;                                                  \
        T *yg = y + (n * g->m + gi * mg) * out_plane;                                     \
        for (int64_t oc = 0; oc < mg; oc++) {                                             \
          const T bias = b ? b[gi * mg + oc] : (T)0;                                      \
          for (int64_t i = 0; i < out_plane; i++) yg[oc * out_plane + i] = bias;          \
        }                                                                                 \
        if (pl->direct) {                                                                 \
          nnp_gemm_ref_##SUF(mg, out_plane, cg, wg, ckk, 1, xg, in_plane, yg, out_plane); \
          continue;                                                                       \
        }                                                                                 \
        for (int64_t r0 = 0; r0 < rows_total; r0 += pl->rows) {                           \
          const int64_t r1 = rows_total - r0 < pl->rows ? rows_total : r0 + pl->rows;     \
          const int64_t P = (r1 - r0) * OW;                                               \
          /* im2col: row q = ((ic*KD + kd)*KH + kh)*KW + kw of the column matrix. */      \
          T *cq = col;                                                                    \
          for (int64_t ic = 0; ic < cg; ic++)                                             \
            for (int64_t kd = 0; kd < KD; kd++)                                           \
              for (int64_t kh = 0; kh < KH; kh++)                                         \
                for (int64_t kw = 0; kw < KW; kw++, cq += P) {                            \
                  const int64_t lo = rw[2 * kw], hi = rw[2 * kw + 1], xoff = kw * dw - pw; \
                  for (int64_t r = r0; r < r1; r++) {                                     \
                    const int64_t id = (r / OH) * sd - pd + kd * dd;                      \
                    const int64_t ih = (r % OH) * sh - ph + kh * dh;                      \
                    T *c = cq + (r - r0) * OW;                                            \
                    if (id < 0 || id >= ID || ih < 0 || ih >= IH) {                       \
                      for (int64_t ow = 0; ow < OW; ow++) c[ow] = 0;                      \
                      continue;                                                           \
                    }                                                                     \
                    const T *xrow = xg + ic * in_plane + (id * IH + ih) * IW;             \
                    for (int64_t ow = 0; ow < lo; ow++) c[ow] = 0;                        \
                    for (int64_t ow = lo; ow < hi; ow++) c[ow] = xrow[ow * sw + xoff];    \
                    for (int64_t ow = hi > lo ? hi : lo; ow < OW; ow++) c[ow] = 0;        \
                  }                                                                       \
                }                                                                         \
          nnp_gemm_ref_##SUF(mg, P, ckk, wg, ckk, 1, col, P, yg + r0 * OW, out_plane);    \
        }                                                                                 \
      }                                                                                   \
  }

DEFINE_CONV_KERNEL(f32, float)
DEFINE_CONV_KERNEL(f64, double)

static nnp_status ref_conv(nnp_op_ctx *ctx) {
  conv_geom g;
  conv_plan p;
  NNP_TRY(conv_parse(ctx, &g));
  const nnp_tensor *x = ctx->in[0], *w = ctx->in[1], *b = nnp_in(ctx, 2);
  nnp_tensor *y = ctx->out[0];
  size_t es = nnp_dtype_size(x->dtype);
  NNP_TRY(conv_plan_of(&g, es, &p));
  if (ctx->scratch_size < conv_scratch_bytes(&p, es))
    return nnp_error(NNP_ERR_INTERNAL, "Conv scratch too small");
  if (x->dtype == NNP_F32)
    conv_kernel_f32(&g, &p, x->data, w->data, b ? b->data : NULL, y->data, ctx->scratch);
  else
    conv_kernel_f64(&g, &p, x->data, w->data, b ? b->data : NULL, y->data, ctx->scratch);
  return NNP_OK;
}

const nnp_op_info nnp_op_conv = {.name = "Conv", .min_inputs = 2, .max_inputs = 3,
                                 .min_outputs = 1, .max_outputs = 1,
                                 .infer = infer_conv, .ref = ref_conv, .prepare = nnp_prepare_conv};

/* ---------------------------------------------------------------------------------
 * ConvTranspose
 *
 * y[n, g*Mg+oc, o] += x[n, g*Cg+ic, i] * w[g*Cg+ic, oc, k]  where o = i*s - pb + k*d.
 * W is (C, M/group, k...). Output size, per axis:
 *   out = s*(in-1) + output_padding + (k-1)*d + 1 - pb - pe
 * or output_shape when given, in which case (and for SAME_*) the pads follow from it:
 *   total = s*(in-1) + output_padding + (k-1)*d + 1 - out
 *   SAME_UPPER: pb = total/2; otherwise pb = total - total/2 (ONNX spec text)
 * A negative total (output_shape larger than the full result) becomes extra zero
 * output at the end, as the conformance data expects. */

static nnp_status convt_geom(const nnp_op_ctx *ctx, conv_geom *g) {
  const nnp_tensor *x = ctx->in[0], *w = ctx->in[1];
  nnp_window *win = &g->win;
  const int nsp = win->nsp, off = NNP_WINDOW_AXES - nsp;
  g->n = x->dims[0];
  g->c = x->dims[1];
  g->group = nnp_attr_int(ctx->node, "group", 1);
  if (g->group < 1 || g->group > (g->c > 0 ? g->c : 1) || g->c % g->group != 0)
    return nnp_error(NNP_ERR_SHAPE, "attribute 'group' = %lld is invalid for %lld input channels",
                     (long long)g->group, (long long)g->c);
  if (w->dims[0] != g->c)
    return nnp_error(NNP_ERR_SHAPE, "W has %lld input channels but X has %lld",
                     (long long)w->dims[0], (long long)g->c);
  if (nnp_mul_overflows(w->dims[1], g->group, &g->m))
    return nnp_error(NNP_ERR_LIMIT, "output channel count overflows");
  nnp_auto_pad mode = NNP_AUTO_PAD_NOTSET;
  NNP_TRY(conv_read_window(ctx, g, &mode));
  int64_t op[NNP_WINDOW_AXES], os[NNP_WINDOW_AXES + 2];
  NNP_TRY(nnp_spatial_ints(ctx->node, "output_padding", nsp, 0, 0, NNP_WINDOW_ATTR_MAX, op));
  const int64_t *osv = NULL;
  int nos = nnp_attr_ints(ctx->node, "output_shape", &osv);
  if (nos > 0) {
    /* Spatial sizes, or (as some exporters write) the full N, C, spatial... shape. */
    if (nos != nsp && nos != nsp + 2)
      return nnp_error(NNP_ERR_SHAPE, "attribute 'output_shape' has %d values, expected %d", nos,
                       nsp);
    for (int i = 0; i < nsp; i++) {
      os[i] = osv[nos - nsp + i];
      if (os[i] < 0 || os[i] > ((int64_t)1 << 40))
        return nnp_error(NNP_ERR_SHAPE, "attribute 'output_shape'[%d] = %lld is invalid", i,
                         (long long)os[i]);
    }
  }
  for (int i = off; i < NNP_WINDOW_AXES; i++) {
    int sp = i - off;
    int64_t ek = 0, full = 0;
    NNP_TRY(eff_kernel(win, i, &ek));
    /* full = s*(in-1) + output_padding + ek: the output size before pads. */
    if (win->in[i] < 1)
      return nnp_error(NNP_ERR_SHAPE, "X has a zero-size spatial dimension");
    if (nnp_mul_overflows(win->s[i], win->in[i] - 1, &full) ||
        nnp_add_overflows(full, op[sp], &full) || nnp_add_overflows(full, ek, &full) ||
        full > ((int64_t)1 << 40))
      return nnp_error(NNP_ERR_LIMIT, "output size along spatial axis %d overflows", sp);
    if (nos > 0 || mode == NNP_AUTO_PAD_SAME_UPPER || mode == NNP_AUTO_PAD_SAME_LOWER) {
      int64_t out;
      if (nos > 0) out = os[sp];
      else if (nnp_mul_overflows(win->in[i], win->s[i], &out) || out > ((int64_t)1 << 40))
        return nnp_error(NNP_ERR_LIMIT, "output size along spatial axis %d overflows", sp);
      int64_t total = full - out;
      if (total >= 0) {
        win->pb[i] = mode == NNP_AUTO_PAD_SAME_UPPER ? total / 2 : total - total / 2;
        win->pe[i] = total - win->pb[i];
      } else {
        win->pb[i] = 0;
        win->pe[i] = total;
      }
      win->out[i] = out;
    } else {
      if (mode == NNP_AUTO_PAD_VALID) win->pb[i] = win->pe[i] = 0;
      win->out[i] = full - win->pb[i] - win->pe[i];
      if (win->out[i] < 0)
        return nnp_error(NNP_ERR_SHAPE, "pads along spatial axis %d exceed the output size %lld", sp,
                         (long long)full);
    }
  }
  return NNP_OK;
}

/* Scratch: [kd_lo, kd_hi) per id, [kh_lo, kh_hi) per ih, [iw_lo, iw_hi) per kw. */
static size_t convt_scratch_bytes(const conv_geom *g) {
  return (size_t)(2 * (g->win.in[0] + g->win.in[1] + g->win.k[2])) * sizeof(int64_t);
}

static nnp_status infer_conv_transpose(nnp_op_ctx *ctx) {
  const nnp_tensor *b = nnp_in(ctx, 2);
  conv_geom g = {0};
  NNP_TRY(check_io(ctx, &g.win.nsp));
  NNP_TRY(convt_geom(ctx, &g));
  if (b && b->dims[0] != g.m)
    return nnp_error(NNP_ERR_SHAPE, "B has %lld values but there are %lld output channels",
                     (long long)b->dims[0], (long long)g.m);
  NNP_TRY(set_output(ctx, &g));
  ctx->scratch_needed = convt_scratch_bytes(&g);
  return NNP_OK;
}

/* Per input position i along an axis, the taps k that land inside the output,
 * 0 <= i*s - pb + k*d < out (the same search as Conv's with input and output swapped:
 * the scatter steps by s, the taps by d); per tap kw, the input columns it scatters
 * into the output. */
#define DEFINE_CONVT_KERNEL(SUF, T)                                                       \
  static void convt_kernel_##SUF(const conv_geom *g, const T *x, const T *w, const T *b, \
                                 T *y, int64_t *scr) {                                    \
    NNP_WINDOW_LOCALS(&g->win);                                                           \
    const int64_t KD = g->win.k[0], KH = g->win.k[1], KW = g->win.k[2];                   \
    const int64_t cg = g->c / g->group, mg = g->m / g->group;                             \
    const int64_t in_plane = ID * IH * IW, out_plane = OD * OH * OW;                      \
    const int64_t ksize = KD * KH * KW;                                                   \
    int64_t *rd = scr, *rh = rd + 2 * ID, *rw = rh + 2 * IH;                              \
    for (int64_t i = 0; i < ID; i++)                                                      \
      nnp_in_bounds_range(i * sd - pd, dd, KD, OD, &rd[2 * i], &rd[2 * i + 1]);           \
    for (int64_t i = 0; i < IH; i++)                                                      \
      nnp_in_bounds_range(i * sh - ph, dh, KH, OH, &rh[2 * i], &rh[2 * i + 1]);           \
    for (int64_t k = 0; k < KW; k++)                                                      \
      nnp_in_bounds_range(k * dw - pw, sw, IW, OW, &rw[2 * k], &rw[2 * k + 1]);           \
    for (int64_t n = 0; n < g->n; n++)                                                    \
      for (int64_t gi = 0; gi < g->group; gi++)                                           \
        for (int64_t ocg = 0; ocg < mg; ocg++) {                                          \
          const int64_t oc = gi * mg + ocg;                                               \
          T *yo = y + (n * g->m + oc) * out_plane;                                        \
          const T bias = b ? b[oc] : (T)0;                                                \
          for (int64_t o = 0; o < out_plane; o++) yo[o] = bias;                           \
          for (int64_t ic = 0; ic < cg; ic++) {                                           \
            const T *xc = x + (n * g->c + gi * cg + ic) * in_plane;                       \
            const T *wc = w + ((gi * cg + ic) * mg + ocg) * ksize;                        \
            for (int64_t id = 0; id < ID; id++)                                           \
              for (int64_t kd = rd[2 * id]; kd < rd[2 * id + 1]; kd++) {                  \
                const int64_t od = id * sd - pd + kd * dd;                                \
                for (int64_t ih = 0; ih < IH; ih++)                                       \
                  for (int64_t kh = rh[2 * ih]; kh < rh[2 * ih + 1]; kh++) {              \
                    const int64_t oh = ih * sh - ph + kh * dh;                            \
                    const T *xrow = xc + (id * IH + ih) * IW;                             \
                    T *yrow = yo + (od * OH + oh) * OW;                                   \
                    const T *wk = wc + (kd * KH + kh) * KW;                               \
                    for (int64_t kw = 0; kw < KW; kw++) {                                 \
                      const T wv = wk[kw];                                                \
                      const int64_t yoff = kw * dw - pw;                                  \
                      for (int64_t iw = rw[2 * kw]; iw < rw[2 * kw + 1]; iw++)            \
                        yrow[iw * sw + yoff] += wv * xrow[iw];                            \
                    }                                                                     \
                  }                                                                       \
              }                                                                           \
          }                                                                               \
        }                                                                                 \
  }

DEFINE_CONVT_KERNEL(f32, float)
DEFINE_CONVT_KERNEL(f64, double)

static nnp_status ref_conv_transpose(nnp_op_ctx *ctx) {
  const nnp_tensor *x = ctx->in[0], *w = ctx->in[1], *b = nnp_in(ctx, 2);
  conv_geom g = {0};
  g.win.nsp = x->rank - 2;
  NNP_TRY(convt_geom(ctx, &g));
  if (ctx->scratch_size < convt_scratch_bytes(&g))
    return nnp_error(NNP_ERR_INTERNAL, "ConvTranspose scratch too small");
  nnp_tensor *y = ctx->out[0];
  if (x->dtype == NNP_F32)
    convt_kernel_f32(&g, x->data, w->data, b ? b->data : NULL, y->data, ctx->scratch);
  else
    convt_kernel_f64(&g, x->data, w->data, b ? b->data : NULL, y->data, ctx->scratch);
  return NNP_OK;
}

const nnp_op_info nnp_op_conv_transpose = {.name = "ConvTranspose", .min_inputs = 2, .max_inputs = 3,
                                           .min_outputs = 1, .max_outputs = 1,
                                           .infer = infer_conv_transpose, .ref = ref_conv_transpose};
