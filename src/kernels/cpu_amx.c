/* AMX permission (kernels/cpu.h): Linux enables the tile data state (XFEATURE 18, 8 KB per
 * thread) lazily and only for a process that asked; the request is process-wide and
 * inherited by threads created afterwards, so one call at detection covers the pool. */
#define _GNU_SOURCE
#include "kernels/cpu.h"
#include "kernels/dispatch.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#if defined(__linux__) && defined(__x86_64__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

/* From the kernel's asm/prctl.h and fpu/xstate.h (not every libc ships them). */
#define NNP_ARCH_REQ_XCOMP_PERM 0x1023
#define NNP_XFEATURE_XTILEDATA 18

nnp_amx_state nnp_cpu_amx_request_permission(char *why, size_t n) {
#if defined(__linux__) && defined(__x86_64__)
  long rc = syscall(SYS_arch_prctl, NNP_ARCH_REQ_XCOMP_PERM, NNP_XFEATURE_XTILEDATA);
  if (rc == 0) {
    snprintf(why, n, "permitted: arch_prctl(ARCH_REQ_XCOMP_PERM, XTILEDATA) granted");
    return NNP_AMX_PERMITTED;
  }
  snprintf(why, n, "refused: arch_prctl(ARCH_REQ_XCOMP_PERM, XTILEDATA): %s", strerror(errno));
#else
  snprintf(why, n, "refused: tile permission is asked through Linux's arch_prctl only");
#endif
  return NNP_AMX_REFUSED;
}

nnp_amx_state nnp_cpu_amx_decide(bool cpuid_tile, bool xcr0_tile, bool hidden,
                                 nnp_amx_state (*request)(char *why, size_t n), char *why, size_t n) {
  if (hidden) {
    snprintf(why, n, "hidden: NNP_CPU_FEATURES turns AMX off");
    return NNP_AMX_HIDDEN;
  }
  if (!cpuid_tile) {
    snprintf(why, n, "absent: CPUID has no AMX-TILE");
    return NNP_AMX_ABSENT;
  }
  if (!xcr0_tile) {
    snprintf(why, n, "not enabled by the OS: XCR0 lacks XTILECFG/XTILEDATA");
    return NNP_AMX_NO_OS;
  }
  nnp_amx_state s = request(why, n);
  return s == NNP_AMX_PERMITTED ? NNP_AMX_PERMITTED : NNP_AMX_REFUSED;
}

const char *nnp_cpu_int8_isa(void) {
  nnp_isa isa = nnp_dispatch_isa(NNP_KF_QDWCONV);
  return isa == NNP_ISA_AVX512_VNNI ? "vnni" : isa == NNP_ISA_AVX2 ? "avx2" : "generic";
}
