/* Winograd F(2x2, 3x3) (kernels/winograd.h): the weight transform, the products' 1x1
 * kernels and a run: three thread-pool passes (input tiles, products, outputs), or one
 * pass over bands of tile rows where the transformed weights are small. */
#include "kernels/winograd.h"

#include <stdlib.h>
#include <string.h>

#include "kernels/blocked_conv_impl.h"
#include "kernels/dispatch.h"
#include "kernels/winograd_tile.h"
#include "nnperf/alloc.h"

#define POS 16 /* positions of a 4x4 tile */
#define WINO_BAND_MAX_U (512 * 1024) /* bands where the transformed weights are at most this */
#define WINO_PASS_BYTES (8 << 20)     /* V and M of a pass over several images, at most */

struct nnp_wino {
  nnp_wino_geom g;
  int64_t n;
  nnp_bconv_kernel *gemm[POS]; /* position xi: the 1x1 conv [C x M] over the tiles */
  float *bias;                 /* mb * 16 floats, zero past m */
  nnp_epilogue ep;
  int64_t group; /* images per pass (their tiles stacked in V and M), 1 with bands */
  bool banded;   /* band_rows: the transformed weights fit L2 beside a band, no chunks */
};

bool nnp_wino_fits(const nnp_conv2d_desc *d) {
  return nnp_dispatch_isa(NNP_KF_WINOGRAD) == NNP_ISA_AVX512 && nnp_wino_avx512_built() && d->group == 1 && d->kh == 3 && d->kw == 3 &&
         d->sh == 1 && d->sw == 1 && d->dh == 1 && d->dw == 1 && d->ph <= 1 && d->pw <= 1 &&
         ((d->oh >= NNP_WINO_MIN_W && d->ow >= NNP_WINO_MIN_W) ||
          (d->n >= NNP_WINO_MIN_BATCH && d->oh >= NNP_WINO_MIN_W / 2 && d->ow >= NNP_WINO_MIN_W / 2));
}

void nnp_wino_destroy(nnp_wino *wk) {
  if (!wk) return;
  for (int i = 0; i < POS; i++) nnp_bconv_destroy(wk->gemm[i]);
  nnp_aligned_free(wk->bias);
  nnp_free(wk);
}

nnp_status nnp_wino_prepare(const nnp_conv2d_desc *d, const float *w, const float *bias, int act, float act_min,
                            float act_max, nnp_wino **out) {
  *out = NULL;
  nnp_wino *wk = nnp_calloc(1, sizeof *wk);
  if (!wk) return nnp_error(NNP_ERR_NOMEM, "out of memory preparing a Winograd conv");
  nnp_wino_geom *g = &wk->g;
  *g = (nnp_wino_geom){.c = d->c, .m = d->m, .h = d->h, .w = d->w, .oh = d->oh, .ow = d->ow, .ph = d->ph,
                       .pw = d->pw, .cb = nnp_blocks(d->c), .mb = nnp_blocks(d->m), .th = (d->oh + 1) / 2,
                       .tw = (d->ow + 1) / 2};
  /* A batch runs several images per pass where the transformed weights are large, so
   * each pass reads them once for all its images; V and M of a pass at most
   * WINO_PASS_BYTES (one image at least). Small weights (bands) take one image. */
  const int64_t u_bytes = POS * d->m * d->c * (int64_t)sizeof(float);
  const int64_t image_bytes = POS * (g->cb + g->mb) * g->th * g->tw * NNP_BLOCK * (int64_t)sizeof(float);
  wk->group = u_bytes <= WINO_BAND_MAX_U ? 1 : WINO_PASS_BYTES / image_bytes;
  if (wk->group < 1) wk->group = 1;
  if (wk->group > d->n) wk->group = d->n;
  g->vh = wk->group * g->th;
  g->vs = g->cb * g->vh * g->tw * NNP_BLOCK;
  g->ms = g->mb * g->vh * g->tw * NNP_BLOCK;
  wk->n = d->n;
  wk->ep = (nnp_epilogue){.act = act, .act_min = act_min, .act_max = act_max};
  wk->bias = nnp_aligned_alloc((size_t)(g->mb * NNP_BLOCK) * sizeof(float));
  float *u = nnp_malloc((size_t)(POS * d->m * d->c) * sizeof(float)); /* [xi][m][c] */
  nnp_status st = NNP_OK;
  if (!wk->bias || !u) {
    st = nnp_error(NNP_ERR_NOMEM, "out of memory preparing a Winograd conv");
    goto done;
  }
  memset(wk->bias, 0, (size_t)(g->mb * NNP_BLOCK) * sizeof(float));
  if (bias) memcpy(wk->bias, bias, (size_t)d->m * sizeof(float));
  for (int64_t oc = 0; oc < d->m; oc++)
    for (int64_t ic = 0; ic < d->c; ic++) {
      float t[POS];
      nnp_wino_weight_tile(w + (oc * d->c + ic) * 9, t);
      for (int xi = 0; xi < POS; xi++) u[(xi * d->m + oc) * d->c + ic] = t[xi];
    }
  /* each position's products: a 1x1 conv over the th x tw plane of tiles, no epilogue */
  const nnp_conv2d_desc p = {.n = 1, .c = d->c, .h = g->vh, .w = g->tw, .m = d->m, .oh = g->vh, .ow = g->tw,
                             .kh = 1, .kw = 1, .sh = 1, .sw = 1, .dh = 1, .dw = 1, .group = 1};
  for (int xi = 0; xi < POS && st == NNP_OK; xi++)
    st = nnp_bconv_prepare(&p, u + xi * d->m * d->c, NULL, NNP_ACT_NONE, 0.0f, 0.0f, false, &wk->gemm[xi]);
  /* bands where every band rereads the transformed weights from L2: at most 512 KB
   * (resnet18's 64-channel layers: 256 KB, 0.459 -> 0.431 ms on 2 threads; its
   * 128-channel ones, 1 MB, measured 0.37 -> 0.38-0.40 in bands and keep the passes) */
  wk->banded = st == NNP_OK && !wk->gemm[0]->chunk && u_bytes <= WINO_BAND_MAX_U;
done:
  nnp_free(u);
  if (st != NNP_OK) {
    nnp_wino_destroy(wk);
    return st;
  }
  *out = wk;
  return NNP_OK;
}

