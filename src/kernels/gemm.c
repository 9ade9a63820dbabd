#include "kernels/gemm.h"

#include <string.h>

#include "kernels/dispatch.h"

enum { MR = NNP_SGEMM_MR, NR = NNP_SGEMM_NR };

nnp_sgemm_tile_fn nnp_sgemm_tile_fast(void) {
  return nnp_dispatch_isa(NNP_KF_GEMM) == NNP_ISA_AVX512 ? nnp_sgemm_tile_avx512 : nnp_sgemm_tile_avx2;
}

size_t nnp_sgemm_packed_a_floats(int64_t M, int64_t K) { return (size_t)((M + MR - 1) / MR * MR * K); }
size_t nnp_sgemm_packed_b_floats(int64_t K, int64_t N) { return (size_t)((N + NR - 1) / NR * NR * K); }

void nnp_sgemm_pack_a(int64_t M, int64_t K, const float *A, int64_t sam, int64_t sak, float *dst) {
  for (int64_t p = 0; p * MR < M; p++) {
    float *d = dst + p * MR * K;
    int64_t rows = M - p * MR < MR ? M - p * MR : MR;
    for (int64_t k = 0; k < K; k++) {
      int64_t r = 0;
      for (; r < rows; r++) d[k * MR + r] = A[(p * MR + r) * sam + k * sak];
      for (; r < MR; r++) d[k * MR + r] = 0.0f;
    }
  }
}

typedef struct pack_a_job {
  int64_t M, K, sam, sak;
  const float *A;
  float *dst;
} pack_a_job;

/* Panels [b, e) of A: panel p's rows start at row p * MR, in dst at p * MR * K. */
static void pack_a_range(void *p, int64_t b, int64_t e) {
  const pack_a_job *j = p;
  const int64_t rows = e * MR < j->M ? e * MR - b * MR : j->M - b * MR;
  nnp_sgemm_pack_a(rows, j->K, j->A + b * MR * j->sam, j->sam, j->sak, j->dst + b * MR * j->K);
}

void nnp_sgemm_pack_a_pool(int64_t M, int64_t K, const float *A, int64_t sam, int64_t sak, float *dst,
                           nnp_threadpool *tp) {
  pack_a_job j = {.M = M, .K = K, .sam = sam, .sak = sak, .A = A, .dst = dst};
  nnp_threadpool_run(tp, pack_a_range, &j, (M + MR - 1) / MR);
}

size_t nnp_sgemm_batched_plan(nnp_sgemm_batched *b, int threads) {
  b->batches = 1;
  for (int d = 0; d < b->n_dims; d++) b->batches *= b->dims[d];
  /* 64-byte aligned slots: the packed panels are read with aligned loads */
  b->slot_floats = ((int64_t)(nnp_sgemm_packed_a_floats(b->M, b->K) + nnp_sgemm_packed_b_floats(b->K, b->N)) + 15) /
                   16 * 16;
  b->slots = threads > 1 && b->batches >= threads ? threads : 1;
  return (size_t)(b->slots * b->slot_floats) * sizeof(float);
}

typedef struct batched_job {
  const nnp_sgemm_batched *b;
  const float *A, *B;
  float *C, *scratch;
} batched_job;

/* Batch i, packed into slot, multiplied on the caller's thread alone (tp NULL) or split
 * over tp's threads. */
static void one_batch(const batched_job *j, int64_t i, float *slot, nnp_threadpool *tp) {
  const nnp_sgemm_batched *b = j->b;
  int64_t ao = 0, bo = 0, co = 0;
  for (int d = b->n_dims - 1; d >= 0; d--) {
    const int64_t v = i % b->dims[d];
    i /= b->dims[d];
    ao += v * b->a_str[d], bo += v * b->b_str[d], co += v * b->c_str[d];
  }
  float *ap = slot, *bp = ap + nnp_sgemm_packed_a_floats(b->M, b->K);
  nnp_sgemm_pack_a(b->M, b->K, j->A + ao, b->sam, b->sak, ap);
  nnp_sgemm_pack_b(b->K, b->N, j->B + bo, b->sbk, b->sbn, bp);
  nnp_sgemm_packed_ex(b->M, b->N, b->K, ap, bp, j->C + co, b->ldc, NULL, tp, b->generic);
}

