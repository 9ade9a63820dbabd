/* Packed SGEMM: the fast tile (AVX-512 where present; AVX2 under NNP_CPU_FEATURES=avx2,
 * ctest's *_avx2 run) and the generic one against the reference GEMM (ops/gemm_ref.h),
 * over random odd shapes, transposed operands, every epilogue, thread counts 1..4, and
 * the single-thread block entry (nnp_sgemm_packed_block), M = 1 (the AVX-512 GEMV), and
 * N = 1 or 2 with B read in place (the AVX2 narrow kernel: squeeze-and-excitation layers). */
#include <string.h>

#include "kernel_test_util.h"
#include "kernels/cpu.h"
#include "kernels/dispatch.h"
#include "kernels/gemm.h"
#include "nnperf/alloc.h"
#include "ops/gemm_ref.h"
#include "test.h"

static void reference(int64_t M, int64_t N, int64_t K, const float *A, int64_t sam, int64_t sak, const float *B,
                      int64_t sbk, int64_t sbn, const nnp_epilogue *ep, float *Y) {
  /* B as a plain K x N matrix for the reference GEMM */
  float *Bc = nnp_malloc((size_t)(K * N + 1) * sizeof(float));
  for (int64_t k = 0; k < K; k++)
    for (int64_t n = 0; n < N; n++) Bc[k * N + n] = B[k * sbk + n * sbn];
  memset(Y, 0, (size_t)(M * N) * sizeof(float));
  nnp_gemm_ref_f32(M, N, K, A, sam, sak, Bc, N, Y, N);
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) Y[i * N + j] = nnp_epilogue_apply(ep, i, j, Y[i * N + j]);
  nnp_free(Bc);
}

static int narrow_cases; /* products with B read in place by the narrow kernel */

