/* The fault backend: the native engine with a fault injected on the Nth inference, so
 * tests can show that the harness survives a worker that crashes, hangs, runs out of
 * memory or exits. Never part of "all backends"; select it by name:
 *   --backends fault --backend-options fault:mode=segv,after=5
 * modes: segv, abort, kill (SIGKILL itself), hang, bomb (allocate until failure),
 *        error (return an error), exit (exit(3) without a result),
 *        none (no fault: with sleep_ms, a backend of known, fixed service time),
 *        load_error (load fails: how the session API's fallback is tested);
 *   after: default 3; sleep_ms: sleep this long before every inference (load tests need a
 *   service time that does not depend on the machine, so queueing theory is checkable). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nnperf/alloc.h"
#include "nnperf/backend.h"

extern const nnp_backend_vtable nnp_backend_native;

typedef struct fault_state {
  void *inner;
  char mode[16];
  long after, runs;
  long sleep_ms;
} fault_state;

static nnp_status fault_probe(char *version, size_t n) { return nnp_backend_native.probe(version, n); }

static nnp_status fault_load(const nnp_backend_config *cfg, void **state, nnp_load_report *rep) {
  fault_state *s = nnp_calloc(1, sizeof *s);
  if (!s) return nnp_error(NNP_ERR_NOMEM, "out of memory");
  snprintf(s->mode, sizeof s->mode, "segv");
  s->after = 3;
  const char *o = cfg->options ? cfg->options : "";
  const char *m = strstr(o, "mode=");
  if (m) sscanf(m + 5, "%15[a-z_]", s->mode);
  const char *a = strstr(o, "after=");
  if (a) s->after = atol(a + 6);
  const char *z = strstr(o, "sleep_ms=");
  if (z) s->sleep_ms = atol(z + 9);
  if (!strcmp(s->mode, "load_error")) {
    nnp_free(s);
    return nnp_error(NNP_ERR_INTERNAL, "injected load failure");
  }
  nnp_backend_config inner = *cfg; /* the options above are fault's, not native's */
  inner.options = "";
  nnp_status st = nnp_backend_native.load(&inner, &s->inner, rep);
  if (st != NNP_OK) {
    nnp_free(s);
    return st;
  }
  if (!strcmp(s->mode, "none"))
    snprintf(rep->note, sizeof rep->note, "fault backend without a fault, sleep %ld ms per inference", s->sleep_ms);
  else
    snprintf(rep->note, sizeof rep->note, "fault injection: %s on inference %ld", s->mode, s->after);
  *state = s;
  return NNP_OK;
}

static nnp_status fault_run(void *st) {
  fault_state *s = st;
  if (s->sleep_ms > 0) {
    struct timespec ts = {s->sleep_ms / 1000, (s->sleep_ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
  }
  if (++s->runs == s->after && strcmp(s->mode, "none")) {
    if (!strcmp(s->mode, "segv")) raise(SIGSEGV);
    if (!strcmp(s->mode, "abort")) abort();
    if (!strcmp(s->mode, "kill")) raise(SIGKILL);
    if (!strcmp(s->mode, "hang"))
      for (;;) pause();
    if (!strcmp(s->mode, "exit")) _exit(3);
    if (!strcmp(s->mode, "error")) return nnp_error(NNP_ERR_INTERNAL, "injected error on inference %ld", s->runs);
    if (!strcmp(s->mode, "bomb")) {
      for (;;) { /* grow until the allocator or the memory limit says no */
        char *p = nnp_malloc((size_t)64 << 20);
        if (!p) return nnp_error(NNP_ERR_NOMEM, "injected allocation bomb exhausted memory");
        memset(p, 1, (size_t)64 << 20);
      }
    }
  }
  return nnp_backend_native.run(s->inner);
}

static void fault_unload(void *st) {
  fault_state *s = st;
  if (!s) return;
  nnp_backend_native.unload(s->inner);
  nnp_free(s);
}
static int fault_num_inputs(void *st) { return nnp_backend_native.num_inputs(((fault_state *)st)->inner); }
static const char *fault_input_name(void *st, int i) { return nnp_backend_native.input_name(((fault_state *)st)->inner, i); }
static nnp_tensor *fault_input(void *st, int i) { return nnp_backend_native.input(((fault_state *)st)->inner, i); }
static int fault_num_outputs(void *st) { return nnp_backend_native.num_outputs(((fault_state *)st)->inner); }
static const char *fault_output_name(void *st, int i) { return nnp_backend_native.output_name(((fault_state *)st)->inner, i); }
static const nnp_tensor *fault_output(void *st, int i) { return nnp_backend_native.output(((fault_state *)st)->inner, i); }

const nnp_backend_vtable nnp_backend_fault = {
    .name = "fault",
    .description = "native engine with an injected fault (harness tests)",
    .install_hint = "built in",
    .probe = fault_probe,
    .load = fault_load,
    .num_inputs = fault_num_inputs,
    .input_name = fault_input_name,
    .input = fault_input,
    .run = fault_run,
    .num_outputs = fault_num_outputs,
    .output_name = fault_output_name,
    .output = fault_output,
    .unload = fault_unload,
};
