/* float32 MaxPool and AveragePool 2-D on AVX2 (this file gets -mavx2 -mfma). MaxPool: the outputs whose window
 * lies wholly inside the row, eight at a time with the running max in a register over
 * every tap; the rest (the borders, a ragged end) as the portable rows (kernels/pool.c).
 *
 * Why: the portable rows make one pass over the output row per tap (nine loads and
 * stores of every output for 3x3), and a stride-2 tap compiles to scalar loads there;
 * squeezenet1_0's three 3x3 stride-2 pools took 2.4 ms of its 24 at one thread
 * (docs/kernels.md). Same results bit for bit: each vector starts from the window's
 * first tap and takes `v > best ? v : best` (vmaxps(v, best)) tap by tap in (kh, kw)
 * order, as the reference: a NaN first tap stays, a later NaN never wins, ties keep
 * the first tap. */
#include <immintrin.h>
#include <math.h>
#include <string.h>

#include "kernels/pool.h"

/* The planes take a pool where over 1 / BORDERS_OVER of a row's outputs are borders the
 * rows leave to the per-output loop. A border output costs the loop about eight times a
 * vector lane's share: resnet18's 112 x 112 pool has 8 border outputs in a row of 56 and
 * they took 55% of its instructions (callgrind). Banded planes cut the pool's instructions
 * 31.96M -> 18.34M there and 99.7M -> 58.4M on squeezenet1_0's (ceil_mode) pools; at one
 * border in 73 (inception_v3's first pool) the copy costs about what it saves. */
enum { BORDERS_OVER = 16 };

/* The even floats of r[0..16), in the shuffle's lane order: r0 r2 r8 r10 | r4 r6 r12 r14 */
static inline __m256 even_shuffled(const float *r) {
  return _mm256_shuffle_ps(_mm256_loadu_ps(r), _mm256_loadu_ps(r + 8), 0x88);
}

/* Lanes in the shuffle's order back in output order */
static inline __m256 unshuffle(__m256 v) { return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(v), 0xD8)); }

/* Eight consecutive outputs of stride S from column c of row r: r[c], r[c+S], ... */
static inline __m256 load_strided(const float *r, const int S) {
  return S == 1 ? _mm256_loadu_ps(r) : unshuffle(even_shuffled(r));
}

/* The window max of a 3-wide row at stride 2, lanes in the order of the shuffles (the
 * permute of load_strided left out): taps 0 and 1 are the even and odd floats of the
 * same 16 (one pair of loads for both), tap 2 the even floats from r + 2. Each lane
 * takes its taps in kw order as load_strided's lanes do, so after the one permute of
 * the whole window the bits are the same. */
static inline __m256 max3_s2_shuffled(const float *r, __m256 best) {
  const __m256 a = _mm256_loadu_ps(r), b = _mm256_loadu_ps(r + 8);
  best = _mm256_max_ps(_mm256_shuffle_ps(a, b, 0x88), best);
  best = _mm256_max_ps(_mm256_shuffle_ps(a, b, 0xDD), best);
  return _mm256_max_ps(even_shuffled(r + 2), best);
}

/* Outputs [o0, o1) of one output row whose windows need no column check: every tap's
 * loads stay within the input row (stride 2 reads 16 floats per tap). KW: the kernel
 * width as a constant (3: unrolled, and at stride 2 by max3_s2_shuffled), or 0 for d->kw. */
