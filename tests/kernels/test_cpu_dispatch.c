/* The CPU-dispatch table (kernels/dispatch.h): on made-up CPUs, every NNP_CPU_FEATURES
 * value and the Winograd switch give the expected ISA per kernel family; the process's own
 * table is that rule applied to this CPU and this environment (ctest runs it plain, with
 * NNP_CPU_FEATURES=avx2 and generic, and with NNP_NOWINO=1). */
#include <stdlib.h>
#include <string.h>

#include "kernels/dispatch.h"
#include "test.h"

#define G NNP_ISA_GENERIC
#define A2 NNP_ISA_AVX2
#define A5 NNP_ISA_AVX512
#define VN NNP_ISA_AVX512_VNNI
#define OFF NNP_ISA_OFF

/* Made-up CPUs, bits as detection would leave them before the override. */
static nnp_cpu_features sapphire_rapids(void) { /* AVX-512 with VNNI, BW, BF16 and AMX */
  return (nnp_cpu_features){.avx2 = 1, .fma = 1, .avx512f = 1, .avx512vl = 1, .avx512bw = 1, .avx512vnni = 1,
                            .avx512bf16 = 1, .amx_tile = 1, .amx_int8 = 1, .amx_bf16 = 1};
}
static nnp_cpu_features skylake_x(void) { /* AVX-512F/VL/BW, no VNNI */
  return (nnp_cpu_features){.avx2 = 1, .fma = 1, .avx512f = 1, .avx512vl = 1, .avx512bw = 1};
}
static nnp_cpu_features vnni_without_bw(void) { /* no such CPU: shows which families need BW */
  return (nnp_cpu_features){.avx2 = 1, .fma = 1, .avx512f = 1, .avx512vl = 1, .avx512vnni = 1};
}
static nnp_cpu_features zen3(void) { return (nnp_cpu_features){.avx2 = 1, .fma = 1}; } /* this machine's kind */
static nnp_cpu_features no_avx(void) { return (nnp_cpu_features){0}; }

/* Expected rows, in nnp_kernel_family order: gemm, direct_conv, depthwise, blocked_conv,
 * blocked_pool, winograd, eltwise, fused_eltwise, pool, qgemm, qgemv, qdwconv, qim2col,
 * qeltwise. */
static const nnp_isa ROW_VNNI[NNP_KF_COUNT] = {A5, A5, A5, A5, A5, A5, G, A5, A2, VN, A2, VN, A5, A2};
static const nnp_isa ROW_AVX512[NNP_KF_COUNT] = {A5, A5, A5, A5, A5, A5, G, A5, A2, A2, A2, A2, A5, A2};
static const nnp_isa ROW_VNNI_NO_BW[NNP_KF_COUNT] = {A5, A5, A5, A5, A5, A5, G, A5, A2, VN, A2, A2, A2, A2};
static const nnp_isa ROW_AVX2[NNP_KF_COUNT] = {A2, A2, A2, A2, A2, A2, G, A2, A2, A2, A2, A2, A2, A2};
static const nnp_isa ROW_GENERIC[NNP_KF_COUNT] = {G, G, G, G, G, OFF, G, OFF, G, G, G, G, G, G};

static void expect(const char *cpu, nnp_cpu_features f, const char *env, bool nowino, const nnp_isa *want,
                   bool want_amx_bf16) {
  nnp_cpu_features_override(&f, env);
  nnp_cpu_dispatch t;
  memset(&t, 0xff, sizeof t); /* every entry must be written */
  nnp_cpu_dispatch_fill(&f, nowino, &t);
  for (int k = 0; k < NNP_KF_COUNT; k++) {
    nnp_isa w = k == NNP_KF_WINOGRAD && nowino ? NNP_ISA_OFF : want[k];
    CHECK_MSG(t.isa[k] == w, "%s, NNP_CPU_FEATURES=%s%s: %s runs %s, want %s", cpu, env ? env : "(unset)",
              nowino ? ", NNP_NOWINO=1" : "", nnp_kernel_family_name(k), nnp_isa_name(t.isa[k]), nnp_isa_name(w));
  }
  CHECK_MSG(t.amx_bf16 == want_amx_bf16, "%s, NNP_CPU_FEATURES=%s: amx_bf16 %d", cpu, env ? env : "(unset)",
            t.amx_bf16);
}

