/* The blocked (NCHW16c) convolution: weight packing, the reorders, the thread split and
 * the portable C kernel, which is the oracle of the AVX-512 tile (blocked_conv_avx512.c).
 * The C kernel sums each output lane in the tile's order (input block, kh, kw, input
 * channel), so the two differ only by FMA rounding. */
#include <string.h>

#include "kernels/blocked_conv_impl.h"
#include "kernels/dispatch.h"
#include "kernels/winograd.h"
#include "nnperf/alloc.h"

/* The reorders work on chunks of REORDER_PX pixels of one channel block: 16 planes'
 * chunks in, one contiguous 16 x REORDER_PX chunk out, both in L1 (a whole plane per
 * channel, the first version, wrote each output line 16 times from L2 on 112x112 planes).
 * Each chunk is one thread-pool index. */
#define REORDER_PX 256

typedef struct reorder_ctx {
  const float *x;
  float *y;
  int64_t c, hw, cb, chunks;
  bool to_blocked;
  bool avx2; /* whole blocks by nnp_to_blocked_avx2 / nnp_from_blocked_avx2 */
} reorder_ctx;

static void reorder_chunks(void *p, int64_t begin, int64_t end) {
  const reorder_ctx *r = p;
  for (int64_t t = begin; t < end; t++) {
    const int64_t ch = t % r->chunks, ib = t / r->chunks, b = ib % r->cb, i = ib / r->cb;
    const int64_t p0 = ch * REORDER_PX, p1 = p0 + REORDER_PX < r->hw ? p0 + REORDER_PX : r->hw;
    const int64_t lanes = r->c - b * NNP_BLOCK < NNP_BLOCK ? r->c - b * NNP_BLOCK : NNP_BLOCK;
    const int64_t blk = (i * r->cb + b) * r->hw * NNP_BLOCK; /* the block in the blocked tensor */
    const int64_t pl = (i * r->c + b * NNP_BLOCK) * r->hw;   /* its first plane in the NCHW one */
    if (lanes == NNP_BLOCK && r->avx2) {
      if (r->to_blocked) nnp_to_blocked_avx2(r->x + pl, r->hw, r->y + blk, p0, p1);
      else nnp_from_blocked_avx2(r->x + blk, r->hw, r->y + pl, p0, p1);
    } else if (r->to_blocked) {
      float *yb = r->y + blk;
      if (lanes < NNP_BLOCK) memset(yb + p0 * NNP_BLOCK, 0, (size_t)((p1 - p0) * NNP_BLOCK) * sizeof *yb);
      for (int64_t l = 0; l < lanes; l++) {
        const float *xc = r->x + pl + l * r->hw;
        for (int64_t q = p0; q < p1; q++) yb[q * NNP_BLOCK + l] = xc[q];
      }
    } else {
      const float *xb = r->x + blk;
      for (int64_t l = 0; l < lanes; l++) {
        float *yc = r->y + pl + l * r->hw;
        for (int64_t q = p0; q < p1; q++) yc[q] = xb[q * NNP_BLOCK + l];
      }
    }
  }
}

static void reorder(const float *x, float *y, int64_t n, int64_t c, int64_t hw, bool to_blocked, nnp_threadpool *tp) {
  reorder_ctx r = {.x = x, .y = y, .c = c, .hw = hw, .cb = nnp_blocks(c), .chunks = (hw + REORDER_PX - 1) / REORDER_PX,
                   .to_blocked = to_blocked, .avx2 = nnp_dispatch_isa(NNP_KF_BLOCKED_CONV) >= NNP_ISA_AVX2};
  nnp_threadpool_run(tp, reorder_chunks, &r, n * r.cb * r.chunks);
}

void nnp_nchw_to_blocked(const float *x, float *y, int64_t n, int64_t c, int64_t hw, nnp_threadpool *tp) {
  reorder(x, y, n, c, hw, true, tp);
}

void nnp_blocked_to_nchw(const float *x, float *y, int64_t n, int64_t c, int64_t hw, nnp_threadpool *tp) {
  reorder(x, y, n, c, hw, false, tp);
}

/* Bytes of one input block's weights for a pair of output blocks: what a block pair's
 * tile streams per input block (the chunk size and the task order weigh it against L1). */
static int64_t pair_block_bytes(const nnp_conv2d_desc *d) {
  return 2 * d->kh * d->kw * NNP_BLOCK * NNP_BLOCK * (int64_t)sizeof(float);
}

