/* The backend interface: one vtable per inference framework.
 *
 * A backend runs inside a worker process (see docs/worker-protocol.md); the harness
 * never times it from outside that process. Backends that live in another language run
 * as external workers speaking the same protocol and have no vtable here (kind
 * NNP_BACKEND_EXTERNAL in the registry). */
#ifndef NNPERF_BACKEND_H
#define NNPERF_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "nnperf/engine.h"
#include "nnperf/precision.h"
#include "nnperf/status.h"
#include "nnperf/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nnp_backend_config {
  const char *model_path;  /* ONNX file */
  int threads;             /* intra-op threads, the same for every backend of a run */
  nnp_precision precision;
  int n_shapes;            /* concrete input shapes */
  nnp_shape_binding shapes[NNP_PLAN_MAX_BINDINGS];
  const char *options;     /* backend-specific "key=value,key=value", may be "" */
} nnp_backend_config;

typedef struct nnp_load_report {
  double parse_s;          /* reading + parsing the model; -1 when not separable */
  double compile_s;        /* building / optimising / compiling; -1 when not separable */
  int threads_used;        /* threads the backend really uses (may differ from asked) */
  char note[256];          /* anything a reader of the result must know */
} nnp_load_report;

typedef struct nnp_backend_vtable {
  const char *name;          /* "native" */
  const char *description;
  const char *install_hint;  /* shown when probe fails */
  /* Availability and version; NNP_OK when usable, else an error saying why. */
  nnp_status (*probe)(char *version, size_t version_size);
  nnp_status (*load)(const nnp_backend_config *cfg, void **state, nnp_load_report *rep);
  int (*num_inputs)(void *state);
  const char *(*input_name)(void *state, int i);
  /* Input buffer to fill in place (dtype and shape fixed by load). */
  nnp_tensor *(*input)(void *state, int i);
  /* Switches input i's shape (dynamic-shape scenarios; the call is timed with the
   * inference that follows, as a framework's own per-shape work would be). Input and
   * output buffers may move: fetch them again after the call. NULL: static shapes only. */
  nnp_status (*reshape)(void *state, int i, int rank, const int64_t *dims);
  /* One synchronous inference (on a device: returns after the device has finished). */
  nnp_status (*run)(void *state);
  int (*num_outputs)(void *state);
  const char *(*output_name)(void *state, int i);
  const nnp_tensor *(*output)(void *state, int i);
  void (*unload)(void *state);
} nnp_backend_vtable;

typedef enum nnp_backend_kind { NNP_BACKEND_INPROC = 0, NNP_BACKEND_EXTERNAL = 1 } nnp_backend_kind;

typedef struct nnp_backend_entry {
  const char *name;
  nnp_backend_kind kind;
  const nnp_backend_vtable *vt;  /* INPROC */
  const char *description;
  const char *install_hint;
  int hidden;                    /* not part of "all backends" (test backends) */
} nnp_backend_entry;

/* Availability and version of any backend: INPROC asks its vtable, EXTERNAL runs its
 * worker with --probe. NNP_OK when usable, else the reason is in nnp_last_error(). */
nnp_status nnp_backend_probe(const nnp_backend_entry *e, char *version, size_t version_size);

/* External workers run as `PYTHON -m nnperf_worker` with PYTHONPATH set to the folder
 * holding the nnperf_worker package: $NNPERF_PYTHON / $NNPERF_PYTHONPATH when set, else
 * the project's .venv and python/ folder recorded at build time. */
const char *nnp_external_python(void);
/* The interpreter for entry e's worker: the PyTorch rows run under $NNPERF_TORCH_PYTHON,
 * default /usr/bin/python3 (Debian's python3-torch is not importable from .venv, and
 * the venv's numpy would break it); every other row under nnp_external_python(). */
const char *nnp_external_python_for(const nnp_backend_entry *e);
const char *nnp_external_pythonpath(void);

int nnp_backend_count(void);
const nnp_backend_entry *nnp_backend_get(int i);
const nnp_backend_entry *nnp_backend_find(const char *name);

#ifdef __cplusplus
}
#endif
#endif
