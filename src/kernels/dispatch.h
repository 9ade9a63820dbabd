/* The CPU-dispatch table: which ISA variant each kernel family runs in this process.
 *
 * Filled once (as XNNPACK's configs are), in the same pthread_once as the feature
 * detection (kernels/cpu.c), from the detected features with the overrides applied:
 * NNP_CPU_FEATURES=generic|avx2|avx512 hides features (nnp_cpu_features_override) and
 * NNP_NOWINO=1 turns Winograd off. Both variables are read there, once, and nowhere else.
 * Kernels, ops and graph passes ask this table which variant to run; none of them tests a
 * CPU feature itself, so what `inspect --profile` and a row's note say ran is what the
 * table says (docs/kernels.md, "How a step gets its kernel").
 *
 * A caller that wants the portable kernels anyway (fast_kernels on but generic, the tests'
 * reference) passes its own `generic` flag to nnp_dispatch_portable. */
#ifndef NNP_KERNELS_DISPATCH_H
#define NNP_KERNELS_DISPATCH_H

#include <stdbool.h>
#include <stddef.h>

#include "kernels/cpu.h"

typedef enum nnp_isa {
  NNP_ISA_OFF = 0,     /* the family does not run here: the step keeps another kernel */
  NNP_ISA_GENERIC,     /* portable C */
  NNP_ISA_AVX2,        /* AVX2 + FMA */
  NNP_ISA_AVX512,      /* AVX-512F + VL on top of AVX2 + FMA (BW for the INT8 im2col runs) */
  NNP_ISA_AVX512_VNNI, /* AVX-512 VNNI + VL on top of AVX2 + FMA */
} nnp_isa;

typedef enum nnp_kernel_family {
  NNP_KF_GEMM,          /* fp32 GEMM tile and batch-1 GEMV: Gemm, MatMul, im2col and 1x1 convs */
  NNP_KF_DIRECT_CONV,   /* fp32 direct conv tiles (kernels/dconv*) */
  NNP_KF_DEPTHWISE,     /* fp32 depthwise conv (kernels/dwconv*) */
  NNP_KF_BLOCKED_CONV,  /* NCHW16c conv (kernels/blocked_conv*); AVX512 here also turns
                         * the blocked-layout pass on (the only place its tile pays) */
  NNP_KF_BLOCKED_POOL,  /* NCHW16c max pool (kernels/blocked_pool*) */
  NNP_KF_WINOGRAD,      /* Winograd F(2x2, 3x3), 3x3 stride 1: AVX512 (blocked), AVX2 (NCHW) or OFF */
  NNP_KF_ELTWISE,       /* Relu/Clip/Sigmoid/HardSwish, same-shape Add/Mul: portable C only */
  NNP_KF_FUSED_ELTWISE, /* FusedElementwise programs (kernels/ewprog*): AVX512 (GELU), AVX2 or OFF */
  NNP_KF_POOL,          /* NCHW pools (kernels/pool.c): float MaxPool and AveragePool rows on AVX2, the rest portable C */
  NNP_KF_QGEMM,         /* INT8 GEMM tile (kernels/qgemm*) */
  NNP_KF_QGEMV,         /* INT8 batch-1 GEMV (kernels/qgemv*) */
  NNP_KF_QDWCONV,       /* INT8 depthwise conv (kernels/qdwconv*); VNNI also needs BW */
  NNP_KF_QIM2COL,       /* INT8 im2col: AVX512 (BW) runs of contiguous taps, else the AVX2 gather */
  NNP_KF_QELTWISE,      /* Quantize/DequantizeLinear, QLinearAdd (kernels/qeltwise*) */
  NNP_KF_COUNT
} nnp_kernel_family;

typedef struct nnp_cpu_dispatch {
  nnp_isa isa[NNP_KF_COUNT];
  bool amx_bf16; /* AMX-BF16 usable: reported in a bf16 row's note, no kernel uses it yet */
} nnp_cpu_dispatch;

/* The table of this process (filled once, never changes). */
const nnp_cpu_dispatch *nnp_cpu_dispatch_get(void);
/* nnp_cpu_dispatch_get()->isa[f]. */
nnp_isa nnp_dispatch_isa(nnp_kernel_family f);
/* Whether family f must take its portable path: the caller asks for it (generic) or the
 * table has nothing faster (GENERIC or OFF). */
bool nnp_dispatch_portable(nnp_kernel_family f, bool generic);
/* The variant family f runs for such a caller: GENERIC where nnp_dispatch_portable, else
 * the table's (the blocked kernels pick among generic, AVX2 and AVX-512 rows by it). */
nnp_isa nnp_dispatch_pick(nnp_kernel_family f, bool generic);

/* The rule itself, pure: the table for features f (overrides already applied) and the
 * Winograd switch. The test feeds it made-up CPUs. */
void nnp_cpu_dispatch_fill(const nnp_cpu_features *f, bool no_winograd, nnp_cpu_dispatch *out);

/* "gemm avx2, direct_conv avx2, ...": the whole table in one line, for inspect --profile. */
void nnp_cpu_dispatch_describe(const nnp_cpu_dispatch *t, char *buf, size_t n);
/* "gemm", "direct_conv", ... and "off", "generic", "avx2", "avx512", "avx512vnni". */
const char *nnp_kernel_family_name(nnp_kernel_family f);
const char *nnp_isa_name(nnp_isa isa);

#endif
