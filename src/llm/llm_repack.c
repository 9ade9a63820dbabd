/* The repack decision (llm_repack.h). */
#include "llm/llm_repack.h"

#include <stdio.h>
#include <string.h>

#include "kernels/cpu.h"

/* llama.cpp reads CPUID itself, so what matters is the CPU's bit, not whether nnperf's own
 * kernels may use AMX (NNP_CPU_FEATURES, the OS permission). */
bool nnp_llm_cpu_reports_amx(void) { return nnp_cpu_cpuid_amx_tile(); }

nnp_status nnp_llm_repack_decide(const char *mode, bool cpu_has_amx, int *on, char *why, size_t cap) {
  if (!mode || !strcmp(mode, "auto")) {
    *on = !cpu_has_amx;
    snprintf(why, cap, "%s",
             cpu_has_amx ? "repack off (auto): the CPU has AMX, where ggml's AMX repack path can crash (llama.cpp #20824)"
                         : "repack on (auto): the CPU has no AMX");
    return NNP_OK;
  }
  if (!strcmp(mode, "on") || !strcmp(mode, "off")) {
    *on = !strcmp(mode, "on");
    snprintf(why, cap, "repack %s (--repack %s)", mode, mode);
    return NNP_OK;
  }
  return nnp_error(NNP_ERR_INVALID, "--repack '%s': expected auto, on or off", mode);
}
