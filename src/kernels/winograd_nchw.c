/* Winograd F(2x2, 3x3) on NCHW planes (kernels/winograd_nchw.h): the weight transform,
 * the three passes of a run (input tiles, the 16 products on the SGEMM, outputs) and
 * the portable transforms. */
#include "kernels/winograd_nchw.h"

#include <string.h>
#include <unistd.h>

#include "kernels/dispatch.h"
#include "kernels/gemm.h"
#include "kernels/winograd_tile.h"
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
  int64_t mp;          /* the products' row panels (of M) */
  int64_t band_rows;   /* > 0: tile rows per band (runs not in place go band by band) */
  int64_t slots;       /* bands in flight at most: one scratch slot each */
  int64_t slot_floats; /* V and M of one band */
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

/* The geometry of the band of tile rows [ty0, ty0 + rows) (of g's image). */
static nnp_wnc_geom band_geometry(const nnp_wnc_geom *g, int64_t ty0, int64_t rows) {
  nnp_wnc_geom b = *g;
  b.ty0 = ty0;
  b.th = rows;
  b.T = rows * g->tw;
  b.N = (b.T + NNP_SGEMM_NR - 1) / NNP_SGEMM_NR * NNP_SGEMM_NR;
  b.ldt = b.N + 8;
  if (b.ldt % 128 == 0) b.ldt += 8;
  return b;
}

/* Bands only where the image's V and M would not stay in the caches between the
 * stages (over WNC_BAND_MIN_WHOLE) and the transformed weights, read once per band, are
 * small (at most WNC_BAND_MAX_U, as the blocked kernel's bands, kernels/winograd.c);
 * tile rows per band so that its V and M are at most WNC_BAND_BYTES, to stay in the
 * core's L2 from the input stage to the output stage. Measured against the three
 * passes (kernels.md): 112x112, 64 -> 128 channels (V and M 38.6 MB) 0.71-0.74x; 56x56
 * 128 -> 256 (19.5 MB) 1.00-1.03x; 56x56 64 -> 64 (6.5 MB) 1.10-1.11x: smaller bands'
 * products run on fewer columns. Returns 0 for no bands. */
#define WNC_BAND_MIN_WHOLE ((int64_t)24 << 20)
#define WNC_BAND_MAX_U (512 * 1024)
#define WNC_BAND_BYTES (384 * 1024)
static int64_t auto_band_rows(const nnp_wnc_geom *g) {
  const int64_t whole = (int64_t)sizeof(float) * POS * (g->c + g->m) * g->ldt;
  if (whole <= WNC_BAND_MIN_WHOLE || (int64_t)sizeof(float) * POS * g->m * g->c > WNC_BAND_MAX_U) return 0;
  int64_t rows = WNC_BAND_BYTES / ((int64_t)sizeof(float) * POS * (g->c + g->m) * g->tw);
  if (rows < 1) rows = 1;
  return rows < g->th ? rows : 0;
}

nnp_status nnp_wnc_prepare(const nnp_conv2d_desc *d, const float *w, bool generic, int64_t band_rows,
                           nnp_wnc **out) {
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
  k->band_rows = band_rows == 0 ? auto_band_rows(&k->g) : band_rows < 0 ? 0 : band_rows;
  if (k->band_rows >= k->g.th) k->band_rows = 0;
  if (k->band_rows) {
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN); /* threads beyond it share slots */
    k->slots = cpus < 1 ? 1 : cpus > 64 ? 64 : cpus;
    const nnp_wnc_geom b = band_geometry(&k->g, 0, k->band_rows);
    k->slot_floats = POS * (b.c + b.m) * b.ldt;
  }
  k->a_floats = nnp_sgemm_packed_a_floats(d->m, d->c);
  k->u = nnp_aligned_alloc(POS * k->a_floats * sizeof(float));
  u = nnp_malloc((size_t)(POS * d->m * d->c) * sizeof(float)); /* [xi][m][c] */
  if (!k->u || !u) goto oom;
  for (int64_t oc = 0; oc < d->m; oc++)
    for (int64_t ic = 0; ic < d->c; ic++) {
      float t[POS];
      nnp_wino_weight_tile(w + (oc * d->c + ic) * 9, t);
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
  /* the whole image's V and M for a run in place, the bands' slots otherwise */
  const int64_t whole = POS * (k->g.c + k->g.m) * k->g.ldt, bands = k->slots * k->slot_floats;
  return (size_t)(whole > bands ? whole : bands) * sizeof(float);
}

int64_t nnp_wnc_buf_stride(const nnp_wnc_geom *g) { return (g->tw + 7) / 8 * 16 + 8; }

/* The four input rows of tile row ty, zero-bordered: row i of buf (bs floats apart) is
 * input row 2 ty - ph + i, column j input column j - pw. */
