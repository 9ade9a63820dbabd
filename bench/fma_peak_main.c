/* bench_fma_peak: this CPU's measured FP32 FMA peak (bench/fma_peak.h) on 1..N threads,
 * AVX2 and AVX-512, as `threads T avx2 GFLOPS avx512 GFLOPS` lines (bench/engine_vs_ort.sh
 * reads them to state a model's achieved GFLOP/s against the peak). Best of several
 * rounds: on a shared machine the highest is the least disturbed. Usage: bench_fma_peak [threads] */
#include <stdio.h>
#include <stdlib.h>

#include "fma_peak.h"
#include "kernels/cpu.h"

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 2;
  if (threads < 1) threads = 1;
  printf("# kernel ISA: %s\n", nnp_cpu_kernel_isa());
  for (int t = 1; t <= threads; t++) {
    nnp_threadpool *tp = NULL;
    if (t > 1 && nnp_threadpool_create(t, &tp) != NNP_OK) return 1;
    double p256 = 0, p512 = 0;
    for (int round = 0; round < 3; round++) {
      double a = nnp_bench_fma_peak(tp, t, false), b = nnp_bench_fma_peak(tp, t, true);
      if (a > p256) p256 = a;
      if (b > p512) p512 = b;
    }
    printf("threads %d avx2 %.1f avx512 %.1f\n", t, p256, p512);
    nnp_threadpool_destroy(tp);
  }
  return 0;
}