/* Task s: the contiguous share s of the batches, in scratch slot s. */
static void batch_share(void *p, int64_t s0, int64_t s1) {
  const batched_job *j = p;
  const nnp_sgemm_batched *b = j->b;
  for (int64_t s = s0; s < s1; s++)
    for (int64_t i = s * b->batches / b->slots; i < (s + 1) * b->batches / b->slots; i++)
      one_batch(j, i, j->scratch + s * b->slot_floats, NULL);
}

void nnp_sgemm_batched_run(const nnp_sgemm_batched *b, const float *A, const float *B, float *C, float *scratch,
                           nnp_threadpool *tp) {
  batched_job j = {.b = b, .A = A, .B = B, .C = C, .scratch = scratch};
  if (b->slots > 1 && nnp_threadpool_threads(tp) > 1) {
    nnp_threadpool_run(tp, batch_share, &j, b->slots);
    return;
  }
  for (int64_t i = 0; i < b->batches; i++) one_batch(&j, i, scratch, tp);
}

void nnp_sgemm_pack_b(int64_t K, int64_t N, const float *B, int64_t sbk, int64_t sbn, float *dst) {
  nnp_sgemm_pack_b_panels(K, N, B, sbk, sbn, dst, 0, (N + NR - 1) / NR);
}

void nnp_sgemm_pack_b_panels(int64_t K, int64_t N, const float *B, int64_t sbk, int64_t sbn, float *dst, int64_t q0,
                             int64_t q1) {
  for (int64_t q = q0; q < q1; q++) {
    float *d = dst + q * NR * K;
    int64_t cols = N - q * NR < NR ? N - q * NR : NR;
    if (cols == NR && sbn == 1) { /* a whole panel of rows: constant-size copies, which compile
                                    * to vector moves (the loop below, of runtime length over
                                    * pointers that may overlap, copied a float at a time: a
                                    * third of a 1x1 conv's instructions on a 54x54 plane) */
      const float *src = B + q * NR;
      for (int64_t k = 0; k < K; k++) memcpy(d + k * NR, src + k * sbk, NR * sizeof(float));
      continue;
    }
    for (int64_t k = 0; k < K; k++) {
      const float *src = B + k * sbk + q * NR * sbn;
      int64_t c = 0;
      if (sbn == 1)
        for (; c < cols; c++) d[k * NR + c] = src[c];
      else
        for (; c < cols; c++) d[k * NR + c] = src[c * sbn];
      for (; c < NR; c++) d[k * NR + c] = 0.0f;
    }
  }
}

void nnp_sgemm_tile_generic(int64_t K, const float *a, const float *b, int64_t ldb, float *c, int64_t ldc, int mr,
                            int nr, bool accum, const nnp_epilogue *ep, int64_t i0, int64_t j0) {
  float acc[MR][NR];
  memset(acc, 0, sizeof acc);
  if (accum)
    for (int r = 0; r < mr; r++)
      for (int j = 0; j < nr; j++) acc[r][j] = c[r * ldc + j];
  for (int64_t k = 0; k < K; k++)
    for (int r = 0; r < MR; r++)
      for (int j = 0; j < nr; j++) acc[r][j] += a[k * MR + r] * b[k * ldb + j];
  for (int r = 0; r < mr; r++)
    for (int j = 0; j < nr; j++) c[r * ldc + j] = nnp_epilogue_apply(ep, i0 + r, j0 + j, acc[r][j]);
}

typedef struct sgemm_job {
  int64_t M, N, K, mp, np;
  int64_t upp, nu;        /* column panels per tile (2: AVX-512's 6 x 32 pairs) and tiles per row */
  bool by_rows;           /* tile order: see tile_order */
  const float *Ap, *Bp;
  const float *B, *Btail; /* direct B (nnp_sgemm_direct_b_ex): Bp is NULL */
  int64_t ldb, full;      /* direct B: row stride, full column panels */
  bool kblock;            /* K cut into blocks of kc (plan_kblocks) */
  bool narrow;            /* the ragged last column panel by nnp_sgemm_narrow_avx2 (narrow_ok) */
  int64_t tail_ld;        /* that panel's row stride: NR packed, ldb read in place */
  int64_t kc;
  float *C;
  int64_t ldc;
  const nnp_epilogue *ep;
  nnp_sgemm_tile_fn tile;
} sgemm_job;

