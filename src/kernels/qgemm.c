/* Packing, the generic tile and the tile loop of the packed INT8 GEMM (kernels/qgemm.h). */
#include "kernels/qgemm.h"

#include "kernels/dispatch.h"

#define MR NNP_QGEMM_MR
#define NR NNP_QGEMM_NR

static int64_t k2_of(int64_t K) { return (K + 1) / 2; }

size_t nnp_qgemm_packed_a_elems(int64_t M, int64_t K) {
  return (size_t)((M + MR - 1) / MR * MR * 2 * k2_of(K));
}
size_t nnp_qgemm_packed_b_elems(int64_t K, int64_t N) {
  return (size_t)((N + NR - 1) / NR * NR * 2 * k2_of(K));
}

void nnp_qgemm_pack_a(int64_t M, int64_t K, const int8_t *A, int64_t lda, const int32_t *a_zp, int16_t *dst) {
  int64_t K2 = k2_of(K);
  for (int64_t p = 0; p * MR < M; p++) {
    int16_t *panel = dst + p * MR * 2 * K2;
    for (int64_t k = 0; k < 2 * K2; k++)
      for (int r = 0; r < MR; r++) {
        int64_t m = p * MR + r;
        int16_t v = 0;
        if (m < M && k < K) v = (int16_t)(A[m * lda + k] - (a_zp ? a_zp[m] : 0));
        panel[(k >> 1) * MR * 2 + r * 2 + (k & 1)] = v;
      }
  }
}

void nnp_qgemm_pack_b(int64_t K, int64_t N, const uint8_t *B, int64_t sbk, int64_t sbn, int32_t b_zp, int16_t *dst) {
  int64_t K2 = k2_of(K);
  for (int64_t q = 0; q * NR < N; q++) {
    int16_t *panel = dst + q * NR * 2 * K2;
    for (int64_t k = 0; k < 2 * K2; k++) {
      int16_t *row = panel + (k >> 1) * NR * 2 + (k & 1);
      for (int c = 0; c < NR; c++) {
        int64_t n = q * NR + c;
        row[c * 2] = (int16_t)(n < N && k < K ? (int32_t)B[k * sbk + n * sbn] - b_zp : 0);
      }
    }
  }
}

void nnp_qgemm_tile_generic(int64_t K2, const int16_t *a, const int16_t *b, uint8_t *c, int64_t ldc, int mr, int nr,
                            const nnp_qepilogue *ep, int64_t i0) {
  int32_t acc[MR][NR] = {{0}};
  for (int64_t kp = 0; kp < K2; kp++) {
    for (int r = 0; r < MR; r++)
      for (int j = 0; j < NR; j++)
        acc[r][j] += (int32_t)a[r * 2] * b[j * 2] + (int32_t)a[r * 2 + 1] * b[j * 2 + 1];
    a += MR * 2;
    b += NR * 2;
  }
  for (int r = 0; r < mr; r++)
    for (int j = 0; j < nr; j++) c[r * ldc + j] = nnp_qrequant(acc[r][j], ep, i0 + r);
}

typedef struct qgemm_job {
  int64_t M, N, K2, mp;
  const int16_t *Ap, *Bp;
  uint8_t *C;
  int64_t ldc;
  const nnp_qepilogue *ep;
  nnp_qgemm_tile_fn tile;
} qgemm_job;

/* Tiles t in [b, e): column panel t / mp, row panel t % mp, so consecutive tiles reuse
 * one B panel from cache while the (constant) weight panels stream past. */
static void qgemm_range(void *p, int64_t b, int64_t e) {
  const qgemm_job *j = p;
  for (int64_t t = b; t < e; t++) {
    int64_t ip = t % j->mp, jp = t / j->mp;
    int64_t i0 = ip * MR, j0 = jp * NR;
    int mr = (int)(j->M - i0 < MR ? j->M - i0 : MR), nr = (int)(j->N - j0 < NR ? j->N - j0 : NR);
    j->tile(j->K2, j->Ap + ip * MR * 2 * j->K2, j->Bp + jp * NR * 2 * j->K2, j->C + i0 * j->ldc + j0, j->ldc, mr,
            nr, j->ep, i0);
  }
}

