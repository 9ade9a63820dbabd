#include "kernels/cpu.h"

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

static void detect(nnp_cpu_features *f) {
  memset(f, 0, sizeof *f);
  const char *env = getenv("NNP_CPU_FEATURES");
  if (env && strcmp(env, "generic") == 0) {
    f->forced_generic = true;
    return;
  }
  f->forced_avx2 = env && strcmp(env, "avx2") == 0;
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
  if (f->forced_avx2) f->avx512f = f->avx512bw = f->avx512vl = f->avx512vnni = false;
#endif
}

const nnp_cpu_features *nnp_cpu_get(void) {
  /* Benign race: every thread computes the same value. */
  static nnp_cpu_features f;
  static volatile int done;
  if (!done) {
    detect(&f);
    done = 1;
  }
  return &f;
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

const nnp_cpu_dispatch *nnp_cpu_dispatch_get(void) {
  /* Benign race, as in nnp_cpu_get: every thread computes the same value. */
  static nnp_cpu_dispatch t;
  static volatile int done;
  if (!done) {
    t.blocked_layout = nnp_cpu_has_avx512f();
    t.winograd = nnp_cpu_has_avx512f() && !getenv("NNP_NOWINO");
    done = 1;
  }
  return &t;
}

const char *nnp_cpu_kernel_isa(void) {
  const nnp_cpu_features *f = nnp_cpu_get();
  if (!(f->avx2 && f->fma)) return "generic";
  return f->avx512f ? "avx512f+avx2+fma" : "avx2+fma";
}
