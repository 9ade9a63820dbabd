/* This CPU's measured FP32 FMA peak, per ISA: the yardstick of bench_gemm_gflops and
 * bench_conv_layers. Each thread runs 12 independent FMA chains (more than latency x
 * ports on any current core, each started from a different value so the compiler
 * cannot merge them) for a short burst; the best of many bursts is the peak. Short
 * bursts on purpose: on a shared machine a long run is always interrupted, and a
 * measured "peak" below what a GEMM reaches says nothing. */
#ifndef NNP_BENCH_FMA_PEAK_H
#define NNP_BENCH_FMA_PEAK_H

#include <stdbool.h>

#include "util/threadpool.h"

/* GFLOP/s of `threads` threads on tp (NULL: 1) running FMA chains of 256-bit (AVX2 + FMA)
 * or 512-bit (AVX-512F) vectors; 0 when the CPU lacks the ISA. */
double nnp_bench_fma_peak(nnp_threadpool *tp, int threads, bool avx512);

#endif