/* Tiles t in [b, e): column panel t / mp, row panel t % mp (column-major order), so
 * consecutive tiles share a B panel (K x 16 floats), which stays in cache while A's
 * panels stream past; or row-major (by_rows, see tile_order), sharing an A panel. */
/* K is cut into blocks of at most KC: the thread sweeps all its tiles per block, so a
 * block's B panel (KC x 16, 16 KiB) stays in L1 across the row panels and A's block
 * (M x KC) in L2 across column panels; without it a large-K layer (resnet18's 512-channel
 * 3x3: K = 4608) streamed both from L3 on every tile. Partial sums wait in C (exact:
 * each tile continues the same float sums in the same order), the epilogue runs with
 * the last block. (The AVX-512 tile sums even and odd k apart within a block, so there a
 * blocked sum is rounded differently from an unblocked one, within the tests' tolerance.) */
/* The AVX-512 tile (6 x 32, two panels) takes blocks of up to KC_ZMM = 768: its B pair
 * (768 x 32 floats, 96 KiB) then comes from L2, which feeds its 128 bytes per k (24
 * FMAs) easily, and a layer with K <= 768 is not blocked at all. Blocked at 256, each
 * later block reloaded the tile's partial sums from C, six rows a row of C apart, which
 * the prefetcher does not follow: perf annotate put 17% of tile_6x32's samples of
 * vit_b_16 at batch 16 on those loads. On a Zen 5 (48 KiB L1, 1 MiB L2), one thread,
 * bench_gemm_gflops best of 3 alternated, 256 -> 768: 3152 x 3072 x 768 166 -> 223
 * GFLOP/s, 3152 x 768 x 768 183 -> 225, 197 x 768 x 3072 211 -> 224, 512 x 49 x 4608
 * 170 -> 189, 256 x 196 x 2304 222 -> 231; 512 measured between the two. */
enum { KC = 256, KC_ZMM = 768 };

/* The AVX2 tile's ragged last column panel of one or two columns goes to
 * nnp_sgemm_narrow_avx2, several row panels per call (same bits). */
static bool narrow_ok(nnp_sgemm_tile_fn tile, int64_t N) {
  return tile == nnp_sgemm_tile_avx2 && N % NR != 0 && N % NR <= NNP_SGEMM_NARROW;
}

/* The ragged panel's tiles among tiles [b, e), for K block [k0, k0 + kn): they are row
 * panels [ip0, ip1) of column panel np - 1 in either tile order. */
static void narrow_tiles(const sgemm_job *j, int64_t b, int64_t e, int64_t k0, int64_t kn, bool accum,
                         const nnp_epilogue *ep) {
  const int64_t jp = j->np - 1, j0 = jp * NR;
  int64_t ip0, ip1;
  if (j->by_rows) { /* tile ip * np + jp */
    ip0 = b > jp ? (b - jp + j->np - 1) / j->np : 0;
    ip1 = e > jp ? (e - jp + j->np - 1) / j->np : 0;
  } else { /* tile jp * mp + ip */
    ip0 = b - jp * j->mp;
    ip1 = e - jp * j->mp;
  }
  ip0 = ip0 < 0 ? 0 : ip0 > j->mp ? j->mp : ip0;
  ip1 = ip1 < 0 ? 0 : ip1 > j->mp ? j->mp : ip1;
  if (ip0 >= ip1) return;
  const float *bp = j->Bp ? j->Bp + jp * NR * j->K : j->Btail;
  const int64_t ld = j->Bp ? NR : j->tail_ld; /* packed: NR floats a row */
  nnp_sgemm_narrow_avx2(j->M, kn, j->Ap + ip0 * MR * j->K + k0 * MR, MR * j->K, bp + k0 * ld, ld,
                        j->C + ip0 * MR * j->ldc + j0, j->ldc, (int)(j->N - j0), ip0, ip1, accum, ep, j0);
}

/* Column panel jp's B at row k0 (packed, in place, or the packed tail) and its row stride. */
static const float *panel_b(const sgemm_job *j, int64_t jp, int64_t k0, int64_t *ldb) {
  *ldb = !j->Bp && jp < j->full ? j->ldb : NR;
  const float *bp = j->Bp ? j->Bp + jp * NR * j->K : jp < j->full ? j->B + jp * NR : j->Btail;
  return bp + k0 * *ldb;
}

/* Tile (ip, ju) for K block [k0, k0 + kn): column panels [ju * upp, ju * upp + upp). A
 * pair whose second panel has one column runs as two tiles: the tile's 6 x 1 body sums a
 * single column in its own order, which the pair would not reproduce. */