/* Grouped layers: output block ob reads the input blocks [*b0, *b1) that hold the input
 * channels of its 16 output channels' groups. Groups of whole blocks (RegNetX's 16-wide)
 * read their own blocks; narrower ones (ResNeXt's 4 and 8 wide) one block through a
 * block-diagonal 16 x 16 matrix per tap; others (RegNetY-1.6GF's 24-wide) a window of
 * blocks shared by neighbouring groups. Weights outside a channel's group are zero and
 * the tile multiplies them too. */
static void group_window(const nnp_conv2d_desc *d, int64_t ob, int64_t *b0, int64_t *b1) {
  const int64_t cg = d->c / d->group, mg = d->m / d->group;
  const int64_t m0 = ob * NNP_BLOCK, m1 = (m0 + NNP_BLOCK < d->m ? m0 + NNP_BLOCK : d->m) - 1; /* its channels */
  *b0 = m0 / mg * cg / NNP_BLOCK;
  *b1 = nnp_blocks((m1 / mg + 1) * cg);
}

/* The widest window of a grouped layer: every output block reads that many input blocks. */
static int64_t group_span(const nnp_conv2d_desc *d) {
  int64_t span = 0;
  for (int64_t ob = 0; ob < nnp_blocks(d->m); ob++) {
    int64_t b0, b1;
    group_window(d, ob, &b0, &b1);
    if (b1 - b0 > span) span = b1 - b0;
  }
  return span;
}

/* Grouped layers whose windows multiply at most 4x the real products: with its 4-wide
 * groups (exactly 4x) and 8-wide ones this way, resnext50_32x4d's step sum was 0.94x of
 * im2col on NCHW plus the two reorders around each layer (docs/kernels.md); 2-wide groups
 * (8x) keep im2col, unmeasured. */
bool nnp_bconv_groups_fit(const nnp_conv2d_desc *d) {
  if (d->group == 1 || (d->group == d->c && d->group == d->m)) return true;
  if (d->group < 1 || d->c % d->group || d->m % d->group) return false;
  return group_span(d) * NNP_BLOCK <= 4 * (d->c / d->group);
}

/* AVX2 (bench_conv_layers 1 1 "" auto|blocked, AMD EPYC Zen 3): the 6-pixel tile ran
 * grouped layers whose groups are whole blocks at 75-88% of the FMA peak, where the NCHW
 * direct kernel ran them at 31-72% (RegNet's 16-wide groups at stride 2 1.5-2.0x faster,
 * ResNeXt's 16- and 32-wide 1.3x). Groups of 4 and 8 channels are dense over a block of
 * mostly zero weights (0.55-1.8x), and dense layers lost to the GEMM (1x1 over many
 * channels 1.25-1.7x: each tile streams all of its block's weights), to Winograd
 * (1.5-2x) and the depthwise kernel (1.2-1.7x), so they stay NCHW. */
bool nnp_bconv_avx2_pays(const nnp_conv2d_desc *d) {
  const bool dw = d->group == d->c && d->group == d->m;
  return d->group > 1 && !dw && (d->c / d->group) % NNP_BLOCK == 0 && (d->m / d->group) % NNP_BLOCK == 0;
}