static inline __attribute__((always_inline)) int64_t vector_outputs(const nnp_pool2d_desc *d, const float *xp,
                                                                    int64_t ihs, int64_t h0, int64_t h1,
                                                                    int64_t o0, int64_t o1, float *yr,
                                                                    const int S, const int KW) {
  const int64_t kw_n = KW ? KW : d->kw;
  const bool shuffled = S == 2 && KW == 3; /* lanes in the shuffle's order until the store */
  int64_t o = o0;
  for (; o + 8 <= o1; o += 8) {
    const float *top = xp + (ihs + h0) * d->w + o * S - d->pw;
    __m256 best = shuffled ? even_shuffled(top) : load_strided(top, S); /* the first tap */
    for (int64_t kh = h0; kh < h1; kh++) {
      const float *r = top + (kh - h0) * d->w;
      if (shuffled) best = max3_s2_shuffled(r, best);
      else
        for (int64_t kw = 0; kw < kw_n; kw++) best = _mm256_max_ps(load_strided(r + kw, S), best);
    }
    _mm256_storeu_ps(yr + o, shuffled ? unshuffle(best) : best);
  }
  return o;
}

/* The outputs [*lo, *o1) of a row whose windows the row vectors below can take (strides
 * 1 and 2); false when there are none. A vector of outputs o..o+7 reads columns o*S - pw
 * .. o*S - pw + kw - 1 + L - 1: it starts at o >= lo (no left padding) and o <= last (no
 * read past the row). */
static bool row_vector_span(const nnp_pool2d_desc *d, int64_t *lo, int64_t *o1) {
  const int64_t S = d->sw, L = S == 1 ? 8 : 16; /* floats one strided load reads */
  if (S != 1 && S != 2) return false;
  *lo = (d->pw + S - 1) / S;
  const int64_t room = d->w - d->kw - L + 1 + d->pw, last = room >= 0 ? room / S : -1;
  *o1 = last + 8 < d->ow ? last + 8 : d->ow;
  return *lo < *o1 && last >= *lo;
}

void nnp_maxpool_row_avx2(const nnp_pool2d_desc *d, const float *xp, int64_t oh, float *yr) {
  int64_t h0, h1, lo, o1;
  nnp_pool_taps(oh, d->sh, d->ph, d->kh, d->h, &h0, &h1);
  if (h0 >= h1 || !row_vector_span(d, &lo, &o1)) {
    nnp_maxpool_row_portable(d, xp, oh, yr);
    return;
  }
  const int64_t S = d->sw, ihs = oh * d->sh - d->ph;
  const bool k3 = d->kw == 3;
  const int64_t done = S == 1 ? (k3 ? vector_outputs(d, xp, ihs, h0, h1, lo, o1, yr, 1, 3)
                                    : vector_outputs(d, xp, ihs, h0, h1, lo, o1, yr, 1, 0))
                              : (k3 ? vector_outputs(d, xp, ihs, h0, h1, lo, o1, yr, 2, 3)
                                    : vector_outputs(d, xp, ihs, h0, h1, lo, o1, yr, 2, 0));
  nnp_maxpool_outputs_portable(d, xp, oh, 0, lo, yr);
  nnp_maxpool_outputs_portable(d, xp, oh, done, d->ow, yr);
}

/* ---- MaxPool on padded planes ----
 * Why: where a plane has padding (or ceil_mode windows past its end) the rows above
 * leave the border outputs to the per-output loop, and on 7x7 and 14x14 planes those are
 * most of a row (none vectorised at 7 wide): googlenet's 3x3 stride-1 pools over 832 x
 * 7 x 7 took 0.21 ms and its 13 pools 3.2 ms against ONNX Runtime's 0.83
 * (docs/kernels.md). Here a plane is copied, a band of rows at a time, inside a border of
 * -inf, so that every output is a vector lane. The bits stay the reference's: -inf never
 * wins `v > best` (not even over a NaN), so a padded tap changes nothing, provided each
 * lane starts from its window's first valid tap, as the reference's: a window's first
 * valid row is the row loop's first, and its first valid column is the window's own
 * except where the window begins in the left padding (first vector only), where it is
 * column 0. Rows wholly in the padding are skipped as the rows above skip them. */

