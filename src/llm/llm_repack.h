/* Whether llama.cpp repacks its weights at load (ggml's "extra buffer types": Q4_0 and
 * IQ4_NL into interleaved AVX2/AVX-512 layouts, or AMX tiles where the CPU has AMX).
 * Repacking is a controlled variable of every llama.cpp row: on an AVX2 CPU it changes
 * decode speed by about 1.5x (docs/llm.md), and on some AMX CPUs ggml's AMX path crashes on
 * the first decode (llama.cpp issue #20824). `--repack auto` therefore means on, unless the
 * CPU reports AMX. */
#ifndef NNP_LLM_REPACK_H
#define NNP_LLM_REPACK_H

#include <stdbool.h>
#include <stddef.h>

#include "nnperf/status.h"

/* CPUID leaf 7 EDX bit 24 (AMX-TILE), whatever NNP_CPU_FEATURES says: ggml reads CPUID
 * itself. False off x86-64. */
bool nnp_llm_cpu_reports_amx(void);

/* mode "auto", "on" or "off" -> *on, and why in words (for the row's note). The decision
 * is pure (cpu_has_amx given) so tests cover both CPUs on either. NNP_ERR_INVALID names a
 * bad mode. */
nnp_status nnp_llm_repack_decide(const char *mode, bool cpu_has_amx, int *on, char *why, size_t cap);

#endif
