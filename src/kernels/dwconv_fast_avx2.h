/* The register-tiled AVX2 depthwise path for square 3x3 and 5x5 kernels, strides 1 and
 * 2, no dilation (MobileNet's and EfficientNet's layers). Included by dwconv_avx2.c
 * only (its dw_out / dw_store and -mavx2 -mfma); the general padded path there runs
 * every other shape.
 *
 * Why, against that general path (measured on an AMD EPYC with AVX2 only, where this
 * is the depthwise kernel every model runs; docs/kernels.md):
 *  - the zero border of the plane buffer is written once per call, not per plane: the
 *    interior is all a plane copy overwrites. The general path spent three libc calls
 *    per row (memset, memcpy, memset) on every plane, which on 7x7 and 14x14 planes
 *    cost more than the convolution itself;
 *  - the last 1..3 rows of a plane are one pass with as many accumulators, not one
 *    latency-bound chain of K*K dependent FMAs per row;
 *  - stride 2: each input row is split once into its even and odd columns as it is
 *    copied, so that every tap is one contiguous load (the general path shuffled and
 *    permuted 16 loaded floats per tap and output row). */
#ifndef NNP_KERNELS_DWCONV_FAST_AVX2_H
#define NNP_KERNELS_DWCONV_FAST_AVX2_H

enum { DWF_R = 4 }; /* output rows per pass */

/* Plane buffer geometry: PH rows of PW floats; stride 2 stores each padded row as its
 * even columns, then its odd ones (half floats each), so padded column pc of a row is
 * at (pc & 1) * half + pc / 2. half is whole vectors and the buffer 32-byte aligned, so
 * the kw = 0 and kw = 1 taps of every output vector are aligned loads: with half = OWr
 * + 1 floats (57 on a 112-wide input) the rows drifted across cache lines and about
 * half of the loads split two lines (one thread, bench_conv_layers 1 1 dw, four
 * alternations: 96ch 3x3 stride 2 @112 0.311 -> 0.297 ms, 144ch 0.486 -> 0.464, 192ch
 * 5x5 @56 0.287 -> 0.278; stride 1 unchanged). */
typedef struct dwf_geo {
  int64_t PH, PW, half, OWr;
} dwf_geo;

static bool dwf_geometry(const nnp_conv2d_desc *d, dwf_geo *g) {
  const int64_t K = d->kh, S = d->sw;
  if (d->kw != K || (K != 3 && K != 5) || d->sh != S || (S != 1 && S != 2) || d->dh != 1 || d->dw != 1) return false;
  g->OWr = (d->ow + 7) / 8 * 8;
  g->PH = (d->oh - 1) * S + K;
  if (g->PH < d->ph + d->h) g->PH = d->ph + d->h;
  if (S == 1) {
    g->half = 0;
    g->PW = g->OWr + K - 1;
    if (g->PW < d->pw + d->w) g->PW = d->pw + d->w;
  } else {
    g->half = g->OWr + (K - 1) / 2;
    if (g->half < (d->pw + d->w + 1) / 2) g->half = (d->pw + d->w + 1) / 2;
    g->half = (g->half + 7) / 8 * 8;
    g->PW = 2 * g->half;
  }
  return g->PH * g->PW <= DW_PAD_MAX_FLOATS;
}

static inline __m256i dwf_tail_mask(int64_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* Not turned into a memcpy call (GCC's loop-pattern pass did: libc's call per 112-float
 * row was 14-18% of a 3x3 layer on 112x112 planes, perf; inline, one thread, 32ch 3x3 on
 * 112x112 0.183 -> 0.169 ms, three alternations). */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-loop-distribute-patterns")))
#endif
static void dwf_copy(float *dst, const float *src, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, _mm256_loadu_ps(src + i));
  if (i < n) {
    store_first(dst + i, _mm256_maskload_ps(src + i, dwf_tail_mask(n - i)), n - i);
  }
}

static inline __m256 dwf_even(__m256 a, __m256 b) {
  const __m256 e = _mm256_shuffle_ps(a, b, 0x88); /* a0 a2 b0 b2 | a4 a6 b4 b6 */
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), 0xD8));
}