/* padded columns the vectors of a row read: the last vector starts at output V */
static int64_t padded_width(const nnp_pool2d_desc *d) {
  const int64_t V = (d->ow - 1) / 8 * 8, L = d->sw == 1 ? 8 : 16;
  const int64_t reach = V * d->sw + d->kw - 1 + L, row = d->pw + d->w;
  return reach > row ? reach : row;
}

/* Output rows per band: the most whose input rows fit the buffer */
static int64_t band_outputs(const nnp_pool2d_desc *d, int64_t wp) {
  return (NNP_MAXPOOL_PLANE_FLOATS / wp - d->kh) / d->sh + 1;
}

bool nnp_maxpool_plane_avx2_fits(const nnp_pool2d_desc *d) {
  if ((d->sw != 1 && d->sw != 2) || d->kw <= d->pw || d->kh <= d->ph) return false;
  /* every window holds a valid tap: the last ones start inside the input */
  if ((d->ow - 1) * d->sw - d->pw >= d->w || (d->oh - 1) * d->sh - d->ph >= d->h) return false;
  return d->kh * padded_width(d) <= NNP_MAXPOOL_PLANE_FLOATS; /* a band of one output row */
}

bool nnp_maxpool_plane_avx2_pays(const nnp_pool2d_desc *d) {
  int64_t lo, o1;
  if (!nnp_maxpool_plane_avx2_fits(d)) return false;
  if (!row_vector_span(d, &lo, &o1)) return true;
  const int64_t vectorised = (o1 - lo) / 8 * 8;
  return BORDERS_OVER * (d->ow - vectorised) > d->ow;
}

/* Output rows [oh0, oh1) from buf, which holds input rows from row0 on, wp floats apart.
 * KW as in vector_outputs. At stride 2 with KW 3 the lanes stay in the shuffles' order
 * (outputs 0 1 4 5 2 3 6 7) until the store; first_mask, in output order, still fits:
 * padding below the kernel width (pw <= 2) flags output 0 alone, lane 0 in both orders. */
static inline __attribute__((always_inline)) void band_rows(const nnp_pool2d_desc *d, const float *buf, int64_t wp,
                                                            int64_t row0, int64_t oh0, int64_t oh1,
                                                            __m256 first_mask, __m256i tail_mask, float *yp,
                                                            const int S, const int KW) {
  const int64_t kw_n = KW ? KW : d->kw;
  const bool shuffled = S == 2 && KW == 3;
  for (int64_t oh = oh0; oh < oh1; oh++) {
    int64_t h0, h1;
    nnp_pool_taps(oh, d->sh, d->ph, d->kh, d->h, &h0, &h1);
    const float *top = buf + (oh * d->sh - d->ph + h0 - row0) * wp; /* the windows' first valid row */
    float *yr = yp + oh * d->ow;
    for (int64_t o = 0; o < d->ow; o += 8) {
      __m256 best = shuffled ? even_shuffled(top + o * S) : load_strided(top + o * S, S);
      if (o == 0) best = _mm256_blendv_ps(best, _mm256_set1_ps(top[d->pw]), first_mask);
      for (int64_t kh = 0; kh < h1 - h0; kh++) {
        const float *r = top + kh * wp + o * S;
        if (shuffled) best = max3_s2_shuffled(r, best);
        else
          for (int64_t kw = 0; kw < kw_n; kw++) best = _mm256_max_ps(load_strided(r + kw, S), best);
      }
      if (shuffled) best = unshuffle(best);
      if (o + 8 <= d->ow) _mm256_storeu_ps(yr + o, best);
      else _mm256_maskstore_ps(yr + o, tail_mask, best);
    }
  }
}

/* One plane, band by band: each band's input rows copied into buf's rows (whose borders
 * hold -inf), then its output rows */