nnp_status nnp_bconv_prepare(const nnp_conv2d_desc *d, const float *w, const float *bias, int act, float act_min,
                             float act_max, bool generic, nnp_bconv_kernel **out) {
  *out = NULL;
  const bool dw = d->group > 1 && d->group == d->c && d->group == d->m;
  if (!nnp_bconv_groups_fit(d))
    return nnp_error(NNP_ERR_UNSUPPORTED,
                     "blocked conv: group %lld of %lld inputs and %lld outputs reads windows over 4x its groups' channels",
                     (long long)d->group, (long long)d->c, (long long)d->m);
  nnp_bconv_kernel *k = nnp_calloc(1, sizeof *k);
  if (!k) return nnp_error(NNP_ERR_NOMEM, "out of memory preparing a blocked conv");
  k->d = *d;
  k->depthwise = dw;
  const nnp_isa tiles = nnp_dispatch_pick(NNP_KF_BLOCKED_CONV, generic);
  k->generic = tiles == NNP_ISA_GENERIC;
  k->avx2 = tiles == NNP_ISA_AVX2;
  const bool grouped = !dw && d->group > 1;
  const int64_t cg = dw ? d->c : d->c / d->group, mg = d->m / d->group; /* a group's inputs and outputs */
  k->cb_x = nnp_blocks(d->c);
  k->cb = grouped ? group_span(d) : k->cb_x; /* input blocks an output block reads */
  k->mb = nnp_blocks(d->m);
  k->step = 2;
  if (grouped) { /* each block's window, moved left where it would end past the tensor */
    k->in0 = nnp_malloc((size_t)k->mb * sizeof *k->in0);
    if (!k->in0) {
      nnp_bconv_destroy(k);
      return nnp_error(NNP_ERR_NOMEM, "out of memory preparing a blocked conv");
    }
    for (int64_t ob = 0; ob < k->mb; ob++) {
      int64_t b0, b1;
      group_window(d, ob, &b0, &b1);
      k->in0[ob] = b0 < k->cb_x - k->cb ? b0 : k->cb_x - k->cb;
    }
    /* a pair's two blocks must read the same window */
    for (int64_t ob = 0; ob + 1 < k->mb; ob += 2)
      if (k->in0[ob] != k->in0[ob + 1]) k->step = 1;
  }
  k->ep.act = act;
  k->ep.act_min = act_min;
  k->ep.act_max = act_max;
  const int64_t taps = d->kh * d->kw;
  if (!dw && !k->generic && nnp_wino_fits(d)) { /* Winograd packs its own weights: no direct tiles */
    nnp_status st = nnp_wino_prepare(d, w, bias, act, act_min, act_max, &k->wino);
    if (st != NNP_OK) nnp_bconv_destroy(k);
    else *out = k;
    return st;
  }
  const int64_t nw = dw ? k->cb * taps * NNP_BLOCK : k->mb * k->cb * taps * NNP_BLOCK * NNP_BLOCK;
  k->w = nnp_aligned_alloc((size_t)nw * sizeof(float));
  k->bias = nnp_aligned_alloc((size_t)(k->mb * NNP_BLOCK) * sizeof(float));
  if (!k->w || !k->bias) {
    nnp_bconv_destroy(k);
    return nnp_error(NNP_ERR_NOMEM, "out of memory packing blocked conv weights");
  }
  if (!dw && !k->generic && !k->avx2 && (d->sw == 1 || d->sw == 2) &&
      (2 * d->ow <= NNP_BCONV_WIDE_PX || (d->ow <= NNP_BCONV_WIDE_PX && taps == 1))) {
    /* a chunk's weights for two output blocks in half of the 48 KB L1 (3x3: one input
     * block, 18 KB; 1x1: twelve); a block pair whose weights fit whole is left alone.
     * Planes 8 to 14 wide: 1x1 only (resnet18's 3x3 layers on 14x14 planes were 2% slower
     * in chunks, EfficientNet-Lite0's 1x1 layers over 480 and 672 channels faster) */
    const int64_t per_block = pair_block_bytes(d);
    const int64_t chunk = 24576 / per_block > 1 ? 24576 / per_block : 1;
    if (chunk < k->cb) k->chunk = chunk;
  }
  memset(k->w, 0, (size_t)nw * sizeof(float));
  memset(k->bias, 0, (size_t)(k->mb * NNP_BLOCK) * sizeof(float));
  if (bias) memcpy(k->bias, bias, (size_t)d->m * sizeof(float));
  for (int64_t m = 0; m < d->m; m++) {
    const int64_t ob = m / NNP_BLOCK, l = m % NNP_BLOCK;
    if (dw) {
      for (int64_t t = 0; t < taps; t++) k->w[(ob * taps + t) * NNP_BLOCK + l] = w[m * taps + t];
      continue;
    }
    /* ic: within m's group; li: that input channel within the input blocks ob reads */
    const int64_t first = k->in0 ? k->in0[ob] * NNP_BLOCK : 0; /* their first channel */
    for (int64_t ic = 0; ic < cg; ic++) {
      const int64_t li = (d->group == 1 ? 0 : m / mg * cg) + ic - first;
      for (int64_t t = 0; t < taps; t++)
        k->w[(((ob * k->cb + li / NNP_BLOCK) * taps + t) * NNP_BLOCK + li % NNP_BLOCK) * NNP_BLOCK + l] =
            w[(m * cg + ic) * taps + t];
    }
  }
  *out = k;
  return NNP_OK;
}

