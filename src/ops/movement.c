/* Data-movement ops: Transpose, Concat, Split, Slice, Gather, Expand, Tile.
 *
 * They are type-generic: elements are moved as opaque nnp_dtype_size() byte groups and
 * never interpreted (except Gather's indices), so every dtype nnperf can hold works.
 *
 * Transpose, Slice, Expand and Tile are all one primitive: copying a strided view of the
 * input (per-axis element strides, possibly 0 for broadcast or negative for reversed
 * slices) into a contiguous output, walked with nested index counters so there is no
 * per-element division. Concat and Split move contiguous blocks with memcpy.
 *
 * Values that decide output shapes (Slice starts/ends, Split sizes, Expand shape, Tile
 * repeats) must be known at load time. The kernels re-derive their parameters from the
 * same attributes and inputs; infer() has validated them already, so the kernels cannot
 * fail on them. */
#include <string.h>

#include "nnperf/alloc.h"
#include "ops/fast_ops.h"
#include "ops/op_util.h"

/* Tile views its output as a rank-2r tensor (repeat, extent) per input axis. */
#define MV_MAX_VIEW_RANK (2 * NNP_MAX_RANK)
/* Split can have at most this many outputs (nnp_op_info counts are int8_t). */
#define MV_MAX_PARTS 127

static nnp_status check_movable(const nnp_tensor *t, const char *what) {
  if (!nnp_dtype_size(t->dtype))
    return nnp_error(NNP_ERR_UNSUPPORTED, "%s of type %s is not supported", what,
                     nnp_dtype_name(t->dtype));
  return NNP_OK;
}

/* Byte-size check of an output shape (rejects overflowing or hostile sizes at load). */
static nnp_status check_out_size(nnp_dtype dt, int rank, const int64_t *dims) {
  size_t nb;
  return nnp_shape_nbytes(dt, rank, dims, &nb);
}

/* ---- strided copy ------------------------------------------------------------------ */

/* Copies n elements of es bytes from s (element stride `stride`) to contiguous d. The
 * fixed-size memcpy calls compile to plain loads and stores without breaking aliasing. */
static void copy_run(char *d, const char *s, size_t es, int64_t n, int64_t stride) {
  if (stride == 1) {
    memcpy(d, s, (size_t)n * es);
    return;
  }
  const ptrdiff_t sb = (ptrdiff_t)stride * (ptrdiff_t)es;
#define MV_RUN_(ES)                                          \
  for (int64_t j = 0; j < n; j++) memcpy(d + j * (ES), s + j * sb, (ES)); \
  break;
  switch (es) {
    case 1: MV_RUN_(1)
    case 2: MV_RUN_(2)
    case 4: MV_RUN_(4)
    case 8: MV_RUN_(8)
    default:
      for (int64_t j = 0; j < n; j++) memcpy(d + (size_t)j * es, s + j * sb, es);
      break;
  }
#undef MV_RUN_
}

/* A transpose's last two axes, out[i][j] = s[i + j * stride] (i < ni, j < nj), in
 * TRANSPOSE_TILE x TRANSPOSE_TILE tiles: each tile reads that many source lines, as many
 * consecutive elements each, and writes as many output runs. Run by run, each output
 * row read nj elements from nj different lines, and the next row the same lines' next
 * elements, by then out of L1 for nj over ~500 (ViT's 768 x 196 patch transpose moved
 * 2.3 GB/s). */
enum { TRANSPOSE_TILE = 16 };

static void transpose_tiles(char *d, const char *s, size_t es, int64_t ni, int64_t nj, int64_t stride) {
  for (int64_t i0 = 0; i0 < ni; i0 += TRANSPOSE_TILE)
    for (int64_t j0 = 0; j0 < nj; j0 += TRANSPOSE_TILE) {
      const int64_t i1 = i0 + TRANSPOSE_TILE < ni ? i0 + TRANSPOSE_TILE : ni;
      const int64_t nb = nj - j0 < TRANSPOSE_TILE ? nj - j0 : TRANSPOSE_TILE;
      for (int64_t i = i0; i < i1; i++)
        copy_run(d + (size_t)(i * nj + j0) * es, s + (i + j0 * stride) * (ptrdiff_t)es, es, nb, stride);
    }
}

/* dst[i0..] = src[sum_k i_k * strides[k]] over the view (rank, dims). src points at the
 * view's first element; strides are in elements and may be zero or negative. Where the
 * second-to-last axis is the source's contiguous one (a transpose), the last two axes go
 * by tiles (transpose_tiles). */