static void one_case(int trial, nnp_threadpool *const *pools) {
  int64_t M = kt_int(1, 40), N = kt_int(1, 70), K = kt_int(1, 90);
  if (trial % 7 == 0) { /* some larger ones, several tiles in each direction */
    M = kt_int(30, 130);
    N = kt_int(30, 200);
    K = kt_int(100, 1000); /* blocked past 256 (AVX2 tile) or 768 (AVX-512) */
  }
  if (trial % 10 == 5) { /* one or two columns: a squeeze-and-excitation layer (K blocked past 256) */
    M = kt_int(1, 300);
    N = 1 + trial % 2;
    K = kt_int(1, 1400);
  }
  if (trial % 10 == 9) { /* taller than wide (row-major tiles) with a one- or two-column ragged panel
                          * (a 7x7 or 17x17 plane): more row panels than one row chunk holds,
                          * K blocked or not, so the narrow panel runs chunk by chunk and block
                          * by block */
    const bool kblocked = kt_next() & 1; /* K past the size whose B fits in L2 whole */
    M = kt_int(193, 260);
    N = 16 * (kblocked ? 3 : kt_int(1, 3)) + 1 + (int64_t)(kt_next() & 1);
    K = kblocked ? kt_int(1030, 1300) : kt_int(100, 500);
  }
  if (trial % 10 == 3) { /* one row: the GEMV path of the AVX-512 build (a classifier at batch 1) */
    M = 1;
    N = kt_int(1, 300);
    K = kt_int(1, 1300);
  }
  bool ta = kt_next() & 1, tb = kt_next() & 1;
  float *A = nnp_malloc((size_t)(M * K) * sizeof(float)), *B = nnp_malloc((size_t)(K * N) * sizeof(float));
  float *bias_r = nnp_malloc((size_t)M * sizeof(float)), *bias_c = nnp_malloc((size_t)N * sizeof(float));
  float *res = nnp_malloc((size_t)(M * N) * sizeof(float));
  float *want = nnp_malloc((size_t)(M * N) * sizeof(float)), *got = nnp_malloc((size_t)(M * N) * sizeof(float));
  kt_fill(A, M * K);
  kt_fill(B, K * N);
  kt_fill(bias_r, M);
  kt_fill(bias_c, N);
  kt_fill(res, M * N);
  int64_t sam = ta ? 1 : K, sak = ta ? M : 1, sbk = tb ? 1 : N, sbn = tb ? K : 1;
  nnp_epilogue ep = {.act = trial % 6, .act_min = -0.3f, .act_max = 0.7f};
  int bk = trial % 3;
  ep.bias_kind = bk;
  ep.bias = bk == NNP_BIAS_ROW ? bias_r : bk == NNP_BIAS_COL ? bias_c : NULL;
  if (trial % 2) {
    ep.residual = res;
    ep.ld_res = N;
  }
  reference(M, N, K, A, sam, sak, B, sbk, sbn, &ep, want);
  float *ap = nnp_aligned_alloc(nnp_sgemm_packed_a_floats(M, K) * sizeof(float));
  float *bp = nnp_aligned_alloc(nnp_sgemm_packed_b_floats(K, N) * sizeof(float));
  nnp_sgemm_pack_a(M, K, A, sam, sak, ap);
  nnp_sgemm_pack_b(K, N, B, sbk, sbn, bp);
  for (int generic = 0; generic < 2; generic++) {
    if (!generic && !nnp_cpu_has_avx2_fma()) continue;
    for (int t = 0; t < 4; t++) {
      memset(got, 0xff, (size_t)(M * N) * sizeof(float)); /* NaN: every element must be written */
      nnp_sgemm_packed_ex(M, N, K, ap, bp, got, N, &ep, pools[t], generic);
      double err = kt_max_err(got, want, M * N);
      if (M == 1) {
        /* the one-row (GEMV) path gives the bits the tile gives that row inside a taller
         * product (the row twice, its bias and residual too): an image's result must not
         * depend on its batch */
        float *a2 = nnp_malloc((size_t)(2 * K) * sizeof(float)), *c2 = nnp_malloc((size_t)(2 * N) * sizeof(float));
        float *r2 = nnp_malloc((size_t)(2 * N) * sizeof(float)), b2[2] = {bias_r[0], bias_r[0]};
        float *ap2 = nnp_aligned_alloc(nnp_sgemm_packed_a_floats(2, K) * sizeof(float));
        for (int64_t k = 0; k < K; k++) a2[k] = a2[K + k] = A[k * sak];
        for (int64_t n = 0; n < N; n++) r2[n] = r2[N + n] = res[n];
        nnp_epilogue ep2 = ep;
        if (ep.bias_kind == NNP_BIAS_ROW) ep2.bias = b2;
        if (ep.residual) ep2.residual = r2;
        nnp_sgemm_pack_a(2, K, a2, K, 1, ap2);
        nnp_sgemm_packed_ex(2, N, K, ap2, bp, c2, N, &ep2, pools[t], generic);
        CHECK_MSG(!memcmp(c2, got, (size_t)N * sizeof(float)), "trial %d N=%lld K=%lld %s: M = 1 differs from the tile",
                  trial, (long long)N, (long long)K, generic ? "generic" : "fast");
        nnp_free(a2), nnp_free(c2), nnp_free(r2), nnp_aligned_free(ap2);
      }
      CHECK_MSG(err < 1e-4, "trial %d M=%lld N=%lld K=%lld ta=%d tb=%d act=%d bias=%d res=%d %s threads=%d: err %g",
                trial, (long long)M, (long long)N, (long long)K, ta, tb, ep.act, bk, ep.residual != NULL,
                generic ? "generic" : "fast", t + 1, err);
      /* the same product as four blocks (row panels x column panels cut at random),
       * each given only its own column panels, as the fused im2col conv calls it */
      {
        int64_t mp = (M + NNP_SGEMM_MR - 1) / NNP_SGEMM_MR, np = (N + NNP_SGEMM_NR - 1) / NNP_SGEMM_NR;
        int64_t im = kt_int(0, mp), jm = kt_int(0, np);
        memset(got, 0xff, (size_t)(M * N) * sizeof(float));
        for (int bi = 0; bi < 2; bi++)
          for (int bj = 0; bj < 2; bj++) {
            int64_t ip0 = bi ? im : 0, ip1 = bi ? mp : im, jp0 = bj ? jm : 0, jp1 = bj ? np : jm;
            nnp_sgemm_packed_block(M, N, K, ap, bp + jp0 * NNP_SGEMM_NR * K, got, N, &ep, ip0, ip1, jp0, jp1,
                                   generic);
          }
        err = kt_max_err(got, want, M * N);
        CHECK_MSG(err < 1e-4, "blocks: trial %d M=%lld N=%lld K=%lld act=%d bias=%d res=%d %s: err %g", trial,
                  (long long)M, (long long)N, (long long)K, ep.act, bk, ep.residual != NULL,
                  generic ? "generic" : "fast", err);
      }
      if (tb) continue;
      /* B read in place (row-major K x N), only the ragged last panel packed */
      int64_t full = N / NNP_SGEMM_NR * NNP_SGEMM_NR;
      float *tail = nnp_aligned_alloc(nnp_sgemm_packed_b_floats(K, NNP_SGEMM_NR) * sizeof(float));
      if (full < N) nnp_sgemm_pack_b_panels(K, N - full, B + full, N, 1, tail, 0, 1);
      memset(got, 0xff, (size_t)(M * N) * sizeof(float));
      nnp_sgemm_direct_b_ex(M, N, K, ap, B, N, tail, got, N, &ep, pools[t], generic);
      err = kt_max_err(got, want, M * N);
      CHECK_MSG(err < 1e-4, "direct B: trial %d M=%lld N=%lld K=%lld act=%d bias=%d res=%d %s threads=%d: err %g",
                trial, (long long)M, (long long)N, (long long)K, ep.act, bk, ep.residual != NULL,
                generic ? "generic" : "fast", t + 1, err);
      /* one or two columns (a 1x1 conv on a 1x1 plane): the narrow kernel reads B in place */
      if (nnp_sgemm_narrow_in_place(N, generic)) {
        memset(got, 0xff, (size_t)(M * N) * sizeof(float));
        nnp_sgemm_direct_b_ex(M, N, K, ap, B, N, NULL, got, N, &ep, pools[t], generic);
        err = kt_max_err(got, want, M * N);
        CHECK_MSG(err < 1e-4, "narrow B in place: trial %d M=%lld N=%lld K=%lld: err %g", trial, (long long)M,
                  (long long)N, (long long)K, err);
        narrow_cases++;
      }
      nnp_aligned_free(tail);
    }
  }
  nnp_aligned_free(ap);
  nnp_aligned_free(bp);
  nnp_free(A);
  nnp_free(B);
  nnp_free(bias_r);
  nnp_free(bias_c);
  nnp_free(res);
  nnp_free(want);
  nnp_free(got);
}