nnp_qgemm_isa nnp_qgemm_best_isa(void) {
  nnp_isa isa = nnp_dispatch_isa(NNP_KF_QGEMM);
  return isa == NNP_ISA_AVX512_VNNI ? NNP_QGEMM_VNNI : isa == NNP_ISA_AVX2 ? NNP_QGEMM_AVX2 : NNP_QGEMM_GENERIC;
}

const char *nnp_qgemm_isa_name(nnp_qgemm_isa isa) {
  return isa == NNP_QGEMM_VNNI ? "avx512vnni" : isa == NNP_QGEMM_AVX2 ? "avx2" : "generic";
}

void nnp_qgemm_packed_isa(int64_t M, int64_t N, int64_t K, const int16_t *Ap, const int16_t *Bp, uint8_t *C,
                          int64_t ldc, const nnp_qepilogue *ep, nnp_threadpool *tp, nnp_qgemm_isa isa) {
  if (M <= 0 || N <= 0) return;
  qgemm_job j = {.M = M, .N = N, .K2 = k2_of(K), .mp = (M + MR - 1) / MR, .Ap = Ap, .Bp = Bp, .C = C, .ldc = ldc,
                 .ep = ep,
                 .tile = isa == NNP_QGEMM_VNNI   ? nnp_qgemm_tile_vnni
                         : isa == NNP_QGEMM_AVX2 ? nnp_qgemm_tile_avx2
                                                 : nnp_qgemm_tile_generic};
  nnp_threadpool_run(tp, qgemm_range, &j, j.mp * ((N + NR - 1) / NR));
}

void nnp_qgemm_packed_ex(int64_t M, int64_t N, int64_t K, const int16_t *Ap, const int16_t *Bp, uint8_t *C,
                         int64_t ldc, const nnp_qepilogue *ep, nnp_threadpool *tp, bool generic) {
  nnp_qgemm_packed_isa(M, N, K, Ap, Bp, C, ldc, ep, tp, generic ? NNP_QGEMM_GENERIC : nnp_qgemm_best_isa());
}

/* --- the u8 x s8 layout (vpdpbusd) ---------------------------------------------------- */

static int64_t k4_of(int64_t K) { return (K + 3) / 4; }

size_t nnp_qgemm4_packed_a_bytes(int64_t M, int64_t K) { return (size_t)((M + MR - 1) / MR * MR * 4 * k4_of(K)); }
size_t nnp_qgemm4_packed_b_bytes(int64_t K, int64_t N) { return (size_t)((N + NR - 1) / NR * NR * 4 * k4_of(K)); }

void nnp_qgemm4_pack_a(int64_t M, int64_t K, const int8_t *A, int64_t lda, int8_t *dst) {
  int64_t K4 = k4_of(K);
  for (int64_t p = 0; p * MR < M; p++) {
    int8_t *panel = dst + p * MR * 4 * K4;
    for (int64_t k = 0; k < 4 * K4; k++)
      for (int r = 0; r < MR; r++) {
        int64_t m = p * MR + r;
        panel[(k >> 2) * MR * 4 + r * 4 + (k & 3)] = m < M && k < K ? A[m * lda + k] : 0;
      }
  }
}

void nnp_qgemm4_pack_b(int64_t K, int64_t N, const uint8_t *B, int64_t sbk, int64_t sbn, uint8_t pad, uint8_t *dst) {
  int64_t K4 = k4_of(K);
  for (int64_t q = 0; q * NR < N; q++) {
    uint8_t *panel = dst + q * NR * 4 * K4;
    for (int64_t k = 0; k < 4 * K4; k++)
      for (int c = 0; c < NR; c++) {
        int64_t n = q * NR + c;
        panel[(k >> 2) * NR * 4 + c * 4 + (k & 3)] = n < N && k < K ? B[k * sbk + n * sbn] : pad;
      }
  }
}

