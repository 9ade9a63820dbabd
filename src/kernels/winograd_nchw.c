/* Winograd F(2x2, 3x3) on NCHW planes (kernels/winograd_nchw.h): the weight transform,
 * the three passes of a run (input tiles, the 16 products on the SGEMM, outputs) and
 * the portable transforms. */
#include "kernels/winograd_nchw.h"

#include <string.h>

#include "kernels/dispatch.h"
#include "kernels/gemm.h"
#include "nnperf/alloc.h"

#define POS 16 /* positions of a 4x4 tile */

struct nnp_wnc {
  nnp_wnc_geom g;
  int64_t n;
  float *u;          /* POS packed A operands (M x C each), a_floats apart */
  size_t a_floats;
  nnp_wnc_input_fn input;
  nnp_wnc_output_fn output;
  nnp_sgemm_tile_fn tile;
  int64_t mp, np; /* the products' row panels (of M) and column panels (of N) */
};

bool nnp_wnc_applies(const nnp_conv2d_desc *d) {
  const int64_t pe_h = d->oh + 2 - d->h - d->ph, pe_w = d->ow + 2 - d->w - d->pw; /* end padding */
  return d->group == 1 && d->kh == 3 && d->kw == 3 && d->sh == 1 && d->sw == 1 && d->dh == 1 && d->dw == 1 &&
         d->ph >= 0 && d->ph <= 1 && d->pw >= 0 && d->pw <= 1 && pe_h >= 0 && pe_h <= 1 && pe_w >= 0 && pe_w <= 1 &&
         d->oh >= 1 && d->ow >= 1 && d->ow <= NNP_WNC_MAX_OW;
}

static nnp_wnc_geom geometry(const nnp_conv2d_desc *d) {
  nnp_wnc_geom g = {.c = d->c, .m = d->m, .h = d->h, .w = d->w, .oh = d->oh, .ow = d->ow, .ph = d->ph, .pw = d->pw,
                    .th = (d->oh + 1) / 2, .tw = (d->ow + 1) / 2};
  g.T = g.th * g.tw;
  g.N = (g.T + NNP_SGEMM_NR - 1) / NNP_SGEMM_NR * NNP_SGEMM_NR;
  /* slack for the transforms' whole vectors (7 lanes past T, and the zeros' last
   * vector from T up to 7 past N); a row stride of a multiple of 512 bytes would put
   * the GEMM's reads of one B panel (K rows of V, ldt apart) into a few L1 sets */
  g.ldt = g.N + 8;
  if (g.ldt % 128 == 0) g.ldt += 8;
  return g;
}

/* Where the products outweigh the transforms, from the side-by-side grid in kernels.md
 * (3x3 pad 1, planes 7..56, 16..512 channels in and out, 1 thread): the input
 * transform costs per input channel and the output one per output channel, so few
 * output channels (16-31) pay only on planes of 28x28 and more with at most 64 inputs,
 * 32-63 outputs with at most 64 inputs (32 on planes under 14x14) or on 28x28 planes,
 * 64 and more with 32 inputs, or 16 from 14x14 up with at most 256 outputs (56x56, 16
 * -> 512 channels was 1.3-1.5x slower: the output transform of 512 channels and M,
 * 27 MB, streamed from memory, against products over 16 inputs). Never where V and M
 * of one image would pass WNC_MAX_SCRATCH: they are the plan's scratch, and on large
 * images (a 512x512 plane of 64 channels: 537 MB) the direct kernel, which needs none,
 * stays (bands of tile rows would lift this). */