static inline __m256 dwf_odd(__m256 a, __m256 b) {
  const __m256 o = _mm256_shuffle_ps(a, b, 0xDD);
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(o), 0xD8));
}

/* ev[j] = src[2j], od[j] = src[2j + 1] for the n floats of src; the last 1..15 through
 * masked loads (a 14-wide row, EfficientNet's and MobileNet's last stride-2 layers, is
 * all tail: element by element it cost more than the taps). */
static void dwf_split(float *ev, float *od, const float *src, int64_t n) {
  int64_t j = 0;
  for (; 2 * j + 16 <= n; j += 8) {
    const __m256 a = _mm256_loadu_ps(src + 2 * j), b = _mm256_loadu_ps(src + 2 * j + 8);
    _mm256_storeu_ps(ev + j, dwf_even(a, b));
    _mm256_storeu_ps(od + j, dwf_odd(a, b));
  }
  const int64_t r = n - 2 * j; /* 0..15 left */
  if (!r) return;
  const __m256 a = _mm256_maskload_ps(src + 2 * j, dwf_tail_mask(r < 8 ? r : 8));
  const __m256 b = r > 8 ? _mm256_maskload_ps(src + 2 * j + 8, dwf_tail_mask(r - 8)) : _mm256_setzero_ps();
  store_first(ev + j, dwf_even(a, b), (r + 1) / 2);
  if (r > 1) store_first(od + j, dwf_odd(a, b), r / 2);
}

/* The plane's rows into the interior of buf (the border was zeroed once). */
static void dwf_fill(const nnp_conv2d_desc *d, const dwf_geo *g, const float *xp, float *buf) {
  for (int64_t r = 0; r < d->h; r++) {
    float *row = buf + (r + d->ph) * g->PW;
    if (!g->half) {
      dwf_copy(row + d->pw, xp + r * d->w, d->w);
    } else if (d->pw % 2 == 0) { /* input column iw is padded column pw + iw */
      dwf_split(row + d->pw / 2, row + g->half + d->pw / 2, xp + r * d->w, d->w);
    } else {
      dwf_split(row + g->half + (d->pw - 1) / 2, row + (d->pw + 1) / 2, xp + r * d->w, d->w);
    }
  }
}

/* One output row's epilogue, act a constant after inlining: bias, residual and
 * activation on the raw sums t (OWr floats), the ragged end through dw_store. */
static inline __attribute__((always_inline)) void dwf_row_act(const dw_out *o, const float *t, int64_t oh,
                                                              const int act) {
  nnp_epilogue ep = *o->ep;
  ep.act = act; /* folds nnp_act8's switch */
  const int64_t OW = o->OW; /* locals: the stores to y could alias *o */
  const __m256 bias = o->bias;
  float *yr = o->yp + oh * OW;
  const float *res = ep.residual ? ep.residual + oh * OW : NULL;
  int64_t ow = 0;
  for (; ow + 8 <= OW; ow += 8) {
    __m256 v = _mm256_add_ps(_mm256_load_ps(t + ow), bias);
    if (res) v = _mm256_add_ps(v, _mm256_loadu_ps(res + ow));
    _mm256_storeu_ps(yr + ow, nnp_act8(&ep, v));
  }
  if (ow < OW) dw_store(o, _mm256_load_ps(t + ow), oh, ow);
}

/* The raw sums of output row oh (tile row t) through the epilogue into y. */
static void dwf_row_out(const dw_out *o, const float *t, int64_t oh) {
  if (!o->ep) {
    memcpy(o->yp + oh * o->OW, t, (size_t)o->OW * sizeof(float));
    return;
  }
  if (!o->vec_act) { /* sigmoid: the scalar epilogue, vector by vector */
    for (int64_t ow = 0; ow < o->OW; ow += 8) dw_store(o, _mm256_load_ps(t + ow), oh, ow);
    return;
  }
#define DWF_ROW_ACT(A) dwf_row_act(o, t, oh, A)
  NNP_ACT8_CONST(o->ep->act, DWF_ROW_ACT)
#undef DWF_ROW_ACT
}