/* The AVX-512 pair tile (6 x 32, two column panels) must give each panel the bits the
 * 6 x 16 tile gives it alone: a model's output may not depend on how its columns were
 * paired. Every K parity, accumulation into C, ragged second panels (2..16 columns),
 * short row panels, every epilogue. */
static void pair_tile_cases(void) {
  if (nnp_dispatch_isa(NNP_KF_GEMM) != NNP_ISA_AVX512) {
    printf("pair tile: skipped, the GEMM runs %s here (the pair is AVX-512's)\n",
           nnp_isa_name(nnp_dispatch_isa(NNP_KF_GEMM)));
    return;
  }
  enum { KMAX = 70, R = NNP_SGEMM_MR, W = 2 * NNP_SGEMM_NR };
  /* bias and residual are indexed by the tile's global row and column (i0 = 3, j0 = 5) */
  static float a[KMAX * R], b0[KMAX * NNP_SGEMM_NR], b1[KMAX * 24], bias[W + 8], res[(R + 3) * W + 8];
  static float c1[R * W], c2[R * W];
  int checks = 0;
  for (int trial = 0; trial < 200; trial++) {
    const int64_t K = kt_int(1, KMAX), ldb1 = trial % 2 ? NNP_SGEMM_NR : 24; /* packed, or in place */
    const int nr = kt_int(NNP_SGEMM_NR + 2, W), mr = kt_int(1, R);
    const bool accum = trial % 3 == 0;
    kt_fill(a, KMAX * R), kt_fill(b0, KMAX * NNP_SGEMM_NR), kt_fill(b1, KMAX * 24);
    kt_fill(bias, W + 8), kt_fill(res, (R + 3) * W + 8), kt_fill(c1, R * W);
    memcpy(c2, c1, sizeof c1);
    nnp_epilogue ep = {.act = trial % 6, .act_min = -0.3f, .act_max = 0.7f, .bias_kind = trial % 3, .bias = bias};
    if (trial % 4 == 1) ep.residual = res, ep.ld_res = W;
    nnp_sgemm_tile2_avx512(K, a, b0, NNP_SGEMM_NR, b1, ldb1, c1, W, mr, nr, accum, &ep, 3, 5);
    nnp_sgemm_tile_avx512(K, a, b0, NNP_SGEMM_NR, c2, W, mr, NNP_SGEMM_NR, accum, &ep, 3, 5);
    nnp_sgemm_tile_avx512(K, a, b1, ldb1, c2 + NNP_SGEMM_NR, W, mr, nr - NNP_SGEMM_NR, accum, &ep, 3,
                          5 + NNP_SGEMM_NR);
    CHECK_MSG(!memcmp(c1, c2, sizeof c1), "pair tile trial %d: K=%lld mr=%d nr=%d accum=%d act=%d bias=%d differs",
              trial, (long long)K, mr, nr, accum, ep.act, ep.bias_kind);
    checks++;
  }
  printf("pair tile: %d cases against the 6 x 16 tile, bit for bit\n", checks);
}

