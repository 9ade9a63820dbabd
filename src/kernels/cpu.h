/* CPU features that select optimised kernels.
 *
 * Detected once with cpuid and xgetbv (the OS must save the YMM/ZMM state, not only the
 * CPU support the instructions). NNP_CPU_FEATURES=generic in the environment forces the
 * portable C kernels, e.g. to measure what the vector kernels bring or to rule them out
 * when hunting a numerical difference; NNP_CPU_FEATURES=avx2 turns the AVX-512 kernels
 * off (the tests run the AVX2 kernels that way on AVX-512 machines); NNP_CPU_FEATURES=avx512
 * keeps AVX-512 but hides AMX (and never asks the kernel for the tile state).
 *
 * AMX (kernels/cpu_amx.c): Linux hands a process the 8 KB tile state only after
 * arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA); a tile instruction without it is
 * SIGILL. nnperf asks once, at detection, and only when CPUID reports AMX and XCR0 has the
 * tile bits; a refusal (a VM or seccomp policy, an old kernel) leaves amx_* false, so the
 * VNNI / AVX2 / generic kernels run, and nnp_cpu_amx_status says why. */
#ifndef NNP_KERNELS_CPU_H
#define NNP_KERNELS_CPU_H

#include <stdbool.h>
#include <stddef.h>

typedef struct nnp_cpu_features {
  bool avx2, fma, avx512f;
  bool avx512vl, avx512bw, avx512vnni; /* the INT8 GEMM's VNNI tile (kernels/qgemm.h) */
  bool avx512bf16;      /* vdpbf16ps (CPUID 7.1 EAX[5]): reported, no kernel uses it yet */
  bool amx_tile, amx_int8, amx_bf16; /* usable: CPUID, XCR0 tile bits and the kernel's permission */
  bool forced_generic; /* NNP_CPU_FEATURES=generic */
  bool forced_avx2;    /* NNP_CPU_FEATURES=avx2: avx512f reads false */
  bool forced_no_amx;  /* NNP_CPU_FEATURES=avx2 or avx512: AMX reads false, never requested */
} nnp_cpu_features;

/* Where AMX stands in this process, decided once at detection. */
typedef enum nnp_amx_state {
  NNP_AMX_ABSENT = 0, /* CPUID has no AMX-TILE (or not x86-64) */
  NNP_AMX_HIDDEN,     /* NNP_CPU_FEATURES hides it (generic, avx2, avx512) */
  NNP_AMX_NO_OS,      /* CPUID has it, XCR0 lacks XTILECFG/XTILEDATA: the OS does not manage it */
  NNP_AMX_REFUSED,    /* arch_prctl(ARCH_REQ_XCOMP_PERM) failed */
  NNP_AMX_PERMITTED   /* tiles usable by every thread of the process */
} nnp_amx_state;

/* The state and a one-line reason ("absent: CPUID has no AMX-TILE", "refused: ..."). */
nnp_amx_state nnp_cpu_amx_status(const char **why);
/* One arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) call: PERMITTED or REFUSED (with
 * the errno text in why). Detection calls it once; exposed for the refusal-path test. */
nnp_amx_state nnp_cpu_amx_request_permission(char *why, size_t n);
/* The decision itself, pure: CPUID's AMX-TILE bit, XCR0's tile bits, the override, and
 * request (called at most once, only when the first three allow AMX). */
nnp_amx_state nnp_cpu_amx_decide(bool cpuid_tile, bool xcr0_tile, bool hidden,
                                 nnp_amx_state (*request)(char *why, size_t n), char *why, size_t n);
/* The int8 kernel family the fast INT8 ops pick here (the dispatch table's INT8 depthwise
 * entry): "vnni" (AVX-512 VNNI), "avx2" or "generic". Never "amx" yet: no AMX kernel exists (docs/quantization.md says why). */
const char *nnp_cpu_int8_isa(void);

/* CPUID's AMX-TILE bit as the CPU reports it, whatever NNP_CPU_FEATURES hides and whether
 * the OS grants the tiles: for programs nnperf starts that read CPUID themselves (llama.cpp's
 * AMX repack path, llm/llm_repack.h), never for nnperf's own kernels. */
bool nnp_cpu_cpuid_amx_tile(void);

/* Detected features (cached after the first call), the override applied. Kernels, ops and
 * passes do not ask these: they ask the dispatch table (kernels/dispatch.h), filled from
 * them once; the feature queries below are for reports, tests and benches. */
const nnp_cpu_features *nnp_cpu_get(void);
/* Applies NNP_CPU_FEATURES's value env (NULL: unset; an unknown value changes nothing):
 * sets the forced_* flags and clears the features they hide. Pure: detection applies it
 * to the CPU's bits, the dispatch test to made-up CPUs. */
void nnp_cpu_features_override(nnp_cpu_features *f, const char *env);
/* AVX2 + FMA kernels usable. */
bool nnp_cpu_has_avx2_fma(void);
/* AVX-512F + VL kernels usable (and AVX2 + FMA, which they fall back on). */
bool nnp_cpu_has_avx512f(void);
/* AVX-512 VNNI with VL (256-bit vpdpwssd) on top of AVX2 + FMA. */
bool nnp_cpu_has_avx512_vnni(void);
/* "avx2+fma", "avx512f+avx2+fma" or "generic": what the dense fp32 kernels run on (the
 * dispatch table's GEMM entry). */
const char *nnp_cpu_kernel_isa(void);

#endif