static void strided_copy(void *dst, const void *src, size_t es, int rank, const int64_t *dims_in,
                         const int64_t *strides_in) {
  /* Coalesce: drop unit axes, merge an axis into the one outside it when the pair is
   * one uniform run (outer stride == inner stride * inner extent). This turns most
   * views into a few long runs (plain copies become one memcpy). */
  int64_t dims[MV_MAX_VIEW_RANK], str[MV_MAX_VIEW_RANK];
  int r = 0;
  for (int i = 0; i < rank; i++) {
    if (dims_in[i] == 0) return;
    if (dims_in[i] == 1) continue;
    if (r > 0 && str[r - 1] == strides_in[i] * dims_in[i]) {
      dims[r - 1] *= dims_in[i];
      str[r - 1] = strides_in[i];
      continue;
    }
    dims[r] = dims_in[i];
    str[r] = strides_in[i];
    r++;
  }
  if (r == 0) {
    dims[0] = 1;
    str[0] = 1;
    r = 1;
  }
  const int64_t n = dims[r - 1], s = str[r - 1];
  const bool tiles = r >= 2 && str[r - 2] == 1 && s != 1 && dims[r - 2] >= TRANSPOSE_TILE && n >= TRANSPOSE_TILE;
  const int64_t block = tiles ? dims[r - 2] * n : n; /* elements per step of the outer axes */
  const char *sp = src;
  char *dp = dst;
  int64_t idx[MV_MAX_VIEW_RANK] = {0};
  int64_t off = 0; /* source offset in elements of the current run (or tiled block) */
  for (;;) {
    if (tiles) transpose_tiles(dp, sp + off * (ptrdiff_t)es, es, dims[r - 2], n, s);
    else copy_run(dp, sp + off * (ptrdiff_t)es, es, n, s);
    dp += (size_t)block * es;
    int k = r - (tiles ? 3 : 2);
    for (; k >= 0; k--) {
      off += str[k];
      if (++idx[k] < dims[k]) break;
      off -= str[k] * dims[k];
      idx[k] = 0;
    }
    if (k < 0) break;
  }
}

/* ---- Transpose ------------------------------------------------------------------------ */

static nnp_status transpose_perm(const nnp_op_ctx *c, int rank, int *perm) {
  const int64_t *p;
  int n = nnp_attr_ints(c->node, "perm", &p);
  if (n < 0) { /* default: reverse the axes */
    for (int i = 0; i < rank; i++) perm[i] = rank - 1 - i;
    return NNP_OK;
  }
  if (n != rank)
    return nnp_error(NNP_ERR_SHAPE, "attribute 'perm' has %d values for an input of rank %d", n, rank);
  unsigned seen = 0;
  for (int i = 0; i < n; i++) {
    if (p[i] < 0 || p[i] >= rank)
      return nnp_error(NNP_ERR_SHAPE, "attribute 'perm' value %lld is out of range for rank %d",
                       (long long)p[i], rank);
    if (seen & (1u << p[i]))
      return nnp_error(NNP_ERR_SHAPE, "attribute 'perm' repeats axis %lld", (long long)p[i]);
    seen |= 1u << p[i];
    perm[i] = (int)p[i];
  }
  return NNP_OK;
}

static nnp_status infer_transpose(nnp_op_ctx *c) {
  const nnp_tensor *x = c->in[0];
  if (!x) return nnp_error(NNP_ERR_SHAPE, "input 0 is missing");
  NNP_TRY(check_movable(x, "input"));
  int perm[NNP_MAX_RANK];
  NNP_TRY(transpose_perm(c, x->rank, perm));
  int64_t dims[NNP_MAX_RANK];
  for (int i = 0; i < x->rank; i++) dims[i] = x->dims[perm[i]];
  nnp_set_shape(c->out[0], x->dtype, x->rank, dims);
  return NNP_OK;
}

/* The input stride (in elements) of each output axis. */
static nnp_status transpose_strides(const nnp_op_ctx *c, int64_t *str) {
  const nnp_tensor *x = c->in[0];
  int perm[NNP_MAX_RANK];
  NNP_TRY(transpose_perm(c, x->rank, perm));
  int64_t xs[NNP_MAX_RANK];
  nnp_contiguous_strides(x->rank, x->dims, xs);
  for (int i = 0; i < x->rank; i++) str[i] = xs[perm[i]];
  return NNP_OK;
}

static nnp_status ref_transpose(nnp_op_ctx *c) {
  const nnp_tensor *x = c->in[0];
  int64_t str[NNP_MAX_RANK];
  NNP_TRY(transpose_strides(c, str));
  strided_copy(c->out[0]->data, x->data, nnp_dtype_size(x->dtype), x->rank, c->out[0]->dims, str);
  return NNP_OK;
}

/* Transpose's fast kernel: the same strided copy, the output cut into P rows over its
 * leading axes (the fewest whose extents multiply to 8 per thread), each row copied by
 * one task. The transformers transpose between every pair of MatMuls (vit_b_16: 73
 * Transposes, ~3 ms of single-threaded copies per run at 2 threads). Outputs under
 * 32 KB stay on the caller: a pool run costs more than their copy. Slice's fast kernel
 * is the same copy from the slice's first element (x_off). */
typedef struct fast_transpose {
  size_t es;
  int rank, split;          /* axes [0, split) are cut into rows */
  int64_t dims[NNP_MAX_RANK], str[NNP_MAX_RANK];
  int64_t rows, row_elems;
  int64_t x_off;            /* elements from the input's start to the view's first */
  const char *x;
  char *y;
} fast_transpose;

static void transpose_rows(void *p, int64_t b, int64_t e) {
  const fast_transpose *f = p;
  for (int64_t r = b; r < e; r++) {
    int64_t off = 0, rest = r;
    for (int i = f->split - 1; i >= 0; i--) {
      off += rest % f->dims[i] * f->str[i];
      rest /= f->dims[i];
    }
    strided_copy(f->y + (size_t)(r * f->row_elems) * f->es, f->x + off * (ptrdiff_t)f->es, f->es,
                 f->rank - f->split, f->dims + f->split, f->str + f->split);
  }
}