/* R output rows from oh of a 3x3 plane at stride S, every 8-column vector; R and S are
 * constants after inlining. Each input vector is loaded once for all the output rows it
 * feeds (window row i feeds output row j with tap row i - S j: at stride 1 up to three
 * rows, at stride 2 one or two), and the nine broadcast weights stay in registers (9 + 4
 * accumulators + 1 input of the 16 YMM): per four output vectors 18 loads at stride 1 and
 * 27 at stride 2 (the even, odd and next even column of each of 2R + 1 rows), against
 * dwf_pass_bcast's 36 loads and 9 broadcasts. Every sum still adds its taps kh by kh, kw
 * by kw from zero: the same bits as dwf_pass_bcast. Stride 2 was level with
 * dwf_pass_bcast until the buffer's halves were aligned (dwf_geo), then one thread 96ch
 * @112 0.278 -> 0.250 ms, 144ch 0.422 -> 0.394 (bench_conv_layers 1 1 s2, four
 * alternations).
 * The sums go to the tile (R rows of OWr floats, in L1) and the epilogue runs row by
 * row after: with bias, residual, SiLU's constants and the ragged-end branches inside
 * this loop GCC spilled the accumulators and pointers to the stack on every vector
 * (perf annotate: half the loop's samples on stack moves and reloads). */
static inline __attribute__((always_inline)) void dwf_pass_k3(const float *buf, const dwf_geo *g, const __m256 wv[9],
                                                              float *tile, int64_t oh, const int R, const int S) {
  for (int64_t ow = 0; ow < g->OWr; ow += 8) {
    __m256 acc[DWF_R];
    for (int j = 0; j < R; j++) acc[j] = _mm256_setzero_ps();
    const float *p = buf + S * oh * g->PW + ow;
#pragma GCC unroll 9
    for (int i = 0; i < S * (R - 1) + 3; i++, p += g->PW)
#pragma GCC unroll 3
      for (int kw = 0; kw < 3; kw++) {
        const __m256 x = _mm256_loadu_ps(S == 1 ? p + kw : p + (kw & 1) * g->half + kw / 2);
#pragma GCC unroll 4
        for (int j = 0; j < R; j++) {
          const int kh = i - S * j;
          if (kh >= 0 && kh < 3) acc[j] = _mm256_fmadd_ps(wv[kh * 3 + kw], x, acc[j]);
        }
      }
    for (int j = 0; j < R; j++) _mm256_store_ps(tile + j * g->OWr + ow, acc[j]);
  }
}

/* The same sums with each tap's weight broadcast from memory once per R output vectors
 * and every input loaded per tap, for 5x5: the 25 weights do not fit the registers (held
 * on the stack they cost a load per FMA: 192ch 5x5 stride 2 on 56x56 took 0.32 ms
 * against 0.275 this way, one thread). */
static inline __attribute__((always_inline)) void dwf_pass_bcast(const float *buf, const dwf_geo *g, const float *wc,
                                                                 float *tile, int64_t oh, const int R, const int K,
                                                                 const int S) {
  const int64_t rs = S * g->PW; /* between the input rows of consecutive output rows */
  for (int64_t ow = 0; ow < g->OWr; ow += 8) {
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    const float *base = buf + oh * rs + ow;
    for (int kh = 0; kh < K; kh++, base += g->PW) {
#pragma GCC unroll 8
      for (int kw = 0; kw < K; kw++) {
        const float *q = S == 1 ? base + kw : base + (kw & 1) * g->half + kw / 2;
        const __m256 wv = _mm256_broadcast_ss(wc + kh * K + kw);
        a0 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(q), a0);
        if (R > 1) a1 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(q + rs), a1);
        if (R > 2) a2 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(q + 2 * rs), a2);
        if (R > 3) a3 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(q + 3 * rs), a3);
      }
    }
    _mm256_store_ps(tile + ow, a0);
    if (R > 1) _mm256_store_ps(tile + g->OWr + ow, a1);
    if (R > 2) _mm256_store_ps(tile + 2 * g->OWr + ow, a2);
    if (R > 3) _mm256_store_ps(tile + 3 * g->OWr + ow, a3);
  }
}

