#include "kernels/pool.h"

#include "kernels/dispatch.h"

#include <math.h>
#include <stdbool.h>

typedef struct pool_job {
  const nnp_pool2d_desc *d;
  int64_t hw;
  const void *x; /* float, or uint8_t for the uint8 MaxPool */
  void *y;
  bool avx2;        /* float MaxPool rows by nnp_maxpool_row_avx2 */
  bool planes_avx2; /* float MaxPool planes by nnp_maxpool_planes_avx2 */
} pool_job;

/* The outputs [*lo, *hi) of a row that column tap kw reaches inside the input row:
 * 0 <= o*sw - pw + kw < w. Empty (*lo >= *hi) when the tap never lands in the row. */
static void tap_outputs(const nnp_pool2d_desc *d, int64_t kw, int64_t *lo, int64_t *hi) {
  const int64_t first = d->pw - kw, last = d->w - 1 + d->pw - kw;
  *lo = first > 0 ? (first + d->sw - 1) / d->sw : 0;
  *hi = last < 0 ? 0 : last / d->sw + 1;
  if (*hi > d->ow) *hi = d->ow;
}

/* float32, row by row: each output starts from its first valid tap (a NaN there stays,
 * as in the reference), then every tap in (kh, kw) order updates the outputs it covers
 * with `v > best ? v : best` (a later NaN never wins, ties keep the first tap: the
 * reference's results bit for bit). The inner loops run over contiguous outputs with a
 * select the compiler turns into maxps; the per-output loop over its window before this
 * spent 4.3 ms of squeezenet1_0's 31 (docs/kernels.md). */
void nnp_maxpool_row_portable(const nnp_pool2d_desc *d, const float *xp, int64_t oh, float *yr) {
  int64_t h0, h1;
  nnp_pool_taps(oh, d->sh, d->ph, d->kh, d->h, &h0, &h1);
  const int64_t ihs = oh * d->sh - d->ph;
  for (int64_t o = 0; o < d->ow; o++) {
    int64_t w0, w1;
    nnp_pool_taps(o, d->sw, d->pw, d->kw, d->w, &w0, &w1);
    yr[o] = h0 < h1 && w0 < w1 ? xp[(ihs + h0) * d->w + o * d->sw - d->pw + w0] : -INFINITY;
  }
  for (int64_t kh = h0; kh < h1; kh++) {
    const float *row = xp + (ihs + kh) * d->w;
    for (int64_t kw = 0; kw < d->kw; kw++) {
      int64_t lo, hi;
      tap_outputs(d, kw, &lo, &hi);
      const int64_t off = kw - d->pw;
      if (d->sw == 1)
        for (int64_t o = lo; o < hi; o++) yr[o] = row[o + off] > yr[o] ? row[o + off] : yr[o];
      else if (d->sw == 2)
        for (int64_t o = lo; o < hi; o++) yr[o] = row[2 * o + off] > yr[o] ? row[2 * o + off] : yr[o];
      else
        for (int64_t o = lo; o < hi; o++) yr[o] = row[o * d->sw + off] > yr[o] ? row[o * d->sw + off] : yr[o];
    }
  }
}

void nnp_maxpool_outputs_portable(const nnp_pool2d_desc *d, const float *xp, int64_t oh, int64_t o0, int64_t o1,
                                  float *yr) {
  int64_t h0, h1;
  nnp_pool_taps(oh, d->sh, d->ph, d->kh, d->h, &h0, &h1);
  const int64_t ihs = oh * d->sh - d->ph;
  for (int64_t o = o0; o < o1; o++) {
    int64_t w0, w1;
    nnp_pool_taps(o, d->sw, d->pw, d->kw, d->w, &w0, &w1);
    const int64_t iws = o * d->sw - d->pw;
    float best = h0 < h1 && w0 < w1 ? xp[(ihs + h0) * d->w + iws + w0] : -INFINITY;
    for (int64_t kh = h0; kh < h1; kh++)
      for (int64_t kw = w0; kw < w1; kw++) {
        const float v = xp[(ihs + kh) * d->w + iws + kw];
        best = v > best ? v : best;
      }
    yr[o] = best;
  }
}

typedef void (*max_row_fn)(const nnp_pool2d_desc *d, const float *xp, int64_t oh, float *yr);

static void maxpool_range(void *p, int64_t b, int64_t e) {
  const pool_job *j = p;
  const nnp_pool2d_desc *d = j->d;
  if (j->planes_avx2) {
    nnp_maxpool_planes_avx2(d, j->x, j->y, b, e);
    return;
  }
  const max_row_fn row = j->avx2 ? nnp_maxpool_row_avx2 : nnp_maxpool_row_portable;
  for (int64_t pl = b; pl < e; pl++) {
    const float *xp = (const float *)j->x + pl * d->h * d->w;
    float *yp = (float *)j->y + pl * d->oh * d->ow;
    for (int64_t oh = 0; oh < d->oh; oh++) row(d, xp, oh, yp + oh * d->ow);
  }
}

