/* CPU features that select optimised kernels.
 *
 * Detected once with cpuid and xgetbv (the OS must save the YMM/ZMM state, not only the
 * CPU support the instructions). NNP_CPU_FEATURES=generic in the environment forces the
 * portable C kernels, e.g. to measure what the vector kernels bring or to rule them out
 * when hunting a numerical difference; NNP_CPU_FEATURES=avx2 turns the AVX-512 kernels
 * off (the tests run the AVX2 kernels that way on AVX-512 machines). */
#ifndef NNP_KERNELS_CPU_H
#define NNP_KERNELS_CPU_H

#include <stdbool.h>

typedef struct nnp_cpu_features {
  bool avx2, fma, avx512f;
  bool avx512vl, avx512bw, avx512vnni; /* the INT8 GEMM's VNNI tile (kernels/qgemm.h) */
  bool forced_generic; /* NNP_CPU_FEATURES=generic */
  bool forced_avx2;    /* NNP_CPU_FEATURES=avx2: avx512f reads false */
} nnp_cpu_features;

/* Detected features (cached after the first call), the override applied. */
const nnp_cpu_features *nnp_cpu_get(void);
/* AVX2 + FMA kernels usable. */
bool nnp_cpu_has_avx2_fma(void);
/* AVX-512F + VL kernels usable (and AVX2 + FMA, which they fall back on). */
bool nnp_cpu_has_avx512f(void);
/* AVX-512 VNNI with VL (256-bit vpdpwssd) on top of AVX2 + FMA. */
bool nnp_cpu_has_avx512_vnni(void);
/* "avx2+fma", "avx512f+avx2+fma" or "generic": what the kernels run on. */
const char *nnp_cpu_kernel_isa(void);

/* Dispatch decisions that are not one ISA bit, filled once with the features (as
 * XNNPACK's configs are) and queried by the passes and kernels, so no pass tests CPU
 * features and no kernel reads the environment itself. */
typedef struct nnp_cpu_dispatch {
  bool blocked_layout; /* the NCHW16c pass pays: the AVX-512 blocked tile runs (AVX-512F) */
  bool winograd;       /* 3x3 stride-1 convs may take Winograd F(4,3): AVX-512F and
                        * NNP_NOWINO unset (NNP_NOWINO=1 keeps them on the direct tiles) */
} nnp_cpu_dispatch;
const nnp_cpu_dispatch *nnp_cpu_dispatch_get(void);

#endif