size_t nnp_wino_scratch_bytes(const nnp_wino *wk) { return (size_t)(POS * (wk->g.vs + wk->g.ms)) * sizeof(float); }

typedef struct wino_ctx {
  const nnp_wino *wk;
  const float *x, *r; /* the pass's first image */
  float *y;
  int64_t xs, ys;     /* floats from one image to the next in x and y (and r) */
  float *v, *m;       /* the pass's transformed inputs and products: POS x vs, POS x ms */
  int64_t vrows;      /* tile rows in use in V's and M's planes: th x the pass's images */
  int64_t pairs;
  int rows; /* tile rows per product task */
} wino_ctx;

/* Task t = channel block * vrows + row of V's plane (image * th + tile row). */
static void input_rows(void *p, int64_t begin, int64_t end) {
  const wino_ctx *c = p;
  const nnp_wino_geom *g = &c->wk->g;
  for (int64_t t = begin; t < end; t++) {
    const int64_t vr = t % c->vrows;
    nnp_wino_input_row_avx512(g, c->x + vr / g->th * c->xs, c->v, t / c->vrows, vr % g->th, vr);
  }
}

/* Rows [r0, r1) of position xi's 1x1 conv for the block pair from ob: in input-block
 * chunks where the 1x1 kernel takes them, else c->rows rows per tile call (two where the
 * plane of tiles is at most 7 wide). */
static void products(const wino_ctx *c, int xi, int64_t ob, int64_t r0, int64_t r1) {
  const nnp_wino_geom *g = &c->wk->g;
  const nnp_bconv_kernel *k = c->wk->gemm[xi];
  const int nb = ob + 1 < g->mb ? 2 : 1;
  const float *v = c->v + xi * g->vs;
  float *m = c->m + xi * g->ms;
  if (k->chunk) {
    nnp_bconv_dense_plane_avx512(k, v, m, NULL, ob, nb, r0, r1);
    return;
  }
  for (int64_t r = r0; r < r1; r += c->rows)
    nnp_bconv_dense_row_avx512(k, v, m, NULL, ob, nb, r, r + c->rows <= r1 ? c->rows : (int)(r1 - r));
}

/* Task t = (position * pairs + block pair) * row groups + row group: rows
 * [r0, r0 + c->rows) of the position's 1x1 conv, as nnp_bconv_run would cut them: one
 * tile's rows, or in input-block chunks the whole plane of at most 8 rows, else 4 rows,
 * per task. */