#define WNC_MAX_SCRATCH ((int64_t)64 << 20)
bool nnp_wnc_pays(const nnp_conv2d_desc *d) {
  if (!nnp_wnc_applies(d) || d->oh < 7 || d->ow < 7 || d->c < 16 || d->m < 16) return false;
  const nnp_wnc_geom g = geometry(d);
  if ((int64_t)sizeof(float) * POS * (d->c + d->m) * g.ldt > WNC_MAX_SCRATCH) return false;
  const int64_t plane = d->oh * d->ow;
  if (d->m >= 64) return d->c >= 32 || (plane >= 14 * 14 && d->m <= 256);
  if (d->m >= 32) return (d->c <= 64 && (d->c >= 32 || plane >= 14 * 14)) || plane >= 28 * 28;
  return plane >= 28 * 28 && d->c <= 64;
}

void nnp_wnc_destroy(nnp_wnc *k) {
  if (!k) return;
  nnp_aligned_free(k->u);
  nnp_free(k);
}

/* U = G g G^T for one 3x3 kernel g, G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1], in
 * double, rounded once (as kernels/winograd.c). */
static void weight_tile(const float *g, float u[POS]) {
  double t[4][3];
  for (int j = 0; j < 3; j++) {
    const double g0 = g[j], g1 = g[3 + j], g2 = g[6 + j];
    t[0][j] = g0;
    t[1][j] = 0.5 * (g0 + g1 + g2);
    t[2][j] = 0.5 * (g0 - g1 + g2);
    t[3][j] = g2;
  }
  for (int i = 0; i < 4; i++) {
    u[i * 4 + 0] = (float)t[i][0];
    u[i * 4 + 1] = (float)(0.5 * (t[i][0] + t[i][1] + t[i][2]));
    u[i * 4 + 2] = (float)(0.5 * (t[i][0] - t[i][1] + t[i][2]));
    u[i * 4 + 3] = (float)t[i][2];
  }
}

nnp_status nnp_wnc_prepare(const nnp_conv2d_desc *d, const float *w, bool generic, nnp_wnc **out) {
  *out = NULL;
  if (!nnp_wnc_applies(d)) return nnp_error(NNP_ERR_INVALID, "winograd: not a 3x3 stride-1 convolution it serves");
  nnp_wnc *k = nnp_calloc(1, sizeof *k);
  float *u = NULL;
  if (!k) goto oom;
  k->g = geometry(d);
  k->n = d->n;
  k->input = generic || !nnp_wnc_avx2_built() ? nnp_wnc_input_channel_generic : nnp_wnc_input_channel_avx2;
  k->output = generic || !nnp_wnc_avx2_built() ? nnp_wnc_output_row_generic : nnp_wnc_output_row_avx2;
  /* the products on the table's tile whatever the transforms (the tests compare those) */
  k->tile = nnp_dispatch_portable(NNP_KF_GEMM, false) ? nnp_sgemm_tile_generic : nnp_sgemm_tile_fast();
  k->mp = (d->m + NNP_SGEMM_MR - 1) / NNP_SGEMM_MR;
  k->np = k->g.N / NNP_SGEMM_NR;
  k->a_floats = nnp_sgemm_packed_a_floats(d->m, d->c);
  k->u = nnp_aligned_alloc(POS * k->a_floats * sizeof(float));
  u = nnp_malloc((size_t)(POS * d->m * d->c) * sizeof(float)); /* [xi][m][c] */
  if (!k->u || !u) goto oom;
  for (int64_t oc = 0; oc < d->m; oc++)
    for (int64_t ic = 0; ic < d->c; ic++) {
      float t[POS];
      weight_tile(w + (oc * d->c + ic) * 9, t);
      for (int xi = 0; xi < POS; xi++) u[(xi * d->m + oc) * d->c + ic] = t[xi];
    }
  for (int xi = 0; xi < POS; xi++)
    nnp_sgemm_pack_a(d->m, d->c, u + xi * d->m * d->c, d->c, 1, k->u + xi * k->a_floats);
  nnp_free(u);
  *out = k;
  return NNP_OK;
oom:
  nnp_free(u);
  nnp_wnc_destroy(k);
  return nnp_error(NNP_ERR_NOMEM, "out of memory preparing a Winograd conv");
}

size_t nnp_wnc_scratch_bytes(const nnp_wnc *k) {
  return (size_t)(POS * (k->g.c + k->g.m) * k->g.ldt) * sizeof(float);
}