static nnp_status run_transpose(void *state, nnp_op_ctx *ctx) {
  fast_transpose f = *(const fast_transpose *)state;
  f.x = (const char *)ctx->in[0]->data + f.x_off * (ptrdiff_t)f.es;
  f.y = ctx->out[0]->data;
  nnp_threadpool_run(ctx->pool, transpose_rows, &f, f.rows);
  return NNP_OK;
}

/* Whether f's view (y's dims, f->str) is one contiguous run of the input. A Slice or
 * Gather taking a contiguous block copies it with one memcpy on the reference kernel:
 * under CONTIGUOUS_POOLED bytes the pool's dispatch costs more than it saves (shufflenet's
 * channel halves, 91 and 182 KB: 1.5 us each alone, 2.6 us on the pool). */
enum { CONTIGUOUS_POOLED = 256 << 10 };

static bool contiguous_view(const fast_transpose *f, const nnp_tensor *y) {
  int64_t want = 1;
  for (int i = y->rank - 1; i >= 0; i--) {
    if (y->dims[i] != 1 && f->str[i] != want) return false;
    want *= y->dims[i];
  }
  return true;
}

/* f's rows (its str and x_off already set) for a copy of x's view into y, and the kernel */
static void strided_rows(fast_transpose *f, const nnp_tensor *x, const nnp_tensor *y, int64_t threads,
                         const char *name, nnp_fast_kernel *out) {
  f->es = nnp_dtype_size(x->dtype);
  f->rank = x->rank;
  memcpy(f->dims, y->dims, (size_t)x->rank * sizeof *f->dims);
  f->rows = 1;
  while (f->split < f->rank - 1 && f->rows < 8 * threads) f->rows *= f->dims[f->split++];
  f->row_elems = nnp_tensor_numel(y) / f->rows;
  out->run = run_transpose;
  out->destroy = nnp_free;
  out->state = f;
  out->name = name;
}

/* strided_rows for a Slice's or Gather's view, which takes f; a contiguous view under
 * CONTIGUOUS_POOLED bytes is left to the reference's memcpy (out->run stays NULL) */
static void view_rows(fast_transpose *f, const nnp_tensor *x, const nnp_tensor *y, int64_t threads, const char *name,
                      nnp_fast_kernel *out) {
  if (contiguous_view(f, y) && nnp_tensor_nbytes(y) < CONTIGUOUS_POOLED) {
    nnp_free(f);
    return;
  }
  strided_rows(f, x, y, threads, name, out);
}

static nnp_status prepare_transpose(const nnp_op_ctx *ctx, bool generic, nnp_fast_kernel *out) {
  (void)generic;
  memset(out, 0, sizeof *out);
  const nnp_tensor *x = ctx->in[0], *y = ctx->out[0];
  const int64_t threads = nnp_threadpool_threads(ctx->pool);
  if (!nnp_pooled_copy_pays(ctx) || x->rank < 2) return NNP_OK;
  fast_transpose *f = nnp_calloc(1, sizeof *f);
  if (!f) return nnp_error(NNP_ERR_NOMEM, "out of memory preparing a Transpose");
  const nnp_status st = transpose_strides(ctx, f->str);
  if (st != NNP_OK) {
    nnp_free(f);
    return st;
  }
  strided_rows(f, x, y, threads, "transpose.rows", out);
  return NNP_OK;
}

/* ---- Concat --------------------------------------------------------------------------- */

nnp_status nnp_concat_axis(const nnp_op_ctx *c, int rank, int *axis) {
  const nnp_attr *a = nnp_node_attr(c->node, "axis");
  /* Concat-1 defaulted axis to 1; from opset 4 it is required. */
  if (!a && c->opset >= 4) return nnp_error(NNP_ERR_SHAPE, "attribute 'axis' is required");
  return nnp_norm_axis(a ? nnp_attr_int(c->node, "axis", 0) : 1, rank, "attribute 'axis'", axis);
}

static nnp_status infer_concat(nnp_op_ctx *c) {
  if (c->n_in < 1 || !c->in[0]) return nnp_error(NNP_ERR_SHAPE, "input 0 is missing");
  const nnp_tensor *x0 = c->in[0];
  NNP_TRY(check_movable(x0, "input"));
  if (x0->rank < 1) return nnp_error(NNP_ERR_SHAPE, "inputs must have rank >= 1, not scalars");
  int axis;
  NNP_TRY(nnp_concat_axis(c, x0->rank, &axis));
  int64_t dims[NNP_MAX_RANK];
  for (int i = 0; i < x0->rank; i++) dims[i] = x0->dims[i];
  dims[axis] = 0;
  for (int k = 0; k < c->n_in; k++) {
    const nnp_tensor *t = c->in[k];
    if (!t) return nnp_error(NNP_ERR_SHAPE, "input %d is missing", k);
    if (t->dtype != x0->dtype)
      return nnp_error(NNP_ERR_SHAPE, "input %d has type %s, input 0 has %s", k,
                       nnp_dtype_name(t->dtype), nnp_dtype_name(x0->dtype));
    if (t->rank != x0->rank)
      return nnp_error(NNP_ERR_SHAPE, "input %d has rank %d, input 0 has rank %d", k, t->rank, x0->rank);
    for (int i = 0; i < t->rank; i++)
      if (i != axis && t->dims[i] != x0->dims[i])
        return nnp_error(NNP_ERR_SHAPE, "input %d has dimension %d of %lld, input 0 has %lld", k, i,
                         (long long)t->dims[i], (long long)x0->dims[i]);
    if (t->dims[axis] > INT64_MAX - dims[axis])
      return nnp_error(NNP_ERR_LIMIT, "concatenated dimension overflows int64");
    dims[axis] += t->dims[axis];
  }
  NNP_TRY(check_out_size(x0->dtype, x0->rank, dims));
  nnp_set_shape(c->out[0], x0->dtype, x0->rank, dims);
  return NNP_OK;
}