void nnp_qgemm4_tile_generic(int64_t K4, const int8_t *a, const uint8_t *b, uint8_t *c, int64_t ldc, int mr, int nr,
                             const nnp_qepilogue *ep, int64_t i0) {
  int32_t acc[MR][NR] = {{0}};
  for (int64_t kq = 0; kq < K4; kq++) {
    for (int r = 0; r < MR; r++)
      for (int j = 0; j < NR; j++)
        for (int t = 0; t < 4; t++) acc[r][j] += (int32_t)b[j * 4 + t] * a[r * 4 + t];
    a += MR * 4;
    b += NR * 4;
  }
  for (int r = 0; r < mr; r++)
    for (int j = 0; j < nr; j++) c[r * ldc + j] = nnp_qrequant(acc[r][j], ep, i0 + r);
}

typedef struct qgemm4_job {
  int64_t M, N, K4, mp, rp; /* rp: row tasks (pairs of row panels on the VNNI path) */
  const int8_t *Ap;
  const uint8_t *Bp;
  uint8_t *C;
  int64_t ldc;
  const nnp_qepilogue *ep;
  bool vnni;
} qgemm4_job;

/* Tiles t = jp * rp + task: consecutive tasks share a B panel (it stays in cache) while
 * the A panels stream past. On the VNNI path a task is two row panels (12 rows). */
static void qgemm4_range(void *p, int64_t b, int64_t e) {
  const qgemm4_job *j = p;
  const int64_t ps = MR * 4 * j->K4; /* bytes per A panel */
  for (int64_t t = b; t < e; t++) {
    const int64_t task = t % j->rp, jp = t / j->rp, ip = j->vnni ? 2 * task : task;
    const int64_t i0 = ip * MR, j0 = jp * NR;
    const int mr = (int)(j->M - i0 < MR ? j->M - i0 : MR), nr = (int)(j->N - j0 < NR ? j->N - j0 : NR);
    const uint8_t *bp = j->Bp + jp * NR * 4 * j->K4;
    uint8_t *c = j->C + i0 * j->ldc + j0;
    if (!j->vnni) {
      nnp_qgemm4_tile_generic(j->K4, j->Ap + ip * ps, bp, c, j->ldc, mr, nr, j->ep, i0);
    } else if (ip + 1 < j->mp) {
      const int64_t i1 = i0 + MR;
      nnp_qgemm4_tile2_vnni(j->K4, j->Ap + ip * ps, j->Ap + (ip + 1) * ps, bp, c, j->ldc,
                            (int)(j->M - i1 < MR ? j->M - i1 : MR), nr, j->ep, i0);
    } else {
      nnp_qgemm4_tile_vnni(j->K4, j->Ap + ip * ps, bp, c, j->ldc, mr, nr, j->ep, i0);
    }
  }
}

void nnp_qgemm4_packed(int64_t M, int64_t N, int64_t K, const int8_t *Ap, const uint8_t *Bp, uint8_t *C, int64_t ldc,
                       const nnp_qepilogue *ep, nnp_threadpool *tp, bool vnni) {
  if (M <= 0 || N <= 0) return;
  const int64_t mp = (M + MR - 1) / MR;
  qgemm4_job j = {.M = M, .N = N, .K4 = k4_of(K), .mp = mp, .rp = vnni ? (mp + 1) / 2 : mp, .Ap = Ap, .Bp = Bp,
                  .C = C, .ldc = ldc, .ep = ep, .vnni = vnni};
  nnp_threadpool_run(tp, qgemm4_range, &j, j.rp * ((N + NR - 1) / NR));
}