/* uint8: every value is >= 0, so a row of zeros is the identity of max and padding can
 * never win: one branchless max per (tap, output) over each tap's valid output range,
 * as the float rows above without their first-tap start (no NaN in bytes). */
static void maxpool_range_u8(void *p, int64_t b, int64_t e) {
  const pool_job *j = p;
  const nnp_pool2d_desc *d = j->d;
  for (int64_t pl = b; pl < e; pl++) {
    const uint8_t *xp = (const uint8_t *)j->x + pl * d->h * d->w;
    uint8_t *yp = (uint8_t *)j->y + pl * d->oh * d->ow;
    for (int64_t oh = 0; oh < d->oh; oh++) {
      uint8_t *yr = yp + oh * d->ow;
      for (int64_t o = 0; o < d->ow; o++) yr[o] = 0;
      int64_t h0, h1;
      nnp_pool_taps(oh, d->sh, d->ph, d->kh, d->h, &h0, &h1);
      for (int64_t kh = h0; kh < h1; kh++) {
        const uint8_t *row = xp + (oh * d->sh - d->ph + kh) * d->w;
        for (int64_t kw = 0; kw < d->kw; kw++) {
          int64_t lo, hi;
          tap_outputs(d, kw, &lo, &hi);
          if (lo >= hi) continue;
          const uint8_t *src = row + kw - d->pw;
          if (d->sw == 1)
            for (int64_t o = lo; o < hi; o++) yr[o] = src[o] > yr[o] ? src[o] : yr[o];
          else if (d->sw == 2)
            for (int64_t o = lo; o < hi; o++) yr[o] = src[2 * o] > yr[o] ? src[2 * o] : yr[o];
          else
            for (int64_t o = lo; o < hi; o++) yr[o] = src[o * d->sw] > yr[o] ? src[o * d->sw] : yr[o];
        }
      }
    }
  }
}

void nnp_maxpool2d(const nnp_pool2d_desc *d, const float *x, float *y, bool generic, nnp_threadpool *tp) {
  pool_job j = {.d = d, .x = x, .y = y, .avx2 = !nnp_dispatch_portable(NNP_KF_POOL, generic)};
  j.planes_avx2 = j.avx2 && nnp_maxpool_plane_avx2_pays(d);
  nnp_threadpool_run(tp, maxpool_range, &j, d->planes);
}