static nnp_status ref_concat(nnp_op_ctx *c) {
  const nnp_tensor *x0 = c->in[0];
  nnp_tensor *y = c->out[0];
  int axis;
  NNP_TRY(nnp_concat_axis(c, x0->rank, &axis));
  const size_t es = nnp_dtype_size(x0->dtype);
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; i++) outer *= y->dims[i];
  for (int i = axis + 1; i < y->rank; i++) inner *= y->dims[i];
  if (outer == 0 || inner == 0) return NNP_OK;
  /* Output row o is the concatenation of row o of every input. */
  char *dp = y->data;
  for (int64_t o = 0; o < outer; o++)
    for (int k = 0; k < c->n_in; k++) {
      const size_t blk = (size_t)(c->in[k]->dims[axis] * inner) * es;
      if (!blk) continue;
      memcpy(dp, (const char *)c->in[k]->data + (size_t)o * blk, blk);
      dp += blk;
    }
  return NNP_OK;
}

/* ---- Split ---------------------------------------------------------------------------- */

/* Sizes of the parts along axis (length c->n_out), from the `split` input (opset >= 13)
 * or attribute (before 13), else equal parts; opset 18's num_outputs allows a smaller
 * last part. */
static nnp_status split_sizes(const nnp_op_ctx *c, const nnp_tensor *x, int *axis_out,
                              int64_t *sizes) {
  int axis;
  NNP_TRY(nnp_norm_axis(nnp_attr_int(c->node, "axis", 0), x->rank, "attribute 'axis'", &axis));
  const int64_t d = x->dims[axis];
  const int n = c->n_out;
  if (n > MV_MAX_PARTS) return nnp_error(NNP_ERR_LIMIT, "%d outputs, at most %d allowed", n, MV_MAX_PARTS);
  const nnp_tensor *st = nnp_in(c, 1);
  const int64_t *attr;
  int na = nnp_attr_ints(c->node, "split", &attr);
  const nnp_attr *num = nnp_node_attr(c->node, "num_outputs");
  int count = -1;
  if (st && nnp_tensor_numel(st) > 0) {
    NNP_TRY(nnp_input_ints(c, 1, sizes, MV_MAX_PARTS, &count));
  } else if (na >= 0) {
    if (na > MV_MAX_PARTS) return nnp_error(NNP_ERR_LIMIT, "attribute 'split' has %d values", na);
    for (int i = 0; i < na; i++) sizes[i] = attr[i];
    count = na;
  }
  if (count >= 0) {
    if (num) return nnp_error(NNP_ERR_SHAPE, "'split' and attribute 'num_outputs' are both given");
    if (count != n)
      return nnp_error(NNP_ERR_SHAPE, "'split' has %d values for %d outputs", count, n);
    int64_t sum = 0;
    for (int i = 0; i < n; i++) {
      if (sizes[i] < 0 || sizes[i] > d)
        return nnp_error(NNP_ERR_SHAPE, "'split' value %lld is out of range for dimension %lld",
                         (long long)sizes[i], (long long)d);
      sum += sizes[i];
      if (sum > d) break;
    }
    if (sum != d)
      return nnp_error(NNP_ERR_SHAPE, "'split' values do not add up to dimension %d of size %lld", axis,
                       (long long)d);
  } else {
    if (num && nnp_attr_int(c->node, "num_outputs", 0) != n)
      return nnp_error(NNP_ERR_SHAPE, "attribute 'num_outputs' is %lld but the node has %d outputs",
                       (long long)nnp_attr_int(c->node, "num_outputs", 0), n);
    if (d % n == 0) {
      for (int i = 0; i < n; i++) sizes[i] = d / n;
    } else if (num || c->opset >= 18) {
      /* Opset 18: parts of ceil(d / n), the last one smaller. */
      const int64_t chunk = d / n + 1;
      for (int i = 0; i < n - 1; i++) sizes[i] = chunk;
      sizes[n - 1] = d - chunk * (n - 1);
      if (sizes[n - 1] < 0)
        return nnp_error(NNP_ERR_SHAPE, "dimension %d of size %lld cannot be split into %d parts", axis,
                         (long long)d, n);
    } else {
      return nnp_error(NNP_ERR_SHAPE, "dimension %d of size %lld does not split into %d equal parts", axis,
                       (long long)d, n);
    }
  }
  *axis_out = axis;
  return NNP_OK;
}

static nnp_status infer_split(nnp_op_ctx *c) {
  const nnp_tensor *x = c->in[0];
  if (!x) return nnp_error(NNP_ERR_SHAPE, "input 0 is missing");
  NNP_TRY(check_movable(x, "input"));
  if (x->rank < 1) return nnp_error(NNP_ERR_SHAPE, "input must have rank >= 1, not be a scalar");
  int axis;
  int64_t sizes[MV_MAX_PARTS];
  NNP_TRY(split_sizes(c, x, &axis, sizes));
  for (int i = 0; i < c->n_out; i++) {
    if (!c->out[i]) continue;
    nnp_copy_shape(c->out[i], x);
    c->out[i]->dims[axis] = sizes[i];
  }
  return NNP_OK;
}