/* Rows [oh, oh + R) of the plane: the sums, then their epilogue. */
static inline __attribute__((always_inline)) void dwf_rows(const float *buf, const dwf_geo *g, const __m256 *wv,
                                                           const float *wc, const dw_out *o, float *tile, int64_t oh,
                                                           const int R, const int K, const int S) {
  if (K == 3) dwf_pass_k3(buf, g, wv, tile, oh, R, S);
  else dwf_pass_bcast(buf, g, wc, tile, oh, R, K, S);
  for (int j = 0; j < R; j++) dwf_row_out(o, tile + j * g->OWr, oh + j);
}

static inline __attribute__((always_inline)) void dwf_plane(const float *buf, const dwf_geo *g, const float *wc,
                                                            const dw_out *o, float *tile, int64_t OH, const int K,
                                                            const int S) {
  __m256 wv[9]; /* 3x3: the weights in registers (dwf_pass_k3) */
  if (K == 3)
    for (int t = 0; t < 9; t++) wv[t] = _mm256_broadcast_ss(wc + t);
  int64_t oh = 0;
  for (; oh + DWF_R <= OH; oh += DWF_R) dwf_rows(buf, g, wv, wc, o, tile, oh, DWF_R, K, S);
  switch (OH - oh) {
    case 3: dwf_rows(buf, g, wv, wc, o, tile, oh, 3, K, S); break;
    case 2: dwf_rows(buf, g, wv, wc, o, tile, oh, 2, K, S); break;
    case 1: dwf_rows(buf, g, wv, wc, o, tile, oh, 1, K, S); break;
    default: break;
  }
}

/* Runs planes [b, e) and returns true when the shape is covered; false: nothing done. */
static bool dw_fast_planes(const nnp_conv2d_desc *d, const float *x, const float *w, float *y,
                           const nnp_epilogue *ep, int64_t b, int64_t e) {
  dwf_geo g;
  if (!dwf_geometry(d, &g)) return false;
  const int64_t K = d->kh, P = d->oh * d->ow;
  float buf_[g.PH * g.PW + 8]; /* 8 floats more: buf starts at its first 32-byte boundary */
  float *buf = (float *)(((uintptr_t)buf_ + 31) & ~(uintptr_t)31);
  memset(buf, 0, (size_t)(g.PH * g.PW) * sizeof(float));
  float tile[DWF_R * g.OWr] __attribute__((aligned(32))); /* one pass's raw sums */
  for (int64_t plane = b; plane < e; plane++) {
    const int64_t c = plane % d->c;
    dwf_fill(d, &g, x + plane * d->h * d->w, buf);
    nnp_epilogue loc = {0};
    if (ep) {
      loc = *ep;
      if (loc.bias_kind == NNP_BIAS_ROW) loc.bias = ep->bias + c;
      if (loc.residual) loc.residual = ep->residual + plane * P;
      loc.ld_res = 0;
    }
    const float *wv = w + c * K * K;
    const __m256 bias = _mm256_set1_ps(ep && loc.bias_kind == NNP_BIAS_ROW ? loc.bias[0] : 0.0f);
    const dw_out o = {.ep = ep ? &loc : NULL, .yp = y + plane * P, .OW = d->ow, .bias = bias,
                      .vec_act = !ep || ep->act != NNP_ACT_SIGMOID};
    if (K == 3 && d->sw == 1) dwf_plane(buf, &g, wv, &o, tile, d->oh, 3, 1);
    else if (K == 3) dwf_plane(buf, &g, wv, &o, tile, d->oh, 3, 2);
    else if (d->sw == 1) dwf_plane(buf, &g, wv, &o, tile, d->oh, 5, 1);
    else dwf_plane(buf, &g, wv, &o, tile, d->oh, 5, 2);
  }
  return true;
}

#endif