int main(void) {
  printf("kernel ISA: %s\n", nnp_cpu_kernel_isa());
  pair_tile_cases();
  nnp_threadpool *pools[4] = {NULL};
  for (int t = 1; t < 4; t++) CHECK_OK(nnp_threadpool_create(t + 1, &pools[t]));
  for (int trial = 0; trial < 120; trial++) one_case(trial, pools);
  /* the residual may be the output itself (an in-place Add fused into the GEMM); with
   * K = 21, 600 and 1000 (large K is cut into blocks whose partial sums wait in C: not
   * when C is the residual; past 256 on the AVX2 tile, past 768 on the AVX-512 one) */
  static const int64_t ks[] = {21, 600, 1000};
  for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
    const int64_t K = ks[ki];
    int64_t M = 13, N = 37;
    float *A = nnp_malloc((size_t)(M * K) * 4), *B = nnp_malloc((size_t)(K * N) * 4), Y[13 * 37], want[13 * 37];
    kt_fill(A, M * K);
    kt_fill(B, K * N);
    kt_fill(Y, M * N);
    memset(want, 0, sizeof want);
    nnp_gemm_ref_f32(M, N, K, A, K, 1, B, N, want, N);
    for (int i = 0; i < M * N; i++) want[i] = want[i] + Y[i] > 0 ? want[i] + Y[i] : 0;
    float *ap = nnp_aligned_alloc(nnp_sgemm_packed_a_floats(M, K) * sizeof(float));
    float *bp = nnp_aligned_alloc(nnp_sgemm_packed_b_floats(K, N) * sizeof(float));
    nnp_sgemm_pack_a(M, K, A, K, 1, ap);
    nnp_sgemm_pack_b(K, N, B, N, 1, bp);
    nnp_epilogue ep = {.act = NNP_ACT_RELU, .residual = Y, .ld_res = N};
    nnp_sgemm_packed(M, N, K, ap, bp, Y, N, &ep, pools[1]);
    CHECK_MSG(kt_max_err(Y, want, M * N) < 1e-4, "in-place residual, K=%lld", (long long)K);
    nnp_aligned_free(ap);
    nnp_aligned_free(bp);
    nnp_free(A);
    nnp_free(B);
  }
  for (int t = 1; t < 4; t++) nnp_threadpool_destroy(pools[t]);
  printf("%d products with one or two columns of B read in place\n", narrow_cases);
  if (nnp_sgemm_narrow_in_place(1, false)) CHECK(narrow_cases >= 12); /* the AVX2 tile: trials 5, 15, ... */
  TEST_MAIN_END();
}