static nnp_status ref_split(nnp_op_ctx *c) {
  const nnp_tensor *x = c->in[0];
  int axis;
  int64_t sizes[MV_MAX_PARTS];
  NNP_TRY(split_sizes(c, x, &axis, sizes));
  const size_t es = nnp_dtype_size(x->dtype);
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; i++) outer *= x->dims[i];
  for (int i = axis + 1; i < x->rank; i++) inner *= x->dims[i];
  const size_t row = (size_t)(x->dims[axis] * inner) * es;
  size_t start = 0; /* byte offset of part i within an input row */
  for (int i = 0; i < c->n_out; i++) {
    const size_t blk = (size_t)(sizes[i] * inner) * es;
    if (c->out[i] && blk) {
      char *dp = c->out[i]->data;
      const char *sp = (const char *)x->data + start;
      for (int64_t o = 0; o < outer; o++) memcpy(dp + (size_t)o * blk, sp + (size_t)o * row, blk);
    }
    start += blk;
  }
  return NNP_OK;
}

/* ---- Slice ---------------------------------------------------------------------------- */

typedef struct slice_plan {
  int64_t start[NNP_MAX_RANK]; /* first element taken, per input axis */
  int64_t step[NNP_MAX_RANK];
  int64_t count[NNP_MAX_RANK]; /* output extent */
} slice_plan;

/* Reads starts/ends/axes/steps (attributes before opset 10, inputs after) and clamps
 * them as the ONNX spec says. */
static nnp_status slice_plan_make(const nnp_op_ctx *c, const nnp_tensor *x, slice_plan *p) {
  const int r = x->rank;
  int64_t starts[NNP_MAX_RANK], ends[NNP_MAX_RANK], axes[NNP_MAX_RANK], steps[NNP_MAX_RANK];
  int ns, ne, nax = -1, nst = -1;
  if (c->opset < 10) {
    const int64_t *a;
    ns = nnp_attr_ints(c->node, "starts", &a);
    if (ns < 0) return nnp_error(NNP_ERR_SHAPE, "attribute 'starts' is required");
    if (ns > NNP_MAX_RANK) return nnp_error(NNP_ERR_SHAPE, "attribute 'starts' has %d values", ns);
    memcpy(starts, a, sizeof(int64_t) * (size_t)ns);
    ne = nnp_attr_ints(c->node, "ends", &a);
    if (ne < 0) return nnp_error(NNP_ERR_SHAPE, "attribute 'ends' is required");
    if (ne > NNP_MAX_RANK) return nnp_error(NNP_ERR_SHAPE, "attribute 'ends' has %d values", ne);
    memcpy(ends, a, sizeof(int64_t) * (size_t)ne);
    nax = nnp_attr_ints(c->node, "axes", &a);
    if (nax > NNP_MAX_RANK) return nnp_error(NNP_ERR_SHAPE, "attribute 'axes' has %d values", nax);
    if (nax > 0) memcpy(axes, a, sizeof(int64_t) * (size_t)nax);
  } else {
    if (!nnp_in(c, 1) || !nnp_in(c, 2))
      return nnp_error(NNP_ERR_SHAPE, "inputs 'starts' and 'ends' are required from opset 10");
    NNP_TRY(nnp_input_ints(c, 1, starts, NNP_MAX_RANK, &ns));
    NNP_TRY(nnp_input_ints(c, 2, ends, NNP_MAX_RANK, &ne));
    if (nnp_in(c, 3)) NNP_TRY(nnp_input_ints(c, 3, axes, NNP_MAX_RANK, &nax));
    if (nnp_in(c, 4)) NNP_TRY(nnp_input_ints(c, 4, steps, NNP_MAX_RANK, &nst));
  }
  /* An empty axes/steps list (an exporter's placeholder) means the default. */
  if (nax == 0 && ns > 0) nax = -1;
  if (nst == 0 && ns > 0) nst = -1;
  if (ns != ne) return nnp_error(NNP_ERR_SHAPE, "'starts' has %d values but 'ends' has %d", ns, ne);
  if (nax >= 0 && nax != ns)
    return nnp_error(NNP_ERR_SHAPE, "'axes' has %d values but 'starts' has %d", nax, ns);
  if (nst >= 0 && nst != ns)
    return nnp_error(NNP_ERR_SHAPE, "'steps' has %d values but 'starts' has %d", nst, ns);
  if (nax < 0 && ns > r)
    return nnp_error(NNP_ERR_SHAPE, "'starts' has %d values for an input of rank %d", ns, r);
  for (int i = 0; i < r; i++) {
    p->start[i] = 0;
    p->step[i] = 1;
    p->count[i] = x->dims[i];
  }
  unsigned seen = 0;
  for (int k = 0; k < ns; k++) {
    int ax = k;
    if (nax >= 0) NNP_TRY(nnp_norm_axis(axes[k], r, "'axes' value", &ax));
    if (seen & (1u << ax)) return nnp_error(NNP_ERR_SHAPE, "'axes' repeats axis %d", ax);
    seen |= 1u << ax;
    const int64_t d = x->dims[ax];
    int64_t step = nst >= 0 ? steps[k] : 1;
    if (step == 0) return nnp_error(NNP_ERR_SHAPE, "'steps' value for axis %d is 0", ax);
    int64_t s = starts[k], e = ends[k];
    if (s < 0) s += d; /* no overflow: d >= 0 */
    if (e < 0) e += d;
    int64_t cnt;
    if (step > 0) {
      s = s < 0 ? 0 : s > d ? d : s;
      e = e < 0 ? 0 : e > d ? d : e;
      cnt = e > s ? (e - s - 1) / step + 1 : 0;
    } else {
      s = s < 0 ? 0 : s > d - 1 ? d - 1 : s;
      e = e < -1 ? -1 : e > d - 1 ? d - 1 : e;
      /* -step overflows for INT64_MIN: divide in unsigned. */
      const uint64_t ustep = (uint64_t)0 - (uint64_t)step;
      cnt = s > e ? (int64_t)((uint64_t)(s - e - 1) / ustep) + 1 : 0;
    }
    if (d == 0) cnt = 0;
    /* With at most one element the step is irrelevant; normalising it keeps the
     * kernel's stride * step product from overflowing for huge steps. */
    if (cnt <= 1) step = 1;
    if (cnt == 0) s = 0;
    p->start[ax] = s;
    p->step[ax] = step;
    p->count[ax] = cnt;
  }
  return NNP_OK;
}

