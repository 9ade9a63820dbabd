#include "kernels/cpu.h"

#include "kernels/dispatch.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
static unsigned long long xgetbv0(void) {
  unsigned eax, edx;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return ((unsigned long long)edx << 32) | eax;
}
#endif

static nnp_amx_state amx_state;
static char amx_why[160];

/* AMX-TILE/INT8/BF16 (CPUID 7.0 EDX bits 24/25/22), the OS's tile bits (XCR0 17-18), then
 * the kernel's permission, asked once (kernels/cpu_amx.c). */
static void detect_amx(nnp_cpu_features *f, unsigned edx7, unsigned long long xcr0) {
  amx_state = nnp_cpu_amx_decide((edx7 >> 24) & 1, (xcr0 & 0x60000) == 0x60000, f->forced_no_amx,
                                 nnp_cpu_amx_request_permission, amx_why, sizeof amx_why);
  f->amx_tile = amx_state == NNP_AMX_PERMITTED;
  f->amx_int8 = f->amx_tile && ((edx7 >> 25) & 1);
  f->amx_bf16 = f->amx_tile && ((edx7 >> 22) & 1);
}

bool nnp_cpu_cpuid_amx_tile(void) {
#if defined(__x86_64__) || defined(__i386__)
  unsigned a, b, c, d;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
  return (d >> 24) & 1u;
#else
  return false;
#endif
}

void nnp_cpu_features_override(nnp_cpu_features *f, const char *env) {
  f->forced_generic = env && strcmp(env, "generic") == 0;
  f->forced_avx2 = env && strcmp(env, "avx2") == 0;
  f->forced_no_amx = f->forced_generic || f->forced_avx2 || (env && strcmp(env, "avx512") == 0);
  if (f->forced_generic) f->avx2 = f->fma = false;
  if (f->forced_generic || f->forced_avx2)
    f->avx512f = f->avx512bw = f->avx512vl = f->avx512vnni = f->avx512bf16 = false;
  if (f->forced_no_amx) f->amx_tile = f->amx_int8 = f->amx_bf16 = false;
}

/* env: NNP_CPU_FEATURES's value. The override is applied before AMX is decided, so a
 * hidden AMX is never requested from the kernel. */
static void detect(nnp_cpu_features *f, const char *env) {
  memset(f, 0, sizeof *f);
  nnp_cpu_features_override(f, env);
  /* the answer until CPUID says more (early returns: no AVX, not x86-64) */
  amx_state = nnp_cpu_amx_decide(false, false, f->forced_generic, NULL, amx_why, sizeof amx_why);
  if (f->forced_generic) return;
#if defined(__x86_64__) || defined(__i386__)
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return;
  bool osxsave = (c >> 27) & 1, avx = (c >> 28) & 1, fma = (c >> 12) & 1;
  if (!osxsave || !avx) return;
  unsigned long long xcr0 = xgetbv0();
  bool ymm = (xcr0 & 0x6) == 0x6, zmm = (xcr0 & 0xe6) == 0xe6;
  if (!ymm || __get_cpuid_max(0, NULL) < 7) return;
  __cpuid_count(7, 0, a, b, c, d);
  f->avx2 = (b >> 5) & 1;
  f->fma = fma;
  /* the AVX-512 float kernels use F and VL (masked 256-bit loads); the INT8 VNNI tile VL
   * and VNNI (vpdpwssd/vpdpbusd on YMM) */
  f->avx512vl = zmm && ((b >> 16) & 1) && ((b >> 31) & 1);
  f->avx512f = f->avx512vl;
  f->avx512bw = f->avx512f && ((b >> 30) & 1);
  f->avx512vnni = f->avx512f && ((c >> 11) & 1);
  unsigned edx7 = d;
  __cpuid_count(7, 1, a, b, c, d);
  f->avx512bf16 = f->avx512f && ((a >> 5) & 1);
  nnp_cpu_features_override(f, env);
  detect_amx(f, edx7, xcr0);
#endif
}

static nnp_cpu_features detected;
static nnp_cpu_dispatch table;

/* The only place the overrides are read: features, then the dispatch table from them. */
static void detect_once(void) {
  detect(&detected, getenv("NNP_CPU_FEATURES"));
  nnp_cpu_dispatch_fill(&detected, getenv("NNP_NOWINO") != NULL, &table);
}
static pthread_once_t once = PTHREAD_ONCE_INIT;

const nnp_cpu_features *nnp_cpu_get(void) {
  /* once per process: detection may ask the kernel for AMX, which is to happen once */
  pthread_once(&once, detect_once);
  return &detected;
}

const nnp_cpu_dispatch *nnp_cpu_dispatch_get(void) {
  pthread_once(&once, detect_once);
  return &table;
}

bool nnp_cpu_has_avx2_fma(void) {
  const nnp_cpu_features *f = nnp_cpu_get();
  return f->avx2 && f->fma;
}

bool nnp_cpu_has_avx512f(void) {
  const nnp_cpu_features *f = nnp_cpu_get();
  return f->avx512f && f->avx2 && f->fma;
}

bool nnp_cpu_has_avx512_vnni(void) {
  const nnp_cpu_features *f = nnp_cpu_get();
  return f->avx2 && f->fma && f->avx512vl && f->avx512vnni;
}

nnp_amx_state nnp_cpu_amx_status(const char **why) {
  nnp_cpu_get();
  if (why) *why = amx_why;
  return amx_state;
}

const char *nnp_cpu_kernel_isa(void) {
  nnp_isa isa = nnp_dispatch_isa(NNP_KF_GEMM);
  return isa == NNP_ISA_AVX512 ? "avx512f+avx2+fma" : isa == NNP_ISA_AVX2 ? "avx2+fma" : "generic";
}
