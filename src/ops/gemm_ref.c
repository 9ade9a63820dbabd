/* Blocked reference GEMM (see gemm_ref.h). */
#include "ops/gemm_ref.h"

/* ACC is the type products accumulate in: T itself for floats, the unsigned type of the
 * same width for integers (so overflow wraps). The ACC pointer cast is valid because ACC
 * and T have the same size and differ at most in signedness, which may alias in C.
 * restrict tells the compiler Y and B do not overlap, so it vectorises the inner loop
 * without a run-time overlap test. */
#define DEFINE_GEMM_REF(NAME, T, ACC)                                                     \
  void NAME(int64_t M, int64_t N, int64_t K, const T *A, int64_t sai, int64_t sak,        \
            const T *B, int64_t ldb, T *Y, int64_t ldy) {                                 \
    for (int64_t j0 = 0; j0 < N; j0 += NNP_GEMM_REF_NB) {                                 \
      const int64_t nb = N - j0 < NNP_GEMM_REF_NB ? N - j0 : NNP_GEMM_REF_NB;             \
      for (int64_t k0 = 0; k0 < K; k0 += NNP_GEMM_REF_KB) {                               \
        const int64_t k1 = K - k0 < NNP_GEMM_REF_KB ? K : k0 + NNP_GEMM_REF_KB;           \
        for (int64_t i = 0; i < M; i++) {                                                 \
          ACC *restrict y = (ACC *)(Y + i * ldy + j0);                                    \
          for (int64_t k = k0; k < k1; k++) {                                             \
            const ACC a = (ACC)A[i * sai + k * sak];                                      \
            const T *restrict b = B + k * ldb + j0;                                       \
            for (int64_t j = 0; j < nb; j++) y[j] += a * (ACC)b[j];                       \
          }                                                                               \
        }                                                                                 \
      }                                                                                   \
    }                                                                                     \
  }

DEFINE_GEMM_REF(nnp_gemm_ref_f32, float, float)
DEFINE_GEMM_REF(nnp_gemm_ref_f64, double, double)
static DEFINE_GEMM_REF(gemm_ref_i32, int32_t, uint32_t)
static DEFINE_GEMM_REF(gemm_ref_i64, int64_t, uint64_t)
static DEFINE_GEMM_REF(gemm_ref_u32, uint32_t, uint32_t)
static DEFINE_GEMM_REF(gemm_ref_u64, uint64_t, uint64_t)

void nnp_gemm_ref(nnp_dtype dt, int64_t M, int64_t N, int64_t K, const void *A, int64_t sai,
                  int64_t sak, const void *B, int64_t ldb, void *Y, int64_t ldy) {
  switch (dt) {
    case NNP_F32: nnp_gemm_ref_f32(M, N, K, A, sai, sak, B, ldb, Y, ldy); break;
    case NNP_F64: nnp_gemm_ref_f64(M, N, K, A, sai, sak, B, ldb, Y, ldy); break;
    case NNP_I32: gemm_ref_i32(M, N, K, A, sai, sak, B, ldb, Y, ldy); break;
    case NNP_I64: gemm_ref_i64(M, N, K, A, sai, sak, B, ldb, Y, ldy); break;
    case NNP_U32: gemm_ref_u32(M, N, K, A, sai, sak, B, ldb, Y, ldy); break;
    case NNP_U64: gemm_ref_u64(M, N, K, A, sai, sak, B, ldb, Y, ldy); break;
    default: break;
  }
}
