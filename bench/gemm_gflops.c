/* bench_gemm_gflops: this CPU's measured FP32 FMA peak against the packed SGEMM's
 * achieved GFLOP/s, on 1 and N threads, over shapes taken from real convolutions.
 * Peak: bench/fma_peak.h (AVX2 and, where present, AVX-512 FMA chains). Prints ratios;
 * asserts nothing (a shared machine is noisy). Usage: bench_gemm_gflops [threads [M N K]]
 * (M N K: that shape alone, in place of the list). */
#include <stdio.h>
#include <stdlib.h>

#include "bench/timing_loop.h"
#include "fma_peak.h"
#include "kernels/cpu.h"
#include "kernels/dispatch.h"
#include "kernels/gemm.h"
#include "nnperf/alloc.h"
#include "util/threadpool.h"

static double gemm_gflops(int64_t M, int64_t N, int64_t K, nnp_threadpool *tp) {
  float *A = nnp_malloc((size_t)(M * K) * 4), *B = nnp_malloc((size_t)(K * N) * 4), *C = nnp_malloc((size_t)(M * N) * 4);
  for (int64_t i = 0; i < M * K; i++) A[i] = (float)(i % 13) * 0.01f;
  for (int64_t i = 0; i < K * N; i++) B[i] = (float)(i % 7) * 0.01f;
  float *ap = nnp_aligned_alloc(nnp_sgemm_packed_a_floats(M, K) * 4), *bp = nnp_aligned_alloc(nnp_sgemm_packed_b_floats(K, N) * 4);
  nnp_sgemm_pack_a(M, K, A, K, 1, ap);
  nnp_sgemm_pack_b(K, N, B, N, 1, bp);
  double best = 1e30;
  for (int rep = 0; rep < 7; rep++) { /* best of 7: the least disturbed run */
    double t0 = nnp_now();
    nnp_sgemm_packed(M, N, K, ap, bp, C, N, NULL, tp);
    double dt = nnp_now() - t0;
    if (dt < best) best = dt;
  }
  nnp_free(A);
  nnp_free(B);
  nnp_free(C);
  nnp_aligned_free(ap);
  nnp_aligned_free(bp);
  return 2.0 * (double)M * (double)N * (double)K / best * 1e-9;
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 2;
  if (threads < 1) threads = 1;
  if (!nnp_cpu_has_avx2_fma()) {
    printf("bench_gemm_gflops: skipped: this CPU (or NNP_CPU_FEATURES) has no AVX2 + FMA\n");
    return 0;
  }
  printf("kernel ISA: %s\n", nnp_cpu_kernel_isa());
  static const struct { const char *what; int64_t M, N, K; } shapes[] = {
      {"square 512", 512, 512, 512},
      {"resnet18 conv3x3 64ch 56x56 (im2col)", 64, 3136, 576},
      {"resnet18 conv3x3 256ch 14x14", 256, 196, 2304},
      {"mobilenet_v2 1x1 96->24 56x56", 24, 3136, 96},
      {"fc 1280->1000, batch 1", 1, 1000, 1280},
      {"vit_b_16 qkv 197 tokens", 197, 2304, 768},
      {"vit_b_16 mlp 768->3072", 197, 3072, 768},
      {"vit_b_16 mlp 3072->768", 197, 768, 3072},
      {"squeezenet1_0 1x1 512->1000 13x13", 1000, 169, 512},
  };
  const bool one = argc == 5;
  const int64_t oM = one ? atoll(argv[2]) : 0, oN = one ? atoll(argv[3]) : 0, oK = one ? atoll(argv[4]) : 0;
  for (int t = 1; t <= threads; t += (threads > 1 ? threads - 1 : 1)) {
    nnp_threadpool *tp = NULL;
    if (t > 1 && nnp_threadpool_create(t, &tp) != NNP_OK) return 1;
    double peak = nnp_bench_fma_peak(tp, t, false), peak512 = nnp_bench_fma_peak(tp, t, true);
    printf("\nthreads %d: measured FMA peak %.1f GFLOP/s AVX2, %.1f GFLOP/s AVX-512 (0: absent)\n", t, peak,
           peak512);
    /* "of peak": of the peak of the ISA whose tile runs (an AVX-512 tile against the
     * AVX2 peak read 131% on a Zen 5) */
    const bool zmm = nnp_dispatch_isa(NNP_KF_GEMM) == NNP_ISA_AVX512;
    const double tile_peak = zmm ? peak512 : peak;
    printf("  %-40s %8s %8s %8s\n", "shape (M x N x K)", "GFLOP/s", zmm ? "of 512" : "of 256", "");
    for (size_t i = 0; i < (one ? 1 : sizeof shapes / sizeof shapes[0]); i++) {
      const int64_t M = one ? oM : shapes[i].M, N = one ? oN : shapes[i].N, K = one ? oK : shapes[i].K;
      double g = gemm_gflops(M, N, K, tp);
      printf("  %-40s %8.1f %7.0f%%   (%lldx%lldx%lld)\n", one ? "asked" : shapes[i].what, g, 100.0 * g / tile_peak,
             (long long)M, (long long)N, (long long)K);
    }
    nnp_threadpool_destroy(tp);
  }
  return 0;
}
