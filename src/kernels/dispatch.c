/* The CPU-dispatch table's rule and names (kernels/dispatch.h); kernels/cpu.c fills the
 * process's table once, with the features. */
#include "kernels/dispatch.h"

#include <stdio.h>

void nnp_cpu_dispatch_fill(const nnp_cpu_features *f, bool no_winograd, nnp_cpu_dispatch *out) {
  /* every vector kernel falls back on AVX2 + FMA code for its edges, so each wider ISA
   * counts only on top of it */
  const bool avx2 = f->avx2 && f->fma, avx512 = avx2 && f->avx512f;
  const bool vnni = avx2 && f->avx512vl && f->avx512vnni;
  const nnp_isa dense = avx512 ? NNP_ISA_AVX512 : avx2 ? NNP_ISA_AVX2 : NNP_ISA_GENERIC;
  nnp_isa *t = out->isa;
  t[NNP_KF_GEMM] = t[NNP_KF_DIRECT_CONV] = t[NNP_KF_DEPTHWISE] = dense;
  /* the blocked tiles: AVX-512's, or on AVX2 one 6-pixel tile shape (blocked_conv_avx2.c);
   * the portable C stays correct but never pays, which is why the layout pass follows this
   * entry */
  t[NNP_KF_BLOCKED_CONV] = t[NNP_KF_BLOCKED_POOL] = dense;
  /* AVX-512: the blocked kernel (kernels/winograd.h); AVX2 only: the NCHW one
   * (kernels/winograd_nchw.h), since there is no blocked layout there */
  t[NNP_KF_WINOGRAD] = no_winograd ? NNP_ISA_OFF : dense == NNP_ISA_GENERIC ? NNP_ISA_OFF : dense;
  t[NNP_KF_ELTWISE] = NNP_ISA_GENERIC;
  t[NNP_KF_POOL] = avx2 ? NNP_ISA_AVX2 : NNP_ISA_GENERIC; /* float MaxPool and AveragePool rows (pool_avx2.c) */
  /* AVX-512: GELU's own loop in 16 lanes (ewprog_avx512.c), the other programs on AVX2;
   * neither: the reference interprets */
  t[NNP_KF_FUSED_ELTWISE] = avx512 ? NNP_ISA_AVX512 : avx2 ? NNP_ISA_AVX2 : NNP_ISA_OFF;
  t[NNP_KF_QGEMM] = vnni ? NNP_ISA_AVX512_VNNI : avx2 ? NNP_ISA_AVX2 : NNP_ISA_GENERIC;
  t[NNP_KF_QGEMV] = t[NNP_KF_QELTWISE] = avx2 ? NNP_ISA_AVX2 : NNP_ISA_GENERIC;
  /* the depthwise VNNI kernel widens with AVX-512BW instructions; the GEMM tile does not */
  t[NNP_KF_QDWCONV] = vnni && f->avx512bw ? NNP_ISA_AVX512_VNNI : avx2 ? NNP_ISA_AVX2 : NNP_ISA_GENERIC;
  t[NNP_KF_QIM2COL] = f->avx512bw ? NNP_ISA_AVX512 : avx2 ? NNP_ISA_AVX2 : NNP_ISA_GENERIC;
  out->amx_bf16 = f->amx_bf16;
}

nnp_isa nnp_dispatch_isa(nnp_kernel_family f) {
  return f >= 0 && f < NNP_KF_COUNT ? nnp_cpu_dispatch_get()->isa[f] : NNP_ISA_OFF;
}

bool nnp_dispatch_portable(nnp_kernel_family f, bool generic) {
  nnp_isa isa = nnp_dispatch_isa(f);
  return generic || isa == NNP_ISA_GENERIC || isa == NNP_ISA_OFF;
}

nnp_isa nnp_dispatch_pick(nnp_kernel_family f, bool generic) {
  return nnp_dispatch_portable(f, generic) ? NNP_ISA_GENERIC : nnp_dispatch_isa(f);
}

const char *nnp_kernel_family_name(nnp_kernel_family f) {
  static const char *names[NNP_KF_COUNT] = {
      [NNP_KF_GEMM] = "gemm",         [NNP_KF_DIRECT_CONV] = "direct_conv",     [NNP_KF_DEPTHWISE] = "depthwise",
      [NNP_KF_BLOCKED_CONV] = "blocked_conv", [NNP_KF_BLOCKED_POOL] = "blocked_pool", [NNP_KF_WINOGRAD] = "winograd",
      [NNP_KF_ELTWISE] = "eltwise",   [NNP_KF_FUSED_ELTWISE] = "fused_eltwise", [NNP_KF_POOL] = "pool",
      [NNP_KF_QGEMM] = "qgemm",       [NNP_KF_QGEMV] = "qgemv",                 [NNP_KF_QDWCONV] = "qdwconv",
      [NNP_KF_QIM2COL] = "qim2col",   [NNP_KF_QELTWISE] = "qeltwise"};
  return f >= 0 && f < NNP_KF_COUNT ? names[f] : "?";
}

const char *nnp_isa_name(nnp_isa isa) {
  switch (isa) {
    case NNP_ISA_GENERIC: return "generic";
    case NNP_ISA_AVX2: return "avx2";
    case NNP_ISA_AVX512: return "avx512";
    case NNP_ISA_AVX512_VNNI: return "avx512vnni";
    default: return "off";
  }
}

void nnp_cpu_dispatch_describe(const nnp_cpu_dispatch *t, char *buf, size_t n) {
  size_t at = 0;
  if (n) buf[0] = 0;
  for (int k = 0; k < NNP_KF_COUNT && at < n; k++) {
    int w = snprintf(buf + at, n - at, "%s%s %s", k ? ", " : "", nnp_kernel_family_name(k), nnp_isa_name(t->isa[k]));
    if (w < 0) break;
    at += (size_t)w;
  }
}