static void product_rows(void *p, int64_t begin, int64_t end) {
  const wino_ctx *c = p;
  const int64_t groups = (c->vrows + c->rows - 1) / c->rows;
  for (int64_t t = begin; t < end; t++) {
    const int64_t r0 = t % groups * c->rows, ob = t / groups % c->pairs * 2, xi = t / groups / c->pairs;
    products(c, (int)xi, ob, r0, r0 + c->rows < c->vrows ? r0 + c->rows : c->vrows);
  }
}

/* Task t = row of M's plane * mb + output block: row outer, so that the homed split
 * gives each thread a band of output rows (as the direct kernel's row split,
 * blocked_conv.c). */
static void output_rows(void *p, int64_t begin, int64_t end) {
  const wino_ctx *c = p;
  const nnp_wino *wk = c->wk;
  const nnp_wino_geom *g = &wk->g;
  for (int64_t t = begin; t < end; t++) {
    const int64_t vr = t / g->mb, i = vr / g->th;
    nnp_wino_output_row_avx512(g, &wk->ep, wk->bias, c->m, c->y + i * c->ys, c->r ? c->r + i * c->ys : NULL,
                               t % g->mb, vr % g->th, vr);
  }
}

/* Task t = band of WINO_BAND tile rows: the three passes for those rows alone, so that
 * the band's transformed tiles stay in the core's L2 between them (a 56x56 layer's V
 * and M are 6.4 MB, a band's 1.6 MB; bands of 2 and 4 tile rows were slower than the
 * passes, 7 and 14 faster). A band needs no other band's results: an input tile depends
 * on input rows only, and a product row or an output row on the same tile row. */
#define WINO_BAND 7
static void band_rows(void *p, int64_t begin, int64_t end) {
  const wino_ctx *c = p;
  const nnp_wino *wk = c->wk;
  const nnp_wino_geom *g = &wk->g;
  for (int64_t t = begin; t < end; t++) {
    const int64_t r0 = t * WINO_BAND, r1 = r0 + WINO_BAND < g->th ? r0 + WINO_BAND : g->th;
    for (int64_t cb = 0; cb < g->cb; cb++)
      for (int64_t r = r0; r < r1; r++) nnp_wino_input_row_avx512(g, c->x, c->v, cb, r, r);
    for (int xi = 0; xi < POS; xi++)
      for (int64_t ob = 0; ob < g->mb; ob += 2) products(c, xi, ob, r0, r1);
    for (int64_t r = r0; r < r1; r++)
      for (int64_t ob = 0; ob < g->mb; ob++)
        nnp_wino_output_row_avx512(g, &wk->ep, wk->bias, c->m, c->y, c->r, ob, r, r);
  }
}

void nnp_wino_run(const nnp_wino *wk, const float *x, float *y, const float *residual, void *scratch,
                  nnp_threadpool *tp) {
  const nnp_wino_geom *g = &wk->g;
  const int64_t xs = g->cb * g->h * g->w * NNP_BLOCK, ys = g->mb * g->oh * g->ow * NNP_BLOCK;
  for (int64_t n = 0; n < wk->n; n += wk->group) {
    const int64_t images = wk->n - n < wk->group ? wk->n - n : wk->group;
    wino_ctx c = {.wk = wk, .x = x + n * xs, .r = residual ? residual + n * ys : NULL, .y = y + n * ys,
                  .xs = xs, .ys = ys, .v = scratch, .m = (float *)scratch + POS * g->vs,
                  .vrows = images * g->th, .pairs = (g->mb + 1) / 2};
    const bool two = 2 * g->tw <= NNP_BCONV_WIDE_PX;
    c.rows = wk->gemm[0]->chunk ? (two && c.vrows <= 2 * NNP_BCONV_PLANE_TILES ? (int)c.vrows : NNP_BCONV_PLANE_TILES)
                                : (two ? 2 : 1);
    if (wk->banded) { /* one image per pass */
      nnp_threadpool_run_homed(tp, band_rows, &c, (g->th + WINO_BAND - 1) / WINO_BAND);
      continue;
    }
    nnp_threadpool_run_homed(tp, input_rows, &c, g->cb * c.vrows);
    nnp_threadpool_run(tp, product_rows, &c, POS * c.pairs * ((c.vrows + c.rows - 1) / c.rows));
    nnp_threadpool_run_homed(tp, output_rows, &c, c.vrows * g->mb);
  }
}
