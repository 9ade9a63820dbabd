/* The repack decision (llm_repack.h). */
#include "llm/llm_repack.h"

#include <stdio.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

bool nnp_llm_cpu_reports_amx(void) {
#if defined(__x86_64__) || defined(__i386__)
  unsigned a, b, c, d;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
  return (d >> 24) & 1u;
#else
  return false;
#endif
}

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