int64_t nnp_wnc_buf_stride(const nnp_wnc_geom *g) { return (g->tw + 7) / 8 * 16 + 8; }

/* The four input rows of tile row ty, zero-bordered: row i of buf (bs floats apart) is
 * input row 2 ty - ph + i, column j input column j - pw. */
static void fill_rows(const nnp_wnc_geom *g, const float *xc, int64_t ty, float *buf) {
  const int64_t bs = nnp_wnc_buf_stride(g), n = g->w < bs - g->pw ? g->w : bs - g->pw;
  for (int i = 0; i < 4; i++) {
    const int64_t r = 2 * ty - g->ph + i;
    float *row = buf + i * bs;
    if (r < 0 || r >= g->h) {
      memset(row, 0, (size_t)bs * sizeof(float));
      continue;
    }
    /* only the padding around the copied row is zeroed */
    for (int64_t j = 0; j < g->pw; j++) row[j] = 0.0f;
    memcpy(row + g->pw, xc + r * g->w, (size_t)n * sizeof(float));
    memset(row + g->pw + n, 0, (size_t)(bs - g->pw - n) * sizeof(float));
  }
}

/* B^T d B of one tile, d read from the four rows at column 2 tx; the order of the adds
 * is the AVX2 one's (columns first, then rows), so both give the same bits. */
static void input_row_generic(const nnp_wnc_geom *g, const float *xc, float *vc, int64_t vs, int64_t ty) {
  float buf[4 * (NNP_WNC_MAX_OW + 32)];
  const int64_t bs = nnp_wnc_buf_stride(g);
  fill_rows(g, xc, ty, buf);
  for (int64_t tx = 0; tx < g->tw; tx++) {
    float r[4][4];
    for (int i = 0; i < 4; i++) {
      const float *d = buf + i * bs + 2 * tx;
      r[i][0] = d[0] - d[2];
      r[i][1] = d[1] + d[2];
      r[i][2] = d[2] - d[1];
      r[i][3] = d[1] - d[3];
    }
    float *v = vc + ty * g->tw + tx;
    for (int j = 0; j < 4; j++) {
      v[(0 * 4 + j) * vs] = r[0][j] - r[2][j];
      v[(1 * 4 + j) * vs] = r[1][j] + r[2][j];
      v[(2 * 4 + j) * vs] = r[2][j] - r[1][j];
      v[(3 * 4 + j) * vs] = r[1][j] - r[3][j];
    }
  }
}

void nnp_wnc_input_channel_generic(const nnp_wnc_geom *g, const float *xc, float *vc, int64_t vs) {
  for (int64_t ty = 0; ty < g->th; ty++) input_row_generic(g, xc, vc, vs, ty);
  for (int xi = 0; xi < POS; xi++) memset(vc + xi * vs + g->T, 0, (size_t)(g->N - g->T) * sizeof(float));
}

/* A^T m A of one tile (rows first, then columns), then bias, residual, activation. */
void nnp_wnc_output_row_generic(const nnp_wnc_geom *g, const float *mm, int64_t ms, float *ym, const float *rm,
                                float bias, const nnp_epilogue *ep, int64_t ty) {
  for (int64_t tx = 0; tx < g->tw; tx++) {
    const float *m = mm + ty * g->tw + tx;
    float s[2][4];
    for (int j = 0; j < 4; j++) {
      s[0][j] = m[(0 * 4 + j) * ms] + m[(1 * 4 + j) * ms] + m[(2 * 4 + j) * ms];
      s[1][j] = m[(1 * 4 + j) * ms] - m[(2 * 4 + j) * ms] - m[(3 * 4 + j) * ms];
    }
    for (int i = 0; i < 2; i++) {
      const int64_t oy = 2 * ty + i;
      if (oy >= g->oh) break;
      const float out[2] = {s[i][0] + s[i][1] + s[i][2], s[i][1] - s[i][2] - s[i][3]};
      for (int j = 0; j < 2 && 2 * tx + j < g->ow; j++) {
        const int64_t p = oy * g->ow + 2 * tx + j;
        float v = out[j] + bias;
        if (rm) v += rm[p];
        ym[p] = ep ? nnp_act_apply(ep, v) : v;
      }
    }
  }
}

