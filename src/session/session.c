/* The runtime session (include/nnperf/session.h): a preference list of in-process
 * backends with fallback. */
#include <stdio.h>
#include <string.h>

#include "nnperf/alloc.h"
#include "nnperf/session.h"

#define SESSION_MAX_BACKENDS 16

struct nnp_session {
  char model[4096];
  nnp_session_options o;
  char list[1024];                       /* o.backends, split in place */
  char *names[SESSION_MAX_BACKENDS];
  int n_names;
  char backend_options[2048];
  char cache_dir[4096];
  int cur;                               /* index into names of the serving backend, -1 none */
  const nnp_backend_entry *e;
  void *state;
  nnp_load_report rep;
};

static void log_skip(const nnp_session *s, const char *backend, const char *fmt, const char *reason) {
  char msg[768];
  snprintf(msg, sizeof msg, fmt, reason);
  if (s->o.log) s->o.log(s->o.log_user, backend, msg);
  else fprintf(stderr, "nnperf: backend %s skipped: %s\n", backend, msg);
}

void nnp_session_options_default(nnp_session_options *o) {
  memset(o, 0, sizeof *o);
  o->backends = "native";
  o->threads = 1;
  o->precision = NNP_FP32;
}

/* This backend's part of "B:K=V,...;B2:K=V" into buf ("" when none). */
static void options_for(const char *all, const char *name, char *buf, size_t n) {
  buf[0] = 0;
  size_t nl = strlen(name);
  for (const char *p = all; p && *p;) {
    const char *e = strchr(p, ';');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (len > nl && !strncmp(p, name, nl) && p[nl] == ':') {
      snprintf(buf, n, "%.*s", (int)(len - nl - 1), p + nl + 1);
      return;
    }
    p += len + (e ? 1 : 0);
  }
}

static void unload_current(nnp_session *s) {
  if (s->e && s->state) s->e->vt->unload(s->state);
  s->state = NULL;
  s->e = NULL;
}

/* Loads the first usable backend from names[start] on; logs each one skipped. */
static nnp_status load_from(nnp_session *s, int start) {
  nnp_status last = nnp_error(NNP_ERR_UNSUPPORTED, "no backend in '%s' could load %s", s->o.backends, s->model);
  char last_reason[512] = "";
  for (int k = start; k < s->n_names; k++) {
    const char *name = s->names[k];
    const nnp_backend_entry *e = nnp_backend_find(name);
    char reason[512];
    if (!e) {
      log_skip(s, name, "%s", "not a backend nnperf knows (nnperf backends lists them)");
      continue;
    }
    if (e->kind != NNP_BACKEND_INPROC || !e->vt) {
      log_skip(s, name, "%s", "runs as an external Python worker; a session runs in-process backends only");
      continue;
    }
    char version[256];
    if (e->vt->probe(version, sizeof version) != NNP_OK) {
      snprintf(reason, sizeof reason, "%s", nnp_last_error());
      log_skip(s, name, "not available: %s", reason);
      snprintf(last_reason, sizeof last_reason, "%s: %s", name, reason);
      continue;
    }
    char opts[2600];
    options_for(s->backend_options, name, opts, sizeof opts);
    if (s->cache_dir[0] && !strcmp(name, "native")) {
      size_t ol = strlen(opts);
      snprintf(opts + ol, sizeof opts - ol, "%scache_dir=%s", ol ? "," : "", s->cache_dir);
    }
    nnp_backend_config cfg = {.model_path = s->model, .threads = s->o.threads > 0 ? s->o.threads : 1,
                              .precision = s->o.precision, .n_shapes = s->o.n_shapes, .options = opts};
    memcpy(cfg.shapes, s->o.shapes, sizeof cfg.shapes);
    memset(&s->rep, 0, sizeof s->rep);
    void *state = NULL;
    if (e->vt->load(&cfg, &state, &s->rep) != NNP_OK) {
      snprintf(reason, sizeof reason, "%s", nnp_last_error());
      log_skip(s, name, "load failed: %s", reason);
      snprintf(last_reason, sizeof last_reason, "%s: %s", name, reason);
      continue;
    }
    s->e = e;
    s->state = state;
    s->cur = k;
    return NNP_OK;
  }
  s->cur = -1;
  if (last_reason[0])
    return nnp_error(NNP_ERR_UNSUPPORTED, "no backend in '%s' could load %s (last: %s)", s->o.backends, s->model,
                     last_reason);
  return last;
}