void nnp_bconv_destroy(nnp_bconv_kernel *k) {
  if (!k) return;
  nnp_wino_destroy(k->wino);
  nnp_aligned_free(k->w);
  nnp_free(k->in0);
  nnp_aligned_free(k->bias);
  nnp_free(k);
}

bool nnp_bconv_generic(const nnp_bconv_kernel *k) { return k->generic; }
bool nnp_bconv_depthwise(const nnp_bconv_kernel *k) { return k->depthwise; }
bool nnp_bconv_avx2(const nnp_bconv_kernel *k) { return k->avx2; }
bool nnp_bconv_winograd(const nnp_bconv_kernel *k) { return k->wino != NULL; }

/* Bias, residual, activation; the lanes past m are stored as 0 (act(0) need not be 0:
 * Clip with a positive minimum, Sigmoid), so the next layer may read whole blocks. */
static void store16(const nnp_bconv_kernel *k, int64_t ob, const float *acc, const float *r, float *y) {
  const float *b = k->bias + ob * NNP_BLOCK;
  const int64_t valid = k->d.m - ob * NNP_BLOCK;
  for (int l = 0; l < NNP_BLOCK; l++) {
    float v = acc[l] + b[l];
    if (r) v += r[l];
    y[l] = l < valid ? nnp_act_apply(&k->ep, v) : 0.0f;
  }
}

void nnp_bconv_dense_row_generic(const nnp_bconv_kernel *k, const float *x, float *y, const float *r, int64_t ob,
                                 int64_t oh) {
  const nnp_conv2d_desc *d = &k->d;
  const int64_t taps = d->kh * d->kw;
  const float *wb = k->w + ob * k->cb * taps * NNP_BLOCK * NNP_BLOCK;
  for (int64_t ow = 0; ow < d->ow; ow++) {
    float acc[NNP_BLOCK] = {0};
    for (int64_t cb = 0; cb < k->cb; cb++) {
      const int64_t cvalid = d->c - cb * NNP_BLOCK < NNP_BLOCK ? d->c - cb * NNP_BLOCK : NNP_BLOCK;
      for (int64_t kh = 0; kh < d->kh; kh++) {
        const int64_t ih = oh * d->sh - d->ph + kh * d->dh;
        if (ih < 0 || ih >= d->h) continue;
        for (int64_t kw = 0; kw < d->kw; kw++) {
          const int64_t iw = ow * d->sw - d->pw + kw * d->dw;
          if (iw < 0 || iw >= d->w) continue;
          const float *xp = x + ((cb * d->h + ih) * d->w + iw) * NNP_BLOCK;
          for (int64_t i = 0; i < cvalid; i++) {
            const float *wv = wb + ((cb * taps + kh * d->kw + kw) * NNP_BLOCK + i) * NNP_BLOCK;
            for (int l = 0; l < NNP_BLOCK; l++) acc[l] += xp[i] * wv[l];
          }
        }
      }
    }
    const int64_t o = ((ob * d->oh + oh) * d->ow + ow) * NNP_BLOCK;
    store16(k, ob, acc, r ? r + o : NULL, y + o);
  }
}

void nnp_bconv_dw_row_generic(const nnp_bconv_kernel *k, const float *x, float *y, const float *r, int64_t cb,
                           int64_t oh) {
  const nnp_conv2d_desc *d = &k->d;
  const float *wb = k->w + cb * d->kh * d->kw * NNP_BLOCK;
  for (int64_t ow = 0; ow < d->ow; ow++) {
    float acc[NNP_BLOCK] = {0};
    for (int64_t kh = 0; kh < d->kh; kh++) {
      const int64_t ih = oh * d->sh - d->ph + kh * d->dh;
      if (ih < 0 || ih >= d->h) continue;
      for (int64_t kw = 0; kw < d->kw; kw++) {
        const int64_t iw = ow * d->sw - d->pw + kw * d->dw;
        if (iw < 0 || iw >= d->w) continue;
        const float *xp = x + ((cb * d->h + ih) * d->w + iw) * NNP_BLOCK;
        const float *wv = wb + (kh * d->kw + kw) * NNP_BLOCK;
        for (int l = 0; l < NNP_BLOCK; l++) acc[l] += xp[l] * wv[l];
      }
    }
    const int64_t o = ((cb * d->oh + oh) * d->ow + ow) * NNP_BLOCK;
    store16(k, cb, acc, r ? r + o : NULL, y + o);
  }
}