typedef struct wnc_job {
  const nnp_wnc *k;
  const float *x, *r;
  float *y, *v, *m;
  const nnp_epilogue *ep;
} wnc_job;

/* Task t = input channel (its tile rows in order: winograd_nchw.h). */
static void input_tasks(void *p, int64_t b, int64_t e) {
  const wnc_job *j = p;
  const nnp_wnc_geom *g = &j->k->g;
  const int64_t vs = g->c * g->ldt;
  for (int64_t c = b; c < e; c++) j->k->input(g, j->x + c * g->h * g->w, j->v + c * g->ldt, vs);
}

/* Task t = (position xi * np + column panel) * mp + row panel: one MR x NR tile of
 * M_xi = U_xi V_xi over all of K = C, V read in place (rows ldt apart). All 16 products
 * in one pass of the pool: 16 GEMM calls cost 16 barriers, which on a 7x7 plane were
 * as long as the products. Consecutive tasks share a B panel (C x 16 floats of V). */
static void product_tasks(void *p, int64_t b, int64_t e) {
  const wnc_job *j = p;
  const nnp_wnc *k = j->k;
  const nnp_wnc_geom *g = &k->g;
  for (int64_t t = b; t < e; t++) {
    const int64_t ip = t % k->mp, jp = t / k->mp % k->np, xi = t / k->mp / k->np;
    const int64_t i0 = ip * NNP_SGEMM_MR, j0 = jp * NNP_SGEMM_NR;
    const int mr = (int)(g->m - i0 < NNP_SGEMM_MR ? g->m - i0 : NNP_SGEMM_MR);
    k->tile(g->c, k->u + xi * k->a_floats + i0 * g->c, j->v + xi * g->c * g->ldt + j0, g->ldt,
            j->m + (xi * g->m + i0) * g->ldt + j0, g->ldt, mr, NNP_SGEMM_NR, false, NULL, i0, j0);
  }
}

/* Task t = output channel * th + tile row. */
static void output_tasks(void *p, int64_t b, int64_t e) {
  const wnc_job *j = p;
  const nnp_wnc_geom *g = &j->k->g;
  const int64_t P = g->oh * g->ow;
  for (int64_t t = b; t < e; t++) {
    const int64_t m = t / g->th, ty = t % g->th;
    const float bias = j->ep && j->ep->bias_kind == NNP_BIAS_ROW ? j->ep->bias[m] : 0.0f;
    j->k->output(g, j->m + m * g->ldt, g->m * g->ldt, j->y + m * P, j->r ? j->r + m * P : NULL, bias, j->ep, ty);
  }
}

void nnp_wnc_run(const nnp_wnc *k, const float *x, float *y, const nnp_epilogue *ep, void *scratch,
                 nnp_threadpool *tp) {
  const nnp_wnc_geom *g = &k->g;
  const int64_t xs = g->c * g->h * g->w, ys = g->m * g->oh * g->ow;
  float *v = scratch, *m = v + POS * g->c * g->ldt;
  for (int64_t n = 0; n < k->n; n++) {
    /* all of the image's input is read into V before any output is written: y may alias x */
    wnc_job j = {.k = k, .x = x + n * xs, .r = ep && ep->residual ? ep->residual + n * ys : NULL, .y = y + n * ys,
                 .v = v, .m = m, .ep = ep};
    nnp_threadpool_run(tp, input_tasks, &j, g->c);
    nnp_threadpool_run(tp, product_tasks, &j, POS * k->np * k->mp);
    nnp_threadpool_run(tp, output_tasks, &j, g->m * g->th);
  }
}