static void run_tile(const sgemm_job *j, int64_t ip, int64_t ju, int64_t k0, int64_t kn, bool accum,
                     const nnp_epilogue *ep) {
  const int64_t jp = ju * j->upp, i0 = ip * MR, j0 = jp * NR, cols = j->upp * NR;
  const int mr = (int)(j->M - i0 < MR ? j->M - i0 : MR), nr = (int)(j->N - j0 < cols ? j->N - j0 : cols);
  const float *a = j->Ap + ip * MR * j->K + k0 * MR;
  float *c = j->C + i0 * j->ldc + j0;
  int64_t ldb, ldb1 = NR;
  const float *bp = panel_b(j, jp, k0, &ldb);
  if (nr > NR + 1) {
    const float *bq = panel_b(j, jp + 1, k0, &ldb1);
    nnp_sgemm_tile2_avx512(kn, a, bp, ldb, bq, ldb1, c, j->ldc, mr, nr, accum, ep, i0, j0);
    return;
  }
  j->tile(kn, a, bp, ldb, c, j->ldc, mr, nr < NR ? nr : NR, accum, ep, i0, j0);
  if (nr > NR) j->tile(kn, a, panel_b(j, jp + 1, k0, &ldb1), ldb1, c + NR, j->ldc, mr, nr - NR, accum, ep, i0, j0 + NR);
}

/* Row-major tiles [b, e) (by_rows), ROW_CHUNK row panels at a time, each chunk through
 * all its K blocks before the next: within a chunk and K block the column units go
 * outermost, so each unit's B block (kc x 32 floats) stays in L1 across the chunk's row
 * panels and the chunk's A (ROW_CHUNK x 6 x kc floats, 192 KiB at kc 256) in L2 across
 * the units, and the chunk's partial sums in C (192 rows) stay in L2 across its K blocks.
 * Row by row, every row panel swept all of B's block from L3 (vit_b_16's 768 x 768
 * projections read 0.8 MB per row panel and block); K block by K block over all rows, a
 * batch of 16 (M = 3152) wrote and reread all of C from L3 once per block (12 times for
 * the 3072 -> 768 projection). Each tile sees its K blocks in the same order: the same
 * bits. */
enum { ROW_CHUNK = 32 };

static void row_chunks(const sgemm_job *j, int64_t b, int64_t e, int64_t nkb, int64_t kc) {
  const int64_t ip_first = b / j->nu, ip_end = (e - 1) / j->nu + 1;
  for (int64_t c0 = ip_first; c0 < ip_end; c0 += ROW_CHUNK) {
    const int64_t c1 = c0 + ROW_CHUNK < ip_end ? c0 + ROW_CHUNK : ip_end;
    for (int64_t kb = 0; kb < nkb; kb++) {
      const int64_t k0 = kb * kc, kn = j->K - k0 < kc ? j->K - k0 : kc;
      const nnp_epilogue *ep = kb == nkb - 1 ? j->ep : NULL;
      for (int64_t ju = 0; ju < j->nu; ju++) {
        if (j->narrow && ju == j->nu - 1) continue; /* narrow_tiles */
        for (int64_t ip = c0; ip < c1; ip++) {
          const int64_t t = ip * j->nu + ju;
          if (t >= b && t < e) run_tile(j, ip, ju, k0, kn, kb > 0, ep);
        }
      }
      if (j->narrow) /* the chunk's ragged panel while its A block is still in L2 */
        narrow_tiles(j, b > c0 * j->nu ? b : c0 * j->nu, e < c1 * j->nu ? e : c1 * j->nu, k0, kn, kb > 0, ep);
    }
  }
}

/* Column-major tiles [b, e) for K block [k0, k0 + kn), in blocks of column panels: per
 * block, row panels outermost, so that each of C's rows (and the residual's, and B's
 * rows read in place) is visited for a block's width of consecutive lines at a time.
 * Panel by panel, a 112x112 plane's 1x1 conv with K = 16 and M = 96 kept 112 rows in
 * flight, one line each, 50 KB apart: more streams than the hardware prefetcher
 * follows, so with its data out of cache (as a model's early layers find it) every
 * line was a miss: 0.81-1.04 ms against 0.56-0.61 in cache; in blocks of 16 panels
 * 0.64-0.68 (bench_conv_layers 1 1 1x1 with BENCH_CONV_COLD=1, one thread; wider blocks
 * measured the same). In cache the 1x1 layers' sum is level (20.46 vs 20.45 ms). The
 * block's B (kn x width x 16 floats) stays within COL_BLOCK_FLOATS (in L2, where the
 * panel's B stayed in L1) across the row panels; A's row panel stays in L1 across the
 * block. Each tile's sums are the same: the same bits. */
