/* Every backend nnperf knows, in the order `nnperf backends` lists them. Adding a
 * backend: its file plus one line here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nnperf/backend.h"

#ifndef NNP_DEFAULT_PYTHON
#define NNP_DEFAULT_PYTHON ".venv/bin/python"
#endif
#ifndef NNP_DEFAULT_PYTHONPATH
#define NNP_DEFAULT_PYTHONPATH "python"
#endif

extern const nnp_backend_vtable nnp_backend_native;
extern const nnp_backend_vtable nnp_backend_fault;
extern const nnp_backend_vtable nnp_backend_xnnpack;

static const nnp_backend_entry entries[] = {
    {"native", NNP_BACKEND_INPROC, &nnp_backend_native, "nnperf's own C engine", "built in", 0},
    {"ort-cpu", NNP_BACKEND_EXTERNAL, NULL, "ONNX Runtime, CPU execution provider (Python worker)",
     "scripts/install-python.sh (PyPI onnxruntime into .venv)", 0},
    {"openvino", NNP_BACKEND_EXTERNAL, NULL, "OpenVINO, CPU plugin, latency hint (Python worker)",
     "scripts/install-python.sh (PyPI openvino into .venv)", 0},
    {"xnnpack", NNP_BACKEND_INPROC, &nnp_backend_xnnpack, "XNNPACK subgraph API (Debian libxnnpack), CNN ops",
     "scripts/install-deps.sh (libxnnpack-dev libpthreadpool-dev), then rebuild", 0},
    {"torch-eager", NNP_BACKEND_EXTERNAL, NULL,
     "PyTorch 2 eager nn.Module (ONNX converted by nnperf; Python worker; --device cpu|cuda[:N])",
     "scripts/install-torch2.sh (pip install torch==2.14.1 onnx into ~/.cache/nnperf/venv-torch2)", 0},
    {"torchscript", NNP_BACKEND_EXTERNAL, NULL,
     "PyTorch 2 TorchScript: jit.trace + freeze + optimize_for_inference (Python worker; --device)",
     "scripts/install-torch2.sh (pip install torch==2.14.1 onnx into ~/.cache/nnperf/venv-torch2)", 0},
    {"torch-compile", NNP_BACKEND_EXTERNAL, NULL, "PyTorch 2 torch.compile, Inductor (Python worker; --device)",
     "scripts/install-torch2.sh (pip install torch==2.14.1 onnx into ~/.cache/nnperf/venv-torch2)", 0},
    {"tflite", NNP_BACKEND_EXTERNAL, NULL, "LiteRT (TFLite) Interpreter + XNNPACK delegate, ONNX converted by nnperf (Python worker)",
     "scripts/install-python.sh (PyPI ai-edge-litert into .venv)", 0},
    {"ort-cuda", NNP_BACKEND_EXTERNAL, NULL, "ONNX Runtime, CUDA execution provider (Python worker; NVIDIA GPU)",
     ".venv/bin/pip install onnxruntime-gpu (replaces onnxruntime) + NVIDIA driver and CUDA 12", 0},
    {"ort-trt", NNP_BACKEND_EXTERNAL, NULL, "ONNX Runtime, TensorRT execution provider (Python worker; NVIDIA GPU)",
     ".venv/bin/pip install onnxruntime-gpu tensorrt + NVIDIA driver and CUDA 12", 0},
    {"tensorrt", NNP_BACKEND_EXTERNAL, NULL, "NVIDIA TensorRT builder + runtime (Python worker; NVIDIA GPU)",
     ".venv/bin/pip install tensorrt cuda-python + NVIDIA driver and CUDA 12", 0},
    {"fault", NNP_BACKEND_INPROC, &nnp_backend_fault, "native engine with an injected fault (harness tests)",
     "built in", 1},
};

int nnp_backend_count(void) { return (int)(sizeof entries / sizeof *entries); }

const nnp_backend_entry *nnp_backend_get(int i) {
  return i >= 0 && i < nnp_backend_count() ? &entries[i] : NULL;
}

const nnp_backend_entry *nnp_backend_find(const char *name) {
  for (int i = 0; i < nnp_backend_count(); i++)
    if (!strcmp(entries[i].name, name)) return &entries[i];
  return NULL;
}

const char *nnp_external_python(void) {
  const char *p = getenv("NNPERF_PYTHON");
  return p && *p ? p : NNP_DEFAULT_PYTHON;
}

/* The PyTorch 2 venv of scripts/install-torch2.sh: $NNP_CACHE, else $XDG_CACHE_HOME/nnperf,
 * else ~/.cache/nnperf, then /venv-torch2/bin/python (the same rule as the script). */
static const char *torch2_python(void) {
  static char path[4096];
  const char *cache = getenv("NNP_CACHE"), *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  if (cache && *cache) snprintf(path, sizeof path, "%s/venv-torch2/bin/python", cache);
  else if (xdg && *xdg) snprintf(path, sizeof path, "%s/nnperf/venv-torch2/bin/python", xdg);
  else snprintf(path, sizeof path, "%s/.cache/nnperf/venv-torch2/bin/python", home && *home ? home : "");
  return path;
}

const char *nnp_external_python_for(const nnp_backend_entry *e) {
  static const char *const torch_rows[] = {"torch-eager", "torchscript", "torch-compile"};
  for (size_t i = 0; e && i < sizeof torch_rows / sizeof *torch_rows; i++)
    if (!strcmp(e->name, torch_rows[i])) {
      const char *p = getenv("NNPERF_TORCH_PYTHON");
      return p && *p ? p : torch2_python();
    }
  return nnp_external_python();
}

const char *nnp_external_pythonpath(void) {
  const char *p = getenv("NNPERF_PYTHONPATH");
  return p && *p ? p : NNP_DEFAULT_PYTHONPATH;
}

/* Runs `PYTHON -m nnperf_worker --probe NAME` and reads its one line. */
static nnp_status probe_external(const nnp_backend_entry *e, char *version, size_t n) {
  const char *py = nnp_external_python_for(e);
  if (access(py, X_OK) != 0)
    return nnp_error(NNP_ERR_UNSUPPORTED, "no Python environment at %s", py);
  int fds[2];
  if (pipe(fds) != 0) return nnp_error(NNP_ERR_IO, "cannot create a pipe");
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return nnp_error(NNP_ERR_IO, "cannot start the probe");
  }
  if (pid == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    close(fds[1]);
    setenv("PYTHONPATH", nnp_external_pythonpath(), 1);
    execl(py, py, "-m", "nnperf_worker", "--probe", e->name, (char *)NULL);
    _exit(127);
  }
  close(fds[1]);
  char line[512] = "";
  size_t used = 0;
  ssize_t got;
  while (used + 1 < sizeof line && (got = read(fds[0], line + used, sizeof line - 1 - used)) > 0) used += (size_t)got;
  line[used] = 0;
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  line[strcspn(line, "\n")] = 0;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    snprintf(version, n, "%s", line);
    return NNP_OK;
  }
  const char *why = !strncmp(line, "unavailable: ", 13) ? line + 13 : line[0] ? line : "the worker did not start";
  return nnp_error(NNP_ERR_UNSUPPORTED, "%s", why);
}

nnp_status nnp_backend_probe(const nnp_backend_entry *e, char *version, size_t n) {
  if (e->kind == NNP_BACKEND_INPROC) return e->vt->probe(version, n);
  return probe_external(e, version, n);
}