static void fill_rows(const nnp_wnc_geom *g, const float *xc, int64_t ty, float *buf) {
  const int64_t bs = nnp_wnc_buf_stride(g), n = g->w < bs - g->pw ? g->w : bs - g->pw;
  for (int i = 0; i < 4; i++) {
    const int64_t r = 2 * (g->ty0 + ty) - g->ph + i;
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
      const int64_t oy = 2 * (g->ty0 + ty) + i;
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
  const nnp_wnc_geom *g; /* the image's, or a band's */
  const float *x, *r;    /* the image's input and residual */
  float *y, *v, *m;
  const nnp_epilogue *ep;
} wnc_job;

/* Input channels [c0, c1) into V (each channel's tile rows in order: winograd_nchw.h). */
static void input_stage(const wnc_job *j, int64_t c0, int64_t c1) {
  const nnp_wnc_geom *g = j->g;
  for (int64_t c = c0; c < c1; c++) j->k->input(g, j->x + c * g->h * g->w, j->v + c * g->ldt, g->c * g->ldt);
}

/* Tasks [t0, t1), t = (position xi * column panels + column panel) * mp + row panel:
 * one MR x NR tile of M_xi = U_xi V_xi over all of K = C, V read in place (rows ldt
 * apart). All 16 products in one pass of the pool: 16 GEMM calls cost 16 barriers,
 * which on a 7x7 plane were as long as the products. Consecutive tasks share a B panel
 * (C x 16 floats of V). */
static void product_stage(const wnc_job *j, int64_t t0, int64_t t1) {
  const nnp_wnc *k = j->k;
  const nnp_wnc_geom *g = j->g;
  const int64_t np = g->N / NNP_SGEMM_NR;
  for (int64_t t = t0; t < t1; t++) {
    const int64_t ip = t % k->mp, jp = t / k->mp % np, xi = t / k->mp / np;
    const int64_t i0 = ip * NNP_SGEMM_MR, j0 = jp * NNP_SGEMM_NR;
    const int mr = (int)(g->m - i0 < NNP_SGEMM_MR ? g->m - i0 : NNP_SGEMM_MR);
    k->tile(g->c, k->u + xi * k->a_floats + i0 * g->c, j->v + xi * g->c * g->ldt + j0, g->ldt,
            j->m + (xi * g->m + i0) * g->ldt + j0, g->ldt, mr, NNP_SGEMM_NR, false, NULL, i0, j0);
  }
}

/* Tasks [t0, t1), t = output channel * th + tile row (of those M holds). */
static void output_stage(const wnc_job *j, int64_t t0, int64_t t1) {
  const nnp_wnc_geom *g = j->g;
  const int64_t P = g->oh * g->ow;
  for (int64_t t = t0; t < t1; t++) {
    const int64_t m = t / g->th, ty = t % g->th;
    const float bias = j->ep && j->ep->bias_kind == NNP_BIAS_ROW ? j->ep->bias[m] : 0.0f;
    j->k->output(g, j->m + m * g->ldt, g->m * g->ldt, j->y + m * P, j->r ? j->r + m * P : NULL, bias, j->ep, ty);
  }
}

static void input_tasks(void *p, int64_t b, int64_t e) { input_stage(p, b, e); }
static void product_tasks(void *p, int64_t b, int64_t e) { product_stage(p, b, e); }
static void output_tasks(void *p, int64_t b, int64_t e) { output_stage(p, b, e); }

typedef struct wnc_bands {
  wnc_job job;    /* the image (its g unused) */
  int64_t slots;  /* tasks: task s takes bands s, s + slots, ... with scratch slot s */
  float *scratch;
} wnc_bands;

/* Task s: its bands, each through the three stages alone, in scratch slot s (V and M of
 * one band, sized to stay in the core's L2 between the stages). */
static void band_tasks(void *p, int64_t b, int64_t e) {
  const wnc_bands *bs = p;
  const nnp_wnc *k = bs->job.k;
  for (int64_t s = b; s < e; s++)
    for (int64_t band = s; band * k->band_rows < k->g.th; band += bs->slots) {
      const int64_t ty0 = band * k->band_rows;
      const nnp_wnc_geom g = band_geometry(&k->g, ty0, ty0 + k->band_rows < k->g.th ? k->band_rows : k->g.th - ty0);
      wnc_job j = bs->job;
      j.g = &g;
      j.v = bs->scratch + s * k->slot_floats;
      j.m = j.v + POS * g.c * g.ldt;
      input_stage(&j, 0, g.c);
      product_stage(&j, 0, POS * (g.N / NNP_SGEMM_NR) * k->mp);
      output_stage(&j, 0, g.m * g.th);
      /* the tiles' output rows are [2 ty0, 2 (ty0 + th)): y rows no other band writes */
    }
}

void nnp_wnc_run(const nnp_wnc *k, const float *x, float *y, const nnp_epilogue *ep, void *scratch,
                 nnp_threadpool *tp) {
  const nnp_wnc_geom *g = &k->g;
  const int64_t xs = g->c * g->h * g->w, ys = g->m * g->oh * g->ow;
  /* bands write outputs while other bands still read inputs: not in place */
  const bool banded = k->band_rows > 0 && x != y;
  int64_t slots = 0; /* bands in flight: at most one per thread, per scratch slot and per band */
  if (banded) {
    const int64_t bands = (g->th + k->band_rows - 1) / k->band_rows, threads = nnp_threadpool_threads(tp);
    slots = threads < k->slots ? threads : k->slots;
    if (slots > bands) slots = bands;
  }
  for (int64_t n = 0; n < k->n; n++) {
    wnc_job j = {.k = k, .g = g, .x = x + n * xs, .r = ep && ep->residual ? ep->residual + n * ys : NULL,
                 .y = y + n * ys, .v = scratch, .m = (float *)scratch + POS * g->c * g->ldt, .ep = ep};
    if (banded) {
      wnc_bands b = {.job = j, .slots = slots, .scratch = scratch};
      nnp_threadpool_run(tp, band_tasks, &b, slots);
      continue;
    }
    /* all of the image's input is read into V before any output is written: y may alias x */
    nnp_threadpool_run(tp, input_tasks, &j, g->c);
    nnp_threadpool_run(tp, product_tasks, &j, POS * (g->N / NNP_SGEMM_NR) * k->mp);
    nnp_threadpool_run(tp, output_tasks, &j, g->m * g->th);
  }
}