static void test_made_up_cpus(void) {
  for (int nowino = 0; nowino < 2; nowino++) {
    expect("sapphire rapids", sapphire_rapids(), NULL, nowino, ROW_VNNI, true);
    expect("sapphire rapids", sapphire_rapids(), "not-a-level", nowino, ROW_VNNI, true); /* ignored */
    expect("sapphire rapids", sapphire_rapids(), "avx512", nowino, ROW_VNNI, false);     /* AMX hidden */
    expect("sapphire rapids", sapphire_rapids(), "avx2", nowino, ROW_AVX2, false);
    expect("sapphire rapids", sapphire_rapids(), "generic", nowino, ROW_GENERIC, false);
    expect("skylake-x", skylake_x(), NULL, nowino, ROW_AVX512, false);
    expect("skylake-x", skylake_x(), "avx2", nowino, ROW_AVX2, false);
    expect("vnni without bw", vnni_without_bw(), NULL, nowino, ROW_VNNI_NO_BW, false);
    expect("zen3", zen3(), NULL, nowino, ROW_AVX2, false);
    expect("zen3", zen3(), "avx512", nowino, ROW_AVX2, false); /* an override never adds a feature */
    expect("zen3", zen3(), "generic", nowino, ROW_GENERIC, false);
    expect("no avx", no_avx(), NULL, nowino, ROW_GENERIC, false);
  }
  nnp_cpu_features f = sapphire_rapids();
  nnp_cpu_features_override(&f, "avx512");
  CHECK(f.forced_no_amx && !f.forced_avx2 && !f.amx_tile && !f.amx_int8 && f.avx512vnni);
}

/* This process: the table is the rule applied once to the detected features and the
 * environment, the derived names agree with it, and a caller's generic always wins. */
static void test_this_process(void) {
  const char *env = getenv("NNP_CPU_FEATURES");
  bool nowino = getenv("NNP_NOWINO") != NULL;
  const nnp_cpu_dispatch *t = nnp_cpu_dispatch_get();
  nnp_cpu_dispatch want;
  nnp_cpu_dispatch_fill(nnp_cpu_get(), nowino, &want);
  printf("NNP_CPU_FEATURES=%s%s:", env ? env : "(unset)", nowino ? " NNP_NOWINO=1" : "");
  for (int k = 0; k < NNP_KF_COUNT; k++) {
    printf(" %s=%s", nnp_kernel_family_name(k), nnp_isa_name(t->isa[k]));
    CHECK(t->isa[k] == want.isa[k] && nnp_dispatch_isa(k) == t->isa[k]);
    CHECK(nnp_dispatch_portable(k, true));
  }
  printf("\n");
  CHECK(nnp_cpu_dispatch_get() == t); /* filled once */
  if (env && !strcmp(env, "generic"))
    for (int k = 0; k < NNP_KF_COUNT; k++) CHECK(t->isa[k] == G || t->isa[k] == OFF);
  if (env && !strcmp(env, "avx2"))
    for (int k = 0; k < NNP_KF_COUNT; k++) CHECK(t->isa[k] != A5 && t->isa[k] != VN);
  if (nowino) CHECK(t->isa[NNP_KF_WINOGRAD] == OFF);
  char line[512];
  nnp_cpu_dispatch_describe(t, line, sizeof line);
  CHECK_MSG(strstr(line, "gemm ") == line && strstr(line, ", qeltwise "), "describe: '%s'", line);
  if (nowino) CHECK(strstr(line, "winograd off"));
  const char *isa = nnp_cpu_kernel_isa();
  CHECK(!strcmp(isa, t->isa[NNP_KF_GEMM] == A5 ? "avx512f+avx2+fma" : t->isa[NNP_KF_GEMM] == A2 ? "avx2+fma" : "generic"));
  CHECK(!strcmp(nnp_cpu_int8_isa(), t->isa[NNP_KF_QDWCONV] == VN ? "vnni" : t->isa[NNP_KF_QDWCONV] == A2 ? "avx2" : "generic"));
}

int main(void) {
  test_made_up_cpus();
  test_this_process();
  TEST_MAIN_END();
}
