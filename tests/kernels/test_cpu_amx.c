/* CPU dispatch for AMX (kernels/cpu.h, cpu_amx.c): the decision asks the kernel at most
 * once and only when CPUID, XCR0 and NNP_CPU_FEATURES allow it; a refusal leaves AMX off;
 * the real arch_prctl request is refused on a CPU without AMX (this machine's path); the
 * detected features and the INT8 kernel family agree with NNP_CPU_FEATURES. ctest runs it
 * plain and with NNP_CPU_FEATURES=avx2, avx512 and generic. */
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu.h"
#if defined(__x86_64__)
#include <cpuid.h>
#endif
#include "test.h"

static int requests;
static nnp_amx_state answer;
static nnp_amx_state scripted_request(char *why, size_t n) {
  requests++;
  snprintf(why, n, "%s", answer == NNP_AMX_PERMITTED ? "permitted: scripted" : "refused: scripted");
  return answer;
}

static void decide_case(bool cpuid, bool xcr0, bool hidden, nnp_amx_state kernel_says, nnp_amx_state want,
                        int want_requests, const char *want_why) {
  char why[160];
  requests = 0;
  answer = kernel_says;
  nnp_amx_state got = nnp_cpu_amx_decide(cpuid, xcr0, hidden, scripted_request, why, sizeof why);
  CHECK_MSG(got == want && requests == want_requests && strstr(why, want_why),
            "cpuid %d xcr0 %d hidden %d: state %d (want %d), %d requests (want %d), why '%s'", cpuid, xcr0, hidden,
            got, want, requests, want_requests, why);
}

static void test_decision(void) {
  decide_case(true, true, true, NNP_AMX_PERMITTED, NNP_AMX_HIDDEN, 0, "NNP_CPU_FEATURES");
  decide_case(false, true, false, NNP_AMX_PERMITTED, NNP_AMX_ABSENT, 0, "CPUID");
  decide_case(true, false, false, NNP_AMX_PERMITTED, NNP_AMX_NO_OS, 0, "XCR0");
  decide_case(true, true, false, NNP_AMX_REFUSED, NNP_AMX_REFUSED, 1, "refused");
  decide_case(true, true, false, NNP_AMX_PERMITTED, NNP_AMX_PERMITTED, 1, "permitted");
}

/* The real request: where CPUID has no AMX-TILE the kernel must refuse it (and nnperf
 * must say so, not crash); where it has AMX the answer is the kernel's. */
static void test_real_request(bool cpuid_tile) {
  char why[160];
  nnp_amx_state s = nnp_cpu_amx_request_permission(why, sizeof why);
  printf("arch_prctl(ARCH_REQ_XCOMP_PERM, XTILEDATA): %s\n", why);
  CHECK(s == NNP_AMX_PERMITTED || s == NNP_AMX_REFUSED);
  if (!cpuid_tile) CHECK_MSG(s == NNP_AMX_REFUSED && strstr(why, "refused"), "no AMX-TILE, yet: %s", why);
}

static void test_detected(const char *env) {
  const nnp_cpu_features *f = nnp_cpu_get();
  const char *why;
  nnp_amx_state s = nnp_cpu_amx_status(&why);
  printf("NNP_CPU_FEATURES=%s: AMX %s; int8 kernels %s; isa %s\n", env ? env : "(unset)", why, nnp_cpu_int8_isa(),
         nnp_cpu_kernel_isa());
  /* usable AMX only with the kernel's permission */
  CHECK(f->amx_tile == (s == NNP_AMX_PERMITTED));
  CHECK(!(f->amx_int8 || f->amx_bf16) || f->amx_tile);
  bool hides = env && (!strcmp(env, "avx2") || !strcmp(env, "avx512") || !strcmp(env, "generic"));
  if (hides) CHECK_MSG(s == NNP_AMX_HIDDEN && !f->amx_tile, "NNP_CPU_FEATURES=%s, AMX %s", env, why);
  const char *i8 = nnp_cpu_int8_isa();
  if (env && !strcmp(env, "generic")) CHECK(!strcmp(i8, "generic") && !f->avx2);
  if (env && !strcmp(env, "avx2")) CHECK(!strcmp(i8, nnp_cpu_has_avx2_fma() ? "avx2" : "generic") && !f->avx512f);
  CHECK(!strcmp(i8, "vnni") == (nnp_cpu_has_avx512_vnni() && f->avx512bw));
  /* the answer is cached: a second call is the same object, no second request */
  CHECK(nnp_cpu_get() == f);
}

int main(void) {
  const char *env = getenv("NNP_CPU_FEATURES");
  bool cpuid_tile = false;
#if defined(__x86_64__)
  unsigned a, b, c, d;
  if (__get_cpuid_max(0, NULL) >= 7) {
    __cpuid_count(7, 0, a, b, c, d);
    cpuid_tile = (d >> 24) & 1;
  }
#endif
  test_decision();
  test_detected(env);
  test_real_request(cpuid_tile);
  TEST_MAIN_END();
}