static nnp_status infer_slice(nnp_op_ctx *c) {
  const nnp_tensor *x = c->in[0];
  if (!x) return nnp_error(NNP_ERR_SHAPE, "input 0 is missing");
  NNP_TRY(check_movable(x, "input"));
  if (x->rank < 1) return nnp_error(NNP_ERR_SHAPE, "input must have rank >= 1, not be a scalar");
  slice_plan p;
  NNP_TRY(slice_plan_make(c, x, &p));
  nnp_set_shape(c->out[0], x->dtype, x->rank, p.count);
  return NNP_OK;
}

/* Slice's fast kernel (Transpose's, above), where the bounds are known at load: vit_b_16
 * and swin_t cut q, k and v out of one projection with Slices (36 and 98 a run), each a
 * single-threaded copy on the reference kernel. */
static nnp_status prepare_slice(const nnp_op_ctx *ctx, bool generic, nnp_fast_kernel *out) {
  (void)generic;
  memset(out, 0, sizeof *out);
  const nnp_tensor *x = ctx->in[0], *y = ctx->out[0];
  const int64_t threads = nnp_threadpool_threads(ctx->pool);
  if (!nnp_pooled_copy_pays(ctx) || x->rank < 2) return NNP_OK;
  slice_plan p;
  if (slice_plan_make(ctx, x, &p) != NNP_OK) return NNP_OK; /* the reference reports it */
  fast_transpose *f = nnp_calloc(1, sizeof *f);
  if (!f) return nnp_error(NNP_ERR_NOMEM, "out of memory preparing a Slice");
  int64_t xs[NNP_MAX_RANK];
  nnp_contiguous_strides(x->rank, x->dims, xs);
  for (int i = 0; i < x->rank; i++) {
    f->x_off += p.start[i] * xs[i];
    f->str[i] = xs[i] * p.step[i];
  }
  view_rows(f, x, y, threads, "slice.rows", out);
  return NNP_OK;
}

static nnp_status ref_slice(nnp_op_ctx *c) {
  const nnp_tensor *x = c->in[0];
  slice_plan p;
  NNP_TRY(slice_plan_make(c, x, &p));
  const size_t es = nnp_dtype_size(x->dtype);
  int64_t xs[NNP_MAX_RANK], str[NNP_MAX_RANK], off = 0;
  nnp_contiguous_strides(x->rank, x->dims, xs);
  for (int i = 0; i < x->rank; i++) {
    if (p.count[i] == 0) return NNP_OK;
    off += p.start[i] * xs[i];
    str[i] = xs[i] * p.step[i];
  }
  strided_copy(c->out[0]->data, (const char *)x->data + off * (ptrdiff_t)es, es, x->rank, p.count, str);
  return NNP_OK;
}

/* ---- Gather --------------------------------------------------------------------------- */

static inline int64_t index_at(const void *p, int is64, int64_t k) {
  return is64 ? ((const int64_t *)p)[k] : ((const int32_t *)p)[k];
}

/* Returns the position of the first index outside [-d, d), or -1. */
static int64_t gather_bad_index(const nnp_tensor *ind, int64_t d) {
  const int is64 = ind->dtype == NNP_I64;
  const int64_t n = nnp_tensor_numel(ind);
  for (int64_t k = 0; k < n; k++) {
    const int64_t v = index_at(ind->data, is64, k);
    if (v < -d || v >= d) return k;
  }
  return -1;
}

static nnp_status gather_index_error(const nnp_tensor *ind, int64_t k, int axis, int64_t d) {
  return nnp_error(NNP_ERR_SHAPE, "indices[%lld] = %lld is out of range for axis %d of size %lld",
                   (long long)k, (long long)index_at(ind->data, ind->dtype == NNP_I64, k), axis,
                   (long long)d);
}