enum { COL_BLOCK_FLOATS = 32 * 1024, COL_BLOCK_MAX = 16 };

static void col_blocks(const sgemm_job *j, int64_t b, int64_t e, int64_t k0, int64_t kn, const nnp_epilogue *ep) {
  int64_t width = COL_BLOCK_FLOATS / (kn * NR * j->upp);
  width = width < 1 ? 1 : width > COL_BLOCK_MAX ? COL_BLOCK_MAX : width;
  const int64_t ju_end = (e - 1) / j->mp + 1;
  for (int64_t ju0 = b / j->mp; ju0 < ju_end; ju0 += width) {
    const int64_t ju1 = ju0 + width < ju_end ? ju0 + width : ju_end;
    for (int64_t ip = 0; ip < j->mp; ip++)
      for (int64_t ju = ju0, t = ju0 * j->mp + ip; ju < ju1; ju++, t += j->mp)
        if (t >= b && t < e && !(j->narrow && ju == j->nu - 1)) run_tile(j, ip, ju, k0, kn, k0 > 0, ep);
  }
}

static void sgemm_range(void *p, int64_t b, int64_t e) {
  const sgemm_job *j = p;
  int64_t nkb = j->kblock ? (j->K + j->kc - 1) / j->kc : 1, kc = j->kblock ? j->kc : j->K;
  if (j->by_rows) { /* every K block, the narrow panel's too */
    row_chunks(j, b, e, nkb, kc);
    return;
  }
  for (int64_t kb = 0; kb < nkb; kb++) {
    int64_t k0 = kb * kc, kn = j->K - k0 < kc ? j->K - k0 : kc;
    const nnp_epilogue *ep = kb == nkb - 1 ? j->ep : NULL;
    col_blocks(j, b, e, k0, kn, ep); /* narrow: narrow_tiles below */
    if (j->narrow) narrow_tiles(j, b, e, k0, kn, kb > 0, ep);
  }
}

/* Which operand the threads split (their ranges of tiles are contiguous): the larger
 * one, so that each thread streams only its share of it from L3 and all share the
 * smaller. Column-major tile order (the default) splits B's panels: a large
 * convolution plane (N = 3136) with few channels. Row-major splits A: resnet18's
 * 512-channel 7x7 layers (M = 512, N = 49, A 9.4 MB) had both threads stream all of A. */
/* On AVX-512 a tile is two column panels (nnp_sgemm_tile2_avx512). */
static void tile_order(sgemm_job *j) {
  j->np = (j->N + NR - 1) / NR;
  j->upp = j->tile == nnp_sgemm_tile_avx512 ? 2 : 1;
  j->nu = (j->np + j->upp - 1) / j->upp;
  j->by_rows = j->M > j->N;
}

/* K blocking stores partial sums in C, so not when the epilogue's residual is C itself
 * (an in-place residual add would read partial sums). Balanced blocks of at most KC
 * (KC_ZMM for the AVX-512 tile: j->tile must be set). */
static void plan_kblocks(sgemm_job *j) {
  j->kblock = false;
  const int64_t kc_max = j->tile == nnp_sgemm_tile_avx512 ? KC_ZMM : KC;
  if (j->K <= kc_max) return;
  /* Row-major order sweeps all of B for each A panel: when B fits in half of L2 (a 7x7
   * plane: N = 49, K up to 1024), blocking K only writes and rereads the partial sums,
   * and a block of B (kc x N) fits in L1 no better than the whole B fits in L2.
   * Measured on the AVX2 tile only (an AVX2-only EPYC); the AVX-512 tile keeps its
   * blocking, whose rounding its GEMV reproduces. */
  if (j->by_rows && j->N > NR && j->tile == nnp_sgemm_tile_avx2 &&
      j->K * j->np * NR * (int64_t)sizeof(float) <= 256 * 1024)
    return;
  if (j->ep && j->ep->residual) {
    uintptr_t r0 = (uintptr_t)j->ep->residual, r1 = (uintptr_t)(j->ep->residual + (j->M - 1) * j->ep->ld_res + j->N);
    uintptr_t c0 = (uintptr_t)j->C, c1 = (uintptr_t)(j->C + (j->M - 1) * j->ldc + j->N);
    if (r0 < c1 && c0 < r1) return;
  }
  int64_t nkb = (j->K + kc_max - 1) / kc_max;
  j->kc = (j->K + nkb - 1) / nkb;
  j->kblock = true;
}