typedef struct run_ctx {
  const nnp_bconv_kernel *k;
  const float *x, *r;
  float *y;
  int64_t groups; /* row tasks per image and output row: output block pairs, or channel blocks */
  int rows;       /* output rows per task: 2 where the AVX-512 wide tile takes two (7x7 planes) */
  int64_t rtasks; /* row tasks per group: oh / rows, rounded up */
  bool row_major; /* run_rows' tasks row outer, group inner */
  bool images_inner; /* dense, batch: group outer, image inner (a block pair's weights stay in cache) */
} run_ctx;

/* The first input block output block ob reads: its group's (dense and depthwise: x). */
static const float *group_input(const nnp_bconv_kernel *k, const float *x, int64_t ob) {
  return k->in0 ? x + k->in0[ob] * k->d.h * k->d.w * NNP_BLOCK : x;
}

/* The image and group of task index q = t / rtasks (run_planes, run_rows without
 * row_major): image outer, or with images_inner group outer. */
static void task_image_group(const run_ctx *c, int64_t q, int64_t *n, int64_t *g) {
  const int64_t images = c->k->d.n;
  *n = c->images_inner ? q % images : q / c->groups;
  *g = c->images_inner ? q / images : q % c->groups;
}

/* k->chunk: task t = ((image * groups) + block pair) * rtasks + row group (images_inner:
 * ((block pair * images) + image) * rtasks + row group), the groups c->rows rows each (the
 * last may be shorter). */
static void run_planes(void *p, int64_t begin, int64_t end) {
  const run_ctx *c = p;
  const nnp_bconv_kernel *k = c->k;
  const nnp_conv2d_desc *d = &k->d;
  const int64_t xs = k->cb_x * d->h * d->w * NNP_BLOCK, ys = k->mb * d->oh * d->ow * NNP_BLOCK;
  for (int64_t t = begin; t < end; t++) {
    int64_t n, pair;
    task_image_group(c, t / c->rtasks, &n, &pair);
    const int64_t oh0 = t % c->rtasks * c->rows, ob = pair * k->step;
    const int64_t oh1 = oh0 + c->rows < d->oh ? oh0 + c->rows : d->oh;
    const int nb = k->step == 2 && ob + 1 < k->mb ? 2 : 1;
    nnp_bconv_dense_plane_avx512(k, group_input(k, c->x + n * xs, ob), c->y + n * ys, c->r ? c->r + n * ys : NULL,
                                 ob, nb, oh0, oh1);
  }
}

/* Task t = ((image * groups) + group) * rtasks + row task, or with row_major
 * ((image * rtasks) + row task) * groups + group: each computes one or two output rows of
 * one or two output blocks from its index alone (threadpool.h's contract). */
static void run_rows(void *p, int64_t begin, int64_t end) {
  const run_ctx *c = p;
  const nnp_bconv_kernel *k = c->k;
  const nnp_conv2d_desc *d = &k->d;
  const int64_t xs = k->cb_x * d->h * d->w * NNP_BLOCK, ys = k->mb * d->oh * d->ow * NNP_BLOCK;
  for (int64_t t = begin; t < end; t++) {
    const int64_t oh = (c->row_major ? t / c->groups % c->rtasks : t % c->rtasks) * c->rows;
    int64_t n, gi;
    if (c->row_major) gi = t % c->groups, n = t / c->rtasks / c->groups;
    else task_image_group(c, t / c->rtasks, &n, &gi);
    const float *x = c->x + n * xs, *r = c->r ? c->r + n * ys : NULL;
    float *y = c->y + n * ys;
    if (k->depthwise) {
      if (k->generic) nnp_bconv_dw_row_generic(k, x, y, r, gi, oh);
      else if (k->avx2) nnp_bconv_dw_row_avx2(k, x, y, r, gi, oh);
      else nnp_bconv_dw_row_avx512(k, x, y, r, gi, oh);
      continue;
    }
    const int64_t ob = gi * k->step;
    const int nb = k->step == 2 && ob + 1 < k->mb ? 2 : 1;
    x = group_input(k, x, ob);
    if (k->generic) {
      for (int b = 0; b < nb; b++) nnp_bconv_dense_row_generic(k, x, y, r, ob + b, oh);
    } else if (k->avx2) {
      nnp_bconv_dense_row_avx2(k, x, y, r, ob, nb, oh);
    } else {
      nnp_bconv_dense_row_avx512(k, x, y, r, ob, nb, oh, oh + c->rows <= d->oh ? c->rows : 1);
    }
  }
}