static nnp_status infer_gather(nnp_op_ctx *c) {
  const nnp_tensor *x = c->in[0], *ind = c->in[1];
  if (!x || !ind) return nnp_error(NNP_ERR_SHAPE, "inputs 'data' and 'indices' are required");
  NNP_TRY(check_movable(x, "input 'data'"));
  if (x->rank < 1) return nnp_error(NNP_ERR_SHAPE, "input 'data' must have rank >= 1, not be a scalar");
  if (ind->dtype != NNP_I32 && ind->dtype != NNP_I64)
    return nnp_error(NNP_ERR_SHAPE, "input 'indices' must be int32 or int64, not %s", nnp_dtype_name(ind->dtype));
  int axis;
  NNP_TRY(nnp_norm_axis(nnp_attr_int(c->node, "axis", 0), x->rank, "attribute 'axis'", &axis));
  const int rank = x->rank - 1 + ind->rank;
  if (rank > NNP_MAX_RANK)
    return nnp_error(NNP_ERR_LIMIT, "output rank %d exceeds %d", rank, NNP_MAX_RANK);
  int64_t dims[NNP_MAX_RANK];
  int r = 0;
  for (int i = 0; i < axis; i++) dims[r++] = x->dims[i];
  for (int i = 0; i < ind->rank; i++) dims[r++] = ind->dims[i];
  for (int i = axis + 1; i < x->rank; i++) dims[r++] = x->dims[i];
  NNP_TRY(check_out_size(x->dtype, rank, dims));
  /* Indices known now (usually a constant) are checked now; others in the kernel. */
  if (ind->data) {
    int64_t k = gather_bad_index(ind, x->dims[axis]);
    if (k >= 0) return gather_index_error(ind, k, axis, x->dims[axis]);
  }
  nnp_set_shape(c->out[0], x->dtype, rank, dims);
  return NNP_OK;
}

static nnp_status ref_gather(nnp_op_ctx *c) {
  const nnp_tensor *x = c->in[0], *ind = c->in[1];
  int axis;
  NNP_TRY(nnp_norm_axis(nnp_attr_int(c->node, "axis", 0), x->rank, "attribute 'axis'", &axis));
  const int64_t d = x->dims[axis];
  /* Indices are run-time data: out of range is an error (ONNX), checked up front so the
   * copy loop below stays branch-free. */
  int64_t bad = gather_bad_index(ind, d);
  if (bad >= 0) return gather_index_error(ind, bad, axis, d);
  const size_t es = nnp_dtype_size(x->dtype);
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; i++) outer *= x->dims[i];
  for (int i = axis + 1; i < x->rank; i++) inner *= x->dims[i];
  const size_t blk = (size_t)inner * es;
  const int64_t n = nnp_tensor_numel(ind);
  const int is64 = ind->dtype == NNP_I64;
  if (!blk || !n) return NNP_OK;
  char *dp = c->out[0]->data;
  const char *sp = x->data;
  for (int64_t o = 0; o < outer; o++) {
    const char *row = sp + (size_t)(o * d) * blk;
    for (int64_t k = 0; k < n; k++) {
      int64_t v = index_at(ind->data, is64, k);
      if (v < 0) v += d;
      memcpy(dp, row + (size_t)v * blk, blk);
      dp += blk;
    }
  }
  return NNP_OK;
}

/* Gather's fast kernel where the index is one constant (Swin takes q, k and v out of one
 * tensor with Gathers of index 0, 1, 2: 36 single-threaded copies a run): Transpose's
 * row-split strided copy of the slice at that index, the gathered axis gone (or kept as
 * 1 for a [1] index). */
static nnp_status prepare_gather(const nnp_op_ctx *ctx, bool generic, nnp_fast_kernel *out) {
  (void)generic;
  memset(out, 0, sizeof *out);
  const nnp_tensor *x = ctx->in[0], *ind = ctx->in[1], *y = ctx->out[0];
  const int64_t threads = nnp_threadpool_threads(ctx->pool);
  if (!nnp_pooled_copy_pays(ctx) || !ind->data || nnp_tensor_numel(ind) != 1 || ind->rank > 1)
    return NNP_OK;
  int axis;
  if (nnp_norm_axis(nnp_attr_int(ctx->node, "axis", 0), x->rank, "attribute 'axis'", &axis) != NNP_OK) {
    nnp_clear_error();
    return NNP_OK;
  }
  int64_t v = index_at(ind->data, ind->dtype == NNP_I64, 0);
  if (v < -x->dims[axis] || v >= x->dims[axis]) return NNP_OK; /* the reference reports it */
  if (v < 0) v += x->dims[axis];
  fast_transpose *f = nnp_calloc(1, sizeof *f);
  if (!f) return nnp_error(NNP_ERR_NOMEM, "out of memory preparing a Gather");
  int64_t xs[NNP_MAX_RANK];
  nnp_contiguous_strides(x->rank, x->dims, xs);
  f->x_off = v * xs[axis];
  int r = 0;
  for (int i = 0; i < x->rank; i++) {
    if (i == axis) {
      if (ind->rank == 1) f->str[r++] = 0; /* the [1] index's axis: extent 1 */
      continue;
    }
    f->str[r++] = xs[i];
  }
  view_rows(f, y, y, threads, "gather.rows", out);
  return NNP_OK;
}

/* ---- Expand --------------------------------------------------------------------------- */