typedef struct sgemv_job {
  int64_t N, K, kc;
  const float *Ap, *Bp;
  float *C;
  const nnp_epilogue *ep;
} sgemv_job;

/* Column panels [p0, p1) of a one-row product; a one-column panel keeps the tile (its
 * own 6x1 body, and its order of sums). */
static void sgemv_range(void *p, int64_t p0, int64_t p1) {
  const sgemv_job *g = p;
  for (int64_t jp = p0; jp < p1;) {
    const int64_t j0 = jp * NR;
    const float *bp = g->Bp + jp * NR * g->K;
    if (g->N - j0 > 1) { /* up to 4 panels at once, none of them a one-column panel */
      int np = 1;
      while (np < 4 && jp + np < p1 && g->N - (jp + np) * NR > 1) np++;
      nnp_sgemv_panel_avx512(g->K, g->kc, g->Ap, bp, g->C + j0, g->N, g->ep, j0, np);
      jp += np;
      continue;
    }
    for (int64_t k0 = 0; k0 < g->K; k0 += g->kc) {
      const int64_t kn = g->K - k0 < g->kc ? g->K - k0 : g->kc;
      nnp_sgemm_tile_avx512(kn, g->Ap + k0 * MR, bp + k0 * NR, NR, g->C + j0, 0, 1, 1, k0 > 0,
                            k0 + kn == g->K ? g->ep : NULL, 0, j0);
    }
    jp++;
  }
}

static void sgemv_range_avx2(void *p, int64_t p0, int64_t p1) {
  const sgemv_job *g = p;
  nnp_sgemv_panels_avx2(g->K, g->Ap, g->Bp, g->C, g->N, g->ep, p0, p1);
}

void nnp_sgemm_packed_ex(int64_t M, int64_t N, int64_t K, const float *Ap, const float *Bp, float *C,
                         int64_t ldc, const nnp_epilogue *ep, nnp_threadpool *tp, bool generic) {
  if (M <= 0 || N <= 0) return;
  const nnp_isa isa = generic ? NNP_ISA_GENERIC : nnp_dispatch_isa(NNP_KF_GEMM);
  if (M == 1 && isa == NNP_ISA_AVX512) { /* a classifier at batch 1: stream B once */
    sgemm_job j = {.M = M, .N = N, .K = K, .C = C, .ldc = ldc, .ep = ep, .tile = nnp_sgemm_tile_avx512};
    plan_kblocks(&j); /* the tile's blocks: its one-column panels run the tile */
    sgemv_job g = {.N = N, .K = K, .kc = j.kblock ? j.kc : K, .Ap = Ap, .Bp = Bp, .C = C, .ep = ep};
    nnp_threadpool_run(tp, sgemv_range, &g, (N + NR - 1) / NR);
    return;
  }
  if (M == 1 && isa == NNP_ISA_AVX2) { /* the same on AVX2: one FMA per B vector, not six */
    sgemv_job g = {.N = N, .K = K, .Ap = Ap, .Bp = Bp, .C = C, .ep = ep};
    nnp_threadpool_run(tp, sgemv_range_avx2, &g, (N + NR - 1) / NR);
    return;
  }
  sgemm_job j = {.M = M, .N = N, .K = K, .mp = (M + MR - 1) / MR, .Ap = Ap, .Bp = Bp, .C = C, .ldc = ldc, .ep = ep,
                 .tile = generic ? nnp_sgemm_tile_generic : nnp_sgemm_tile_fast()};
  tile_order(&j);
  plan_kblocks(&j);
  j.narrow = narrow_ok(j.tile, N);
  nnp_threadpool_run(tp, sgemm_range, &j, j.mp * j.nu);
}