static void plane_bands(const nnp_pool2d_desc *d, const float *xp, float *yp, float *buf, int64_t wp,
                        __m256 first_mask, __m256i tail_mask) {
  const int64_t per = band_outputs(d, wp);
  for (int64_t oh0 = 0; oh0 < d->oh; oh0 += per) {
    const int64_t oh1 = oh0 + per < d->oh ? oh0 + per : d->oh;
    int64_t r0 = oh0 * d->sh - d->ph, r1 = (oh1 - 1) * d->sh - d->ph + d->kh;
    r0 = r0 < 0 ? 0 : r0;
    r1 = r1 > d->h ? d->h : r1;
    for (int64_t r = r0; r < r1; r++)
      memcpy(buf + (r - r0) * wp + d->pw, xp + r * d->w, (size_t)d->w * sizeof(float));
    const bool k3 = d->kw == 3;
    if (d->sw == 1 && k3) band_rows(d, buf, wp, r0, oh0, oh1, first_mask, tail_mask, yp, 1, 3);
    else if (d->sw == 1) band_rows(d, buf, wp, r0, oh0, oh1, first_mask, tail_mask, yp, 1, 0);
    else if (k3) band_rows(d, buf, wp, r0, oh0, oh1, first_mask, tail_mask, yp, 2, 3);
    else band_rows(d, buf, wp, r0, oh0, oh1, first_mask, tail_mask, yp, 2, 0);
  }
}

void nnp_maxpool_planes_avx2(const nnp_pool2d_desc *d, const float *x, float *y, int64_t p0, int64_t p1) {
  float buf[NNP_MAXPOOL_PLANE_FLOATS] __attribute__((aligned(32)));
  const int64_t wp = padded_width(d), rows = NNP_MAXPOOL_PLANE_FLOATS / wp;
  for (int64_t r = 0; r < rows; r++) {
    float *row = buf + r * wp;
    for (int64_t i = 0; i < d->pw; i++) row[i] = -INFINITY;
    for (int64_t i = d->pw + d->w; i < wp; i++) row[i] = -INFINITY;
  }
  int32_t first[8], tail[8];
  for (int i = 0; i < 8; i++) {
    first[i] = i * d->sw < d->pw ? -1 : 0; /* lanes whose window begins in the left padding */
    tail[i] = i < d->ow - (d->ow - 1) / 8 * 8 ? -1 : 0;
  }
  const __m256 first_mask = _mm256_castsi256_ps(_mm256_loadu_si256((const __m256i *)first));
  const __m256i tail_mask = _mm256_loadu_si256((const __m256i *)tail);
  for (int64_t pl = p0; pl < p1; pl++)
    plane_bands(d, x + pl * d->h * d->w, y + pl * d->oh * d->ow, buf, wp, first_mask, tail_mask);
}

/* ---- AveragePool rows ----
 * Why: the portable rows make one pass over the output row per tap (load, add, store of
 * every output nine times for 3x3) and divide output by output; inception_v3's nine 3x3
 * stride-1 pools took 9.8 ms at one thread where ONNX Runtime's took 0.8
 * (docs/kernels.md). Here each input column's window rows are summed once into t (a
 * zero-bordered row, so no output needs a column check), then each output adds its kw
 * column sums, eight outputs per vector, and divides by its count; a window wholly in
 * padding sums to 0 and its zero count gives 0. The ragged end runs the same sums in
 * the same order one output at a time, so every output's bits are the same whichever
 * path computed it. A band of rows' column sums goes first, each row's into its own row
 * of t, then the band's windows: a row's windows read its column sums right after they
 * were stored, at other offsets than the stores, which the store buffer cannot forward
 * (each load waited for the stores to retire): one row at a time, inception_v3's 3x3
 * pools on 2048 x 8 x 8 took 0.254 ms, by bands 0.150 (17 x 17: 0.258 -> 0.201). */

int64_t nnp_avgpool_avx2_scratch(const nnp_avgpool2d_desc *a) {
  const nnp_pool2d_desc *d = &a->p;
  const int64_t reach = (d->ow - 1) * d->sw + d->kw, row = d->pw + d->w;
  return (reach > row ? reach : row) + 16; /* a stride-2 vector reads 16 floats past its first */
}