void nnp_maxpool2d_u8(const nnp_pool2d_desc *d, const uint8_t *x, uint8_t *y, nnp_threadpool *tp) {
  pool_job j = {.d = d, .x = x, .y = y};
  nnp_threadpool_run(tp, maxpool_range_u8, &j, d->planes);
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
/* Built twice, for AVX2 and for baseline x86-64, picked by the loader: the eight double
 * sums are two YMMs of four instead of four XMMs of two (per lane the same adds in the
 * same order, so the same bits). EfficientNet's squeeze-and-excitation pools were 2.8% of
 * efficientnet_b0's instructions. */
__attribute__((target_clones("avx2", "default")))
#endif
static void gap_range(void *p, int64_t b, int64_t e) {
  const pool_job *j = p;
  for (int64_t pl = b; pl < e; pl++) {
    const float *xp = (const float *)j->x + pl * j->hw;
    /* eight independent double sums: one chain of dependent adds was latency-bound (a
     * fifth of ONNX Runtime's speed on EfficientNet's squeeze-and-excitation pools) */
    double a[8] = {0};
    int64_t i = 0;
    for (; i + 8 <= j->hw; i += 8)
      for (int l = 0; l < 8; l++) a[l] += (double)xp[i + l];
    for (; i < j->hw; i++) a[i % 8] += (double)xp[i];
    const double acc = ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
    ((float *)j->y)[pl] = (float)(acc / (double)j->hw);
  }
}

void nnp_global_avgpool(int64_t planes, int64_t hw, const float *x, float *y, nnp_threadpool *tp) {
  pool_job j = {.hw = hw, .x = x, .y = y};
  nnp_threadpool_run(tp, gap_range, &j, planes);
}

int64_t nnp_avgpool_count(int64_t o, int64_t s, int64_t pb, int64_t pe, int64_t k, int64_t n, bool incl) {
  int64_t lo, hi;
  if (incl) nnp_pool_taps(o, s, 0, k, n + pb + pe, &lo, &hi); /* the padded axis, from -pb */
  else nnp_pool_taps(o, s, pb, k, n, &lo, &hi);
  return hi > lo ? hi - lo : 0;
}

typedef struct avg_job {
  const nnp_avgpool2d_desc *d;
  const float *x;
  float *y;
  bool avx2; /* rows by nnp_avgpool_row_avx2 */
} avg_job;

/* The divisor's column factor of each output column (cols[o], exact small integers as
 * floats): worked out once per plane range, not per output (two nnp_pool_taps calls per
 * pixel were most of inception_v3's 3x3 AveragePools on 35x35 planes). */
enum { AVG_COLS = 1024 };

/* One output row: every valid tap row, every kw, added over the outputs it covers
 * (contiguous outputs: the compiler vectorises stride 1), then the divisor (cols: the
 * column factors, or NULL for rows wider than AVG_COLS). */
static void avg_row(const nnp_avgpool2d_desc *a, const float *xp, int64_t oh, float *yr, const float *cols) {
  const nnp_pool2d_desc *d = &a->p;
  int64_t h0, h1;
  nnp_pool_taps(oh, d->sh, d->ph, d->kh, d->h, &h0, &h1);
  for (int64_t o = 0; o < d->ow; o++) yr[o] = 0.0f;
  for (int64_t kh = h0; kh < h1; kh++) {
    const float *row = xp + (oh * d->sh - d->ph + kh) * d->w;
    for (int64_t kw = 0; kw < d->kw; kw++) {
      int64_t lo, hi;
      tap_outputs(d, kw, &lo, &hi);
      const int64_t off = kw - d->pw;
      if (d->sw == 1)
        for (int64_t o = lo; o < hi; o++) yr[o] += row[o + off];
      else
        for (int64_t o = lo; o < hi; o++) yr[o] += row[o * d->sw + off];
    }
  }
  const int64_t ch = nnp_avgpool_count(oh, d->sh, d->ph, a->ph_end, d->kh, d->h, a->include_pad);
  if (cols) {
    const float fh = (float)ch; /* ch * cols[o] is the integer product, exactly */
    for (int64_t o = 0; o < d->ow; o++) {
      const float c = fh * cols[o];
      yr[o] = c > 0 ? yr[o] / c : 0.0f;
    }
    return;
  }
  for (int64_t o = 0; o < d->ow; o++) {
    const int64_t c = ch * nnp_avgpool_count(o, d->sw, d->pw, a->pw_end, d->kw, d->w, a->include_pad);
    yr[o] = c > 0 ? yr[o] / (float)c : 0.0f;
  }
}

/* The AVX2 rows' scratch row lives on the stack: rows that need more run portable. */
enum { AVG_ROW = 4096 };

static void avg_range(void *p, int64_t b, int64_t e) {
  const avg_job *j = p;
  const nnp_avgpool2d_desc *a = j->d;
  const nnp_pool2d_desc *d = &a->p;
  float cols[AVG_COLS + 8], t[AVG_ROW];
  const bool have_cols = d->ow <= AVG_COLS;
  for (int64_t o = 0; have_cols && o < d->ow; o++)
    cols[o] = (float)nnp_avgpool_count(o, d->sw, d->pw, a->pw_end, d->kw, d->w, a->include_pad);
  const int64_t row_floats = nnp_avgpool_avx2_scratch(a);
  if (j->avx2 && have_cols && row_floats <= AVG_ROW) {
    for (int64_t o = d->ow; o < d->ow + 8; o++) cols[o] = 1.0f; /* the last vector's lanes past ow */
    int64_t band = AVG_ROW / row_floats; /* output rows whose column sums t holds */
    band = band < d->oh ? band : d->oh;
    for (int64_t i = 0; i < band * row_floats; i++) t[i] = 0.0f; /* the borders stay zero */
    for (int64_t pl = b; pl < e; pl++)
      for (int64_t oh = 0; oh < d->oh; oh += band)
        nnp_avgpool_rows_avx2(a, j->x + pl * d->h * d->w, oh, oh + band < d->oh ? oh + band : d->oh,
                              j->y + pl * d->oh * d->ow, cols, t);
    return;
  }
  for (int64_t pl = b; pl < e; pl++)
    for (int64_t oh = 0; oh < d->oh; oh++)
      avg_row(a, j->x + pl * d->h * d->w, oh, j->y + (pl * d->oh + oh) * d->ow, have_cols ? cols : NULL);
}

void nnp_avgpool2d(const nnp_avgpool2d_desc *d, const float *x, float *y, bool generic, nnp_threadpool *tp) {
  avg_job j = {.d = d, .x = x, .y = y, .avx2 = !nnp_dispatch_portable(NNP_KF_POOL, generic)};
  nnp_threadpool_run(tp, avg_range, &j, d->p.planes);
}
