/* bench_qgemm_gops: the INT8 GEMM (kernels/qgemm.h, vpmaddwd int16 path, requantize
 * epilogue; and, where the CPU has AVX-512 VNNI, the vpdpwssd tile and the u8 x s8
 * vpdpbusd layout) against the packed FP32 SGEMM (kernels/gemm.h) on the same shapes, taken
 * from resnet18's convolutions (M = output channels, K = C*kh*kw, N = output pixels),
 * 1 thread, best of 7 each, side by side; also the B-packing cost of each. Prints the
 * ratios; asserts nothing (a shared machine is noisy). */
#include <stdbool.h>
#include <stdio.h>

#include "bench/timing_loop.h"
#include "kernels/cpu.h"
#include "kernels/gemm.h"
#include "kernels/qgemm.h"
#include "nnperf/alloc.h"

int main(void) {
  static const int64_t shapes[][3] = {{64, 576, 3136}, {128, 1152, 784}, {256, 2304, 196}, {512, 4608, 49}};
  bool vnni = nnp_cpu_has_avx512_vnni(); /* the runtime-selected extra tile, where present */
  printf("%-18s %10s %10s %7s %12s %12s%s\n", "M x K x N", "fp32 ms", "int8 ms", "ratio", "fp32 pack ms",
         "int8 pack ms", vnni ? "    vnni ms  ratio  u8vnni ms  ratio" : "");
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
    int64_t M = shapes[s][0], K = shapes[s][1], N = shapes[s][2];
    float *A = nnp_malloc((size_t)(M * K) * 4), *B = nnp_malloc((size_t)(K * N) * 4), *C = nnp_malloc((size_t)(M * N) * 4);
    int8_t *qa = nnp_malloc((size_t)(M * K));
    uint8_t *qb = nnp_malloc((size_t)(K * N)), *qc = nnp_malloc((size_t)(M * N));
    for (int64_t i = 0; i < M * K; i++) A[i] = (float)(i % 13) * 0.01f, qa[i] = (int8_t)(i % 251 - 125);
    for (int64_t i = 0; i < K * N; i++) B[i] = (float)(i % 7) * 0.01f, qb[i] = (uint8_t)(i % 253);
    float *ap = nnp_aligned_alloc(nnp_sgemm_packed_a_floats(M, K) * 4), *bp = nnp_aligned_alloc(nnp_sgemm_packed_b_floats(K, N) * 4);
    int16_t *qap = nnp_aligned_alloc(nnp_qgemm_packed_a_elems(M, K) * 2), *qbp = nnp_aligned_alloc(nnp_qgemm_packed_b_elems(K, N) * 2);
    float *mult = nnp_malloc((size_t)M * 4);
    for (int64_t i = 0; i < M; i++) mult[i] = 1e-5f;
    nnp_qepilogue ep = {.mult = mult, .zp = 3, .qmin = 0, .qmax = 255};
    nnp_sgemm_pack_a(M, K, A, K, 1, ap);
    nnp_qgemm_pack_a(M, K, qa, K, NULL, qap);
    int8_t *a4 = nnp_aligned_alloc(nnp_qgemm4_packed_a_bytes(M, K));
    uint8_t *b4 = nnp_aligned_alloc(nnp_qgemm4_packed_b_bytes(K, N));
    nnp_qgemm4_pack_a(M, K, qa, K, a4);
    nnp_qgemm4_pack_b(K, N, qb, N, 1, 7, b4);
    double t[6] = {1e30, 1e30, 1e30, 1e30, 1e30, 1e30};
    for (int rep = 0; rep < 7; rep++) {
      double t0 = nnp_now();
      nnp_sgemm_pack_b(K, N, B, N, 1, bp);
      double t1 = nnp_now();
      nnp_sgemm_packed(M, N, K, ap, bp, C, N, NULL, NULL);
      double t2 = nnp_now();
      nnp_qgemm_pack_b(K, N, qb, N, 1, 7, qbp);
      double t3 = nnp_now();
      nnp_qgemm_packed_isa(M, N, K, qap, qbp, qc, N, &ep, NULL, NNP_QGEMM_AVX2);
      double t4 = nnp_now();
      if (vnni) nnp_qgemm_packed_isa(M, N, K, qap, qbp, qc, N, &ep, NULL, NNP_QGEMM_VNNI);
      double t5 = nnp_now();
      if (vnni) nnp_qgemm4_packed(M, N, K, a4, b4, qc, N, &ep, NULL, true);
      double t6 = nnp_now();
      double d[6] = {t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, t6 - t5};
      for (int k = 0; k < 6; k++)
        if (d[k] < t[k]) t[k] = d[k];
    }
    char name[32];
    snprintf(name, sizeof name, "%lldx%lldx%lld", (long long)M, (long long)K, (long long)N);
    printf("%-18s %10.3f %10.3f %6.2fx %12.3f %12.3f", name, t[1] * 1e3, t[3] * 1e3, t[1] / t[3], t[0] * 1e3,
           t[2] * 1e3);
    if (vnni) printf(" %10.3f %6.2fx %10.3f %6.2fx", t[4] * 1e3, t[1] / t[4], t[5] * 1e3, t[1] / t[5]);
    printf("\n");
    nnp_free(A); nnp_free(B); nnp_free(C); nnp_free(qa); nnp_free(qb); nnp_free(qc); nnp_free(mult);
    nnp_aligned_free(a4); nnp_aligned_free(b4);
    nnp_aligned_free(ap); nnp_aligned_free(bp); nnp_aligned_free(qap); nnp_aligned_free(qbp);
  }
  return 0;
}
