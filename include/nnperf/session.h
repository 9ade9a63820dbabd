/* The runtime session: open a model with a preference list of backends and a cache
 * folder, run it, read the outputs. The first backend that loads serves the session; one
 * that fails to load, or later fails to run, hands over to the next, with the reason
 * logged. The native backend gets the plan cache (docs/plan-cache.md) in cache_dir.
 *
 * In-process only: backends the registry runs as external Python workers (ort-cpu,
 * openvino, ...) are skipped with a logged reason, since a session lives inside the
 * caller's process and spawning a worker per session would make it a benchmark harness
 * (nnperf bench/load do that). See docs/plan-cache.md, "Session API". */
#ifndef NNPERF_SESSION_H
#define NNPERF_SESSION_H

#include "nnperf/backend.h"
#include "nnperf/bench.h"
#include "nnperf/engine.h"
#include "nnperf/status.h"
#include "nnperf/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nnp_session nnp_session;

/* Called once per backend that is skipped or falls back: its name and the reason. */
typedef void (*nnp_session_log_fn)(void *user, const char *backend, const char *reason);

typedef struct nnp_session_options {
  const char *backends;        /* preference list, "openvino,xnnpack,native" (default "native") */
  const char *backend_options; /* "B:K=V,...;B2:K=V" per backend, may be NULL */
  const char *cache_dir;       /* plan cache folder, NULL or "": none */
  int threads;                 /* default 1 */
  nnp_precision precision;     /* default fp32 */
  int n_shapes;                /* concrete input shapes (else the model's, symbols = 1) */
  nnp_shape_binding shapes[NNP_PLAN_MAX_BINDINGS];
  nnp_session_log_fn log;      /* NULL: "nnperf: backend B skipped: REASON" on stderr */
  void *log_user;
} nnp_session_options;

void nnp_session_options_default(nnp_session_options *o);

/* Opens model_path on the first backend of o->backends that loads. NNP_ERR_UNSUPPORTED
 * when none does (each reason has been logged; the last is in nnp_last_error()). */
nnp_status nnp_session_open(const char *model_path, const nnp_session_options *o, nnp_session **out);
void nnp_session_close(nnp_session *s);

/* The backend serving the session now ("native"); changes after a fallback. */
const char *nnp_session_backend(const nnp_session *s);
/* Human-readable load note of the serving backend (e.g. "plan cache: hit"). */
const char *nnp_session_note(const nnp_session *s);

int nnp_session_num_inputs(const nnp_session *s);
const char *nnp_session_input_name(const nnp_session *s, int i);
/* Input buffer (dtype and shape fixed by the backend): fill in place before run. */
nnp_tensor *nnp_session_input(nnp_session *s, int i);

/* One inference. When the serving backend fails, the next one in the list is loaded,
 * given the same inputs and run; NNP_OK when some backend produced the outputs. */
nnp_status nnp_session_run(nnp_session *s);

int nnp_session_num_outputs(const nnp_session *s);
const char *nnp_session_output_name(const nnp_session *s, int i);
const nnp_tensor *nnp_session_output(const nnp_session *s, int i);

#ifdef __cplusplus
}
#endif
#endif