void nnp_sgemm_packed_block(int64_t M, int64_t N, int64_t K, const float *Ap, const float *Bp, float *C, int64_t ldc,
                            const nnp_epilogue *ep, int64_t ip0, int64_t ip1, int64_t jp0, int64_t jp1, bool generic) {
  if (M <= 0 || N <= 0 || ip0 >= ip1 || jp0 >= jp1) return;
  nnp_sgemm_tile_fn tile = generic ? nnp_sgemm_tile_generic : nnp_sgemm_tile_fast();
  sgemm_job j = {.M = M, .N = N, .K = K, .C = C, .ldc = ldc, .ep = ep, .tile = tile};
  plan_kblocks(&j);
  int64_t nkb = j.kblock ? (K + j.kc - 1) / j.kc : 1, kc = j.kblock ? j.kc : K;
  /* per K block: a B panel block (kc x 16) stays in L1 across the row panels, the rows'
   * A block in L2 across the column panels (as sgemm_range) */
  for (int64_t kb = 0; kb < nkb; kb++) {
    int64_t k0 = kb * kc, kn = K - k0 < kc ? K - k0 : kc;
    const nnp_epilogue *e = kb == nkb - 1 ? ep : NULL;
    for (int64_t jp = jp0; jp < jp1;) {
      int64_t j0 = jp * NR;
      int nr = (int)(N - j0 < NR ? N - j0 : NR);
      const float *bp = Bp + (jp - jp0) * NR * K + k0 * NR;
      if (nr < NR && narrow_ok(tile, N)) {
        nnp_sgemm_narrow_avx2(M, kn, Ap + ip0 * MR * K + k0 * MR, MR * K, bp, NR, C + ip0 * MR * ldc + j0, ldc, nr,
                              ip0, ip1, kb > 0, e, j0);
        jp++;
        continue;
      }
      /* a pair of panels on AVX-512 (as run_tile), its second panel with 2+ columns */
      const int pair = tile == nnp_sgemm_tile_avx512 && jp + 1 < jp1 && N - j0 > NR + 1 ? (int)(N - j0 < 2 * NR ? N - j0 : 2 * NR) : 0;
      for (int64_t ip = ip0; ip < ip1; ip++) {
        int64_t i0 = ip * MR;
        int mr = (int)(M - i0 < MR ? M - i0 : MR);
        const float *a = Ap + ip * MR * K + k0 * MR;
        if (pair) nnp_sgemm_tile2_avx512(kn, a, bp, NR, bp + NR * K, NR, C + i0 * ldc + j0, ldc, mr, pair, kb > 0, e, i0, j0);
        else tile(kn, a, bp, NR, C + i0 * ldc + j0, ldc, mr, nr, kb > 0, e, i0, j0);
      }
      jp += pair ? 2 : 1;
    }
  }
}

bool nnp_sgemm_narrow_in_place(int64_t N, bool generic) {
  return N <= NNP_SGEMM_NARROW && !generic && narrow_ok(nnp_sgemm_tile_fast(), N);
}

void nnp_sgemm_direct_b_ex(int64_t M, int64_t N, int64_t K, const float *Ap, const float *B, int64_t ldb,
                           const float *Btail, float *C, int64_t ldc, const nnp_epilogue *ep, nnp_threadpool *tp,
                           bool generic) {
  if (M <= 0 || N <= 0) return;
  /* Btail NULL (nnp_sgemm_narrow_in_place): the narrow last panel is read in place too */
  sgemm_job j = {.M = M, .N = N, .K = K, .mp = (M + MR - 1) / MR, .Ap = Ap, .B = B,
                 .Btail = Btail ? Btail : B + N / NR * NR, .ldb = ldb, .full = N / NR, .C = C, .ldc = ldc, .ep = ep,
                 .tile = generic ? nnp_sgemm_tile_generic : nnp_sgemm_tile_fast(), .tail_ld = Btail ? NR : ldb};
  tile_order(&j);
  plan_kblocks(&j);
  j.narrow = narrow_ok(j.tile, N);
  nnp_threadpool_run(tp, sgemm_range, &j, j.mp * j.nu);
}

void nnp_sgemm_packed(int64_t M, int64_t N, int64_t K, const float *Ap, const float *Bp, float *C, int64_t ldc,
                      const nnp_epilogue *ep, nnp_threadpool *tp) {
  nnp_sgemm_packed_ex(M, N, K, Ap, Bp, C, ldc, ep, tp, nnp_dispatch_portable(NNP_KF_GEMM, false));
}