/* t[pw + i] = x(h0, i) + x(h0 + 1, i) + ... over the valid rows [h0, h1) of the window */
static void column_sums(const nnp_pool2d_desc *d, const float *xp, int64_t ihs, int64_t h0, int64_t h1, float *t) {
  float *dst = t + d->pw;
  if (h0 >= h1) {
    for (int64_t i = 0; i < d->w; i++) dst[i] = 0.0f;
    return;
  }
  const float *r0 = xp + (ihs + h0) * d->w;
  int64_t i = 0;
  for (; i + 8 <= d->w; i += 8) {
    __m256 s = _mm256_loadu_ps(r0 + i);
    for (int64_t kh = 1; kh < h1 - h0; kh++) s = _mm256_add_ps(s, _mm256_loadu_ps(r0 + kh * d->w + i));
    _mm256_storeu_ps(dst + i, s);
  }
  for (; i < d->w; i++) {
    float s = r0[i];
    for (int64_t kh = 1; kh < h1 - h0; kh++) s += r0[kh * d->w + i];
    dst[i] = s;
  }
}

static inline __m256 window_sum(const float *t, int64_t kw, const int S) {
  __m256 s = load_strided(t, S);
  for (int64_t k = 1; k < kw; k++) s = _mm256_add_ps(s, load_strided(t + k, S));
  return s;
}

/* Output row oh from its column sums t (see column_sums) into yr */
static void window_row(const nnp_avgpool2d_desc *a, int64_t oh, const float *t, float *yr, const float *cols) {
  const nnp_pool2d_desc *d = &a->p;
  /* the row factor of the divisor: taps of the window's rows that count */
  int64_t r0, r1;
  if (a->include_pad) nnp_pool_taps(oh, d->sh, 0, d->kh, d->h + d->ph + a->ph_end, &r0, &r1);
  else nnp_pool_taps(oh, d->sh, d->ph, d->kh, d->h, &r0, &r1);
  const float fh = r1 > r0 ? (float)(r1 - r0) : 0.0f;
  const int64_t S = d->sw;
  int64_t o = 0;
  if (S == 1 || S == 2) {
    const __m256 vfh = _mm256_set1_ps(fh), zero = _mm256_setzero_ps();
    for (; o + 8 <= d->ow; o += 8) {
      const __m256 s = S == 1 ? window_sum(t + o, d->kw, 1) : window_sum(t + 2 * o, d->kw, 2);
      const __m256 c = _mm256_mul_ps(vfh, _mm256_loadu_ps(cols + o)); /* exact: small integers */
      const __m256 q = _mm256_div_ps(s, c);
      _mm256_storeu_ps(yr + o, _mm256_and_ps(q, _mm256_cmp_ps(c, zero, _CMP_GT_OQ)));
    }
  }
  for (; o < d->ow; o++) {
    const float *w = t + o * S;
    float s = w[0];
    for (int64_t k = 1; k < d->kw; k++) s += w[k];
    const float c = fh * cols[o];
    yr[o] = c > 0 ? s / c : 0.0f;
  }
}

void nnp_avgpool_rows_avx2(const nnp_avgpool2d_desc *a, const float *xp, int64_t oh0, int64_t oh1, float *yp,
                           const float *cols, float *t) {
  const nnp_pool2d_desc *d = &a->p;
  const int64_t wt = nnp_avgpool_avx2_scratch(a);
  for (int64_t oh = oh0; oh < oh1; oh++) {
    int64_t h0, h1;
    nnp_pool_taps(oh, d->sh, d->ph, d->kh, d->h, &h0, &h1);
    column_sums(d, xp, oh * d->sh - d->ph, h0, h1, t + (oh - oh0) * wt);
  }
  for (int64_t oh = oh0; oh < oh1; oh++) window_row(a, oh, t + (oh - oh0) * wt, yp + oh * d->ow, cols);
}