size_t nnp_bconv_scratch_bytes(const nnp_bconv_kernel *k) { return k->wino ? nnp_wino_scratch_bytes(k->wino) : 0; }

void nnp_bconv_run(const nnp_bconv_kernel *k, const float *x, float *y, const float *residual, void *scratch,
                   nnp_threadpool *tp) {
  const nnp_conv2d_desc *d = &k->d;
  if (k->wino) {
    nnp_wino_run(k->wino, x, y, residual, scratch, tp);
    return;
  }
  run_ctx c = {.k = k, .x = x, .r = residual, .y = y, .groups = k->depthwise ? k->cb : (k->mb + k->step - 1) / k->step,
               .rows = 1};
  const bool avx512 = !k->generic && !k->avx2; /* the AVX-512 file's two-row and plane tasks */
  if (!k->depthwise && avx512 && (d->sw == 1 || d->sw == 2) && 2 * d->ow <= NNP_BCONV_WIDE_PX) c.rows = 2;
  /* A batch of a dense layer: each block pair through all the images before the next
   * pair reads the weights from memory once and each image's input once per pair; image
   * outer reads each input once and the weights once per image. The order that reads
   * less (resnet18 at batch 16: its 512-channel layers on 7x7 planes, 9.4 MB of weights
   * per image, take the pairs outer) */
  const int64_t block_plane_bytes = d->h * d->w * NNP_BLOCK * (int64_t)sizeof(float);
  const int64_t in_bytes = k->cb * block_plane_bytes, image_bytes = k->cb_x * block_plane_bytes; /* a task's, an image's */
  /* per task: k->step output blocks (a pair, or one of a grouped layer) over their window */
  const int64_t npairs = c.groups, w_bytes = npairs * k->step * k->cb * (pair_block_bytes(d) / 2);
  c.images_inner = d->n > 1 && !k->depthwise && w_bytes + npairs * d->n * in_bytes < d->n * (w_bytes + image_bytes);
  if (k->chunk) {
    /* planes at most 7 wide and 8 high: whole planes where the block pairs share out
     * evenly over the threads (or are many), else 4 rows (mobilenet_v2's 160 and 320
     * channels are 5 pairs); wider planes: 4 rows, 4 one-row tiles */
    const int64_t pairs = d->n * c.groups, threads = tp ? nnp_threadpool_threads(tp) : 1;
    const bool whole = 2 * d->ow <= NNP_BCONV_WIDE_PX && d->oh <= 2 * NNP_BCONV_PLANE_TILES &&
                       (pairs % threads == 0 || pairs >= 8 * threads);
    c.rows = whole ? (int)d->oh : 4;
    c.rtasks = (d->oh + c.rows - 1) / c.rows;
    nnp_threadpool_run(tp, run_planes, &c, pairs * c.rtasks);
    return;
  }
  c.rtasks = (d->oh + c.rows - 1) / c.rows;
  /* Layers bound by memory split the plane by rows over the threads, the same way in
   * consecutive layers, so each thread reads the rows it wrote: depthwise rows, and 1x1
   * layers whose block pair's weights fit L1 (32 KB), row outer; weight-heavy ones pair
   * outer. */
  const bool one_by_one = d->kh == 1 && d->kw == 1;
  /* Other dense layers, one image: a thread that takes half of the rows reads half of
   * the input and all of the weights, one that takes half of the block pairs the
   * reverse; rows (homed, row outer) where the weights are the smaller (resnet18's 3x3
   * layers on 56x56, 1-3% each, 10% for the strided one), pairs (the shared counter)
   * otherwise. Batches keep the shared counter: its chunks, image outer, already give
   * each thread whole images, and row outer measured 3% slower at batch 16. */
  const bool split_rows = d->n == 1 && !k->depthwise && !one_by_one && w_bytes < in_bytes && !k->in0;
  c.row_major = k->depthwise || split_rows || (c.rows == 1 && one_by_one && k->cb * pair_block_bytes(d) <= 32768);
  /* depthwise and 1x1 layers are bound by memory: one contiguous share of the tasks per
   * thread (threadpool.h) */
  if (k->depthwise || one_by_one || split_rows) nnp_threadpool_run_homed(tp, run_rows, &c, d->n * c.groups * c.rtasks);
  else nnp_threadpool_run(tp, run_rows, &c, d->n * c.groups * c.rtasks);
}