nnp_status nnp_session_open(const char *model_path, const nnp_session_options *o, nnp_session **out) {
  *out = NULL;
  nnp_session_options defaults;
  if (!o) {
    nnp_session_options_default(&defaults);
    o = &defaults;
  }
  nnp_session *s = nnp_calloc(1, sizeof *s);
  if (!s) return nnp_error(NNP_ERR_NOMEM, "out of memory opening a session");
  s->o = *o;
  const char *list = o->backends && o->backends[0] ? o->backends : "native";
  s->o.backends = list;
  if (snprintf(s->model, sizeof s->model, "%s", model_path) >= (int)sizeof s->model ||
      snprintf(s->list, sizeof s->list, "%s", list) >= (int)sizeof s->list ||
      snprintf(s->backend_options, sizeof s->backend_options, "%s", o->backend_options ? o->backend_options : "") >=
          (int)sizeof s->backend_options ||
      snprintf(s->cache_dir, sizeof s->cache_dir, "%s", o->cache_dir ? o->cache_dir : "") >= (int)sizeof s->cache_dir) {
    nnp_free(s);
    return nnp_error(NNP_ERR_LIMIT, "session: a path or list is too long");
  }
  s->o.backend_options = s->backend_options;
  s->o.cache_dir = s->cache_dir;
  for (char *p = s->list, *save = NULL, *t; (t = strtok_r(p, ", ", &save)); p = NULL) {
    if (s->n_names == SESSION_MAX_BACKENDS) {
      nnp_free(s);
      return nnp_error(NNP_ERR_LIMIT, "session: more than %d backends in the list", SESSION_MAX_BACKENDS);
    }
    s->names[s->n_names++] = t;
  }
  s->o.backends = o->backends && o->backends[0] ? o->backends : "native";
  nnp_status st = load_from(s, 0);
  if (st != NNP_OK) {
    nnp_free(s);
    return st;
  }
  *out = s;
  return NNP_OK;
}

void nnp_session_close(nnp_session *s) {
  if (!s) return;
  unload_current(s);
  nnp_free(s);
}

const char *nnp_session_backend(const nnp_session *s) { return s->e ? s->e->name : ""; }
const char *nnp_session_note(const nnp_session *s) { return s->rep.note; }
int nnp_session_num_inputs(const nnp_session *s) { return s->e ? s->e->vt->num_inputs(s->state) : 0; }
const char *nnp_session_input_name(const nnp_session *s, int i) { return s->e->vt->input_name(s->state, i); }
nnp_tensor *nnp_session_input(nnp_session *s, int i) { return s->e->vt->input(s->state, i); }
int nnp_session_num_outputs(const nnp_session *s) { return s->e ? s->e->vt->num_outputs(s->state) : 0; }
const char *nnp_session_output_name(const nnp_session *s, int i) { return s->e->vt->output_name(s->state, i); }
const nnp_tensor *nnp_session_output(const nnp_session *s, int i) { return s->e->vt->output(s->state, i); }

/* The inputs of a failed backend, kept across the switch to the next one. */
typedef struct saved_inputs {
  int n;
  char names[NNP_PLAN_MAX_BINDINGS][256];
  nnp_tensor t[NNP_PLAN_MAX_BINDINGS];
} saved_inputs;

static void saved_free(saved_inputs *si) {
  for (int i = 0; i < si->n; i++) nnp_tensor_free(&si->t[i]);
  si->n = 0;
}

static nnp_status save_inputs(nnp_session *s, saved_inputs *si) {
  si->n = 0;
  int n = nnp_session_num_inputs(s);
  if (n > NNP_PLAN_MAX_BINDINGS) return nnp_error(NNP_ERR_LIMIT, "session: more than %d inputs", NNP_PLAN_MAX_BINDINGS);
  for (int i = 0; i < n; i++) {
    snprintf(si->names[i], sizeof si->names[i], "%s", nnp_session_input_name(s, i));
    nnp_status st = nnp_tensor_clone(nnp_session_input(s, i), &si->t[i]);
    if (st != NNP_OK) {
      saved_free(si);
      return st;
    }
    si->n = i + 1;
  }
  return NNP_OK;
}

static nnp_status restore_inputs(nnp_session *s, const saved_inputs *si) {
  for (int i = 0; i < nnp_session_num_inputs(s); i++) {
    const char *name = nnp_session_input_name(s, i);
    nnp_tensor *dst = nnp_session_input(s, i);
    int k = 0;
    while (k < si->n && strcmp(si->names[k], name)) k++;
    if (k == si->n) return nnp_error(NNP_ERR_INVALID, "session: backend %s wants input '%s' the failed one did not have",
                                     nnp_session_backend(s), name);
    if (dst->dtype != si->t[k].dtype || !nnp_tensor_same_shape(dst, &si->t[k]))
      return nnp_error(NNP_ERR_SHAPE, "session: backend %s takes input '%s' in another type or shape",
                       nnp_session_backend(s), name);
    memcpy(dst->data, si->t[k].data, nnp_tensor_nbytes(dst));
  }
  return NNP_OK;
}

nnp_status nnp_session_run(nnp_session *s) {
  if (!s->e) return nnp_error(NNP_ERR_INVALID, "session: no backend is loaded");
  for (;;) {
    if (s->e->vt->run(s->state) == NNP_OK) return NNP_OK;
    char reason[512];
    snprintf(reason, sizeof reason, "%s", nnp_last_error());
    const char *failed = s->e->name;
    saved_inputs *si = nnp_calloc(1, sizeof *si);
    if (!si) return nnp_error(NNP_ERR_NOMEM, "out of memory saving inputs for the fallback");
    nnp_status st = save_inputs(s, si);
    int next = s->cur + 1;
    log_skip(s, failed, "run failed (%s); falling back to the next backend", reason);
    unload_current(s);
    if (st == NNP_OK) st = load_from(s, next);
    if (st == NNP_OK) st = restore_inputs(s, si);
    saved_free(si);
    nnp_free(si);
    if (st != NNP_OK) return st;
  }
}