static nnp_status infer_expand(nnp_op_ctx *c) {
  const nnp_tensor *x = c->in[0];
  if (!x || !nnp_in(c, 1)) return nnp_error(NNP_ERR_SHAPE, "inputs 'input' and 'shape' are required");
  NNP_TRY(check_movable(x, "input"));
  int64_t shape[NNP_MAX_RANK], dims[NNP_MAX_RANK];
  int n, rank;
  NNP_TRY(nnp_input_ints(c, 1, shape, NNP_MAX_RANK, &n));
  for (int i = 0; i < n; i++)
    if (shape[i] < 0)
      return nnp_error(NNP_ERR_SHAPE, "input 'shape' value %lld is negative", (long long)shape[i]);
  NNP_TRY(nnp_broadcast_shapes(x->rank, x->dims, n, shape, &rank, dims));
  NNP_TRY(check_out_size(x->dtype, rank, dims));
  nnp_set_shape(c->out[0], x->dtype, rank, dims);
  return NNP_OK;
}

static nnp_status ref_expand(nnp_op_ctx *c) {
  const nnp_tensor *x = c->in[0];
  nnp_tensor *y = c->out[0];
  int64_t str[NNP_MAX_RANK];
  nnp_broadcast_strides(x, y->rank, y->dims, str);
  strided_copy(y->data, x->data, nnp_dtype_size(x->dtype), y->rank, y->dims, str);
  return NNP_OK;
}

/* ---- Tile ----------------------------------------------------------------------------- */

static nnp_status infer_tile(nnp_op_ctx *c) {
  const nnp_tensor *x = c->in[0];
  if (!x || !nnp_in(c, 1)) return nnp_error(NNP_ERR_SHAPE, "inputs 'input' and 'repeats' are required");
  NNP_TRY(check_movable(x, "input"));
  int64_t rep[NNP_MAX_RANK], dims[NNP_MAX_RANK];
  int n;
  NNP_TRY(nnp_input_ints(c, 1, rep, NNP_MAX_RANK, &n));
  if (n != x->rank)
    return nnp_error(NNP_ERR_SHAPE, "input 'repeats' has %d values for an input of rank %d", n, x->rank);
  for (int i = 0; i < n; i++) {
    if (rep[i] < 0)
      return nnp_error(NNP_ERR_SHAPE, "input 'repeats' value %lld is negative", (long long)rep[i]);
    if (rep[i] && x->dims[i] > INT64_MAX / rep[i])
      return nnp_error(NNP_ERR_LIMIT, "tiled dimension %d overflows int64", i);
    dims[i] = x->dims[i] * rep[i];
  }
  NNP_TRY(check_out_size(x->dtype, x->rank, dims));
  nnp_set_shape(c->out[0], x->dtype, x->rank, dims);
  return NNP_OK;
}

static nnp_status ref_tile(nnp_op_ctx *c) {
  const nnp_tensor *x = c->in[0];
  /* Output axis i of extent rep*d is the pair (repeat, j) with input strides (0, s_i):
   * a rank-2r strided view of the input. */
  int64_t xs[NNP_MAX_RANK], vd[MV_MAX_VIEW_RANK], vs[MV_MAX_VIEW_RANK];
  nnp_contiguous_strides(x->rank, x->dims, xs);
  for (int i = 0; i < x->rank; i++) {
    vd[2 * i] = x->dims[i] ? c->out[0]->dims[i] / x->dims[i] : 0;
    vs[2 * i] = 0;
    vd[2 * i + 1] = x->dims[i];
    vs[2 * i + 1] = xs[i];
  }
  strided_copy(c->out[0]->data, x->data, nnp_dtype_size(x->dtype), 2 * x->rank, vd, vs);
  return NNP_OK;
}

/* ---- descriptors ---------------------------------------------------------------------- */

const nnp_op_info nnp_op_transpose = {.name = "Transpose", .min_inputs = 1, .max_inputs = 1,
                                      .min_outputs = 1, .max_outputs = 1,
                                      .infer = infer_transpose, .ref = ref_transpose, .prepare = prepare_transpose};
const nnp_op_info nnp_op_concat = {.name = "Concat", .min_inputs = 1, .max_inputs = 127,
                                   .min_outputs = 1, .max_outputs = 1, .flags = NNP_OPF_VARIADIC,
                                   .infer = infer_concat, .ref = ref_concat, .prepare = nnp_prepare_concat};
const nnp_op_info nnp_op_split = {.name = "Split", .min_inputs = 1, .max_inputs = 2,
                                  .min_outputs = 1, .max_outputs = MV_MAX_PARTS,
                                  .infer = infer_split, .ref = ref_split};
const nnp_op_info nnp_op_slice = {.name = "Slice", .min_inputs = 1, .max_inputs = 5,
                                  .min_outputs = 1, .max_outputs = 1,
                                  .infer = infer_slice, .ref = ref_slice, .prepare = prepare_slice};
const nnp_op_info nnp_op_gather = {.name = "Gather", .min_inputs = 2, .max_inputs = 2,
                                   .min_outputs = 1, .max_outputs = 1,
                                   .infer = infer_gather, .ref = ref_gather, .prepare = prepare_gather};
const nnp_op_info nnp_op_expand = {.name = "Expand", .min_inputs = 2, .max_inputs = 2,
                                   .min_outputs = 1, .max_outputs = 1,
                                   .infer = infer_expand, .ref = ref_expand};
const nnp_op_info nnp_op_tile = {.name = "Tile", .min_inputs = 2, .max_inputs = 2,
                                 .min_outputs = 1, .max_outputs = 1,
                                 .infer = infer_tile, .ref = ref_tile};
