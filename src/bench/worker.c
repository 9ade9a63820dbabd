#include "bench/worker.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bench/footprint.h"
#include "bench/protocol.h"
#include "bench/timing_loop.h"
#include "nnperf/alloc.h"
#include "nnperf/backend.h"
#include "util/procfs.h"

typedef struct worker_spec {
  char backend[64];
  char model[4096];
  char options[1024];
  nnp_precision precision;
  int threads;
  unsigned long long seed;
  long long memlimit;
  nnp_loop_spec loop;
  int serve; /* "mode serve": answer inference requests instead of running the timing loop */
  int streams; /* serve mode: requests run at once, each on its own loaded copy of the model */
  char device[32]; /* "device" key: the C backends run on the CPU only */
  int realistic;   /* "realistic 1": each timed iteration writes a fresh input first */
  /* dynamic-shape scenario: input dyn_input's dims are drawn per iteration from
   * [dyn_lo[d], dyn_hi[d]] (lo == hi for fixed dims); -1 when static */
  int dyn_input, dyn_rank;
  char dyn_name[256];
  int64_t dyn_lo[NNP_MAX_RANK], dyn_hi[NNP_MAX_RANK];
  int n_inputs;
  nnp_tensor inputs[NNP_PLAN_MAX_BINDINGS];
  char input_names[NNP_PLAN_MAX_BINDINGS][256];
} worker_spec;

typedef struct sample_sink {
  FILE *out;
  double buf[64];
  int n;
  long taken;        /* steady-state samples so far */
  nnp_energy energy; /* counters read at the first sample: the window is samples 2..N */
} sample_sink;

static void flush_samples(sample_sink *s) {
  if (!s->n) return;
  fputs("samples", s->out);
  for (int i = 0; i < s->n; i++) fprintf(s->out, " %.9g", s->buf[i]);
  fputc('\n', s->out);
  fflush(s->out);
  s->n = 0;
}

static void on_sample(void *ud, double v) {
  sample_sink *s = ud;
  if (s->taken++ == 0) nnp_energy_start(&s->energy, "/sys/class/powercap");
  s->buf[s->n++] = v;
  if (s->n == 64) flush_samples(s);
}

static void report_error(FILE *out, nnp_status s) {
  /* one line: newlines in the message would break the record */
  char msg[1024];
  snprintf(msg, sizeof msg, "%s", nnp_last_error());
  for (char *p = msg; *p; p++)
    if (*p == '\n' || *p == '\r') *p = ' ';
  fprintf(out, "error %s %s\n", s == NNP_ERR_UNSUPPORTED ? "unsupported" : s == NNP_ERR_NOMEM ? "nomem" : "failed", msg);
  fflush(out);
}


/* "INDEX DIMS NAME" with DIMS like 1x3x[160..320]x[160..320] */
static nnp_status parse_dynamic(const char *s, worker_spec *sp) {
  char *end;
  long idx = strtol(s, &end, 10);
  if (end == s || idx < 0 || idx >= NNP_PLAN_MAX_BINDINGS)
    return nnp_error(NNP_ERR_FORMAT, "worker spec: malformed dynamic line");
  const char *p = end;
  while (*p == ' ') p++;
  int r = 0;
  while (*p && *p != ' ') {
    if (r == NNP_MAX_RANK) return nnp_error(NNP_ERR_FORMAT, "worker spec: dynamic shape has too many dims");
    long long lo, hi;
    if (*p == '[') {
      if (sscanf(p, "[%lld..%lld]", &lo, &hi) != 2 || lo < 1 || hi < lo)
        return nnp_error(NNP_ERR_FORMAT, "worker spec: malformed range in dynamic shape");
      p = strchr(p, ']') + 1;
    } else {
      lo = hi = strtoll(p, &end, 10);
      if (end == p || lo < 1) return nnp_error(NNP_ERR_FORMAT, "worker spec: malformed dynamic shape");
      p = end;
    }
    sp->dyn_lo[r] = lo;
    sp->dyn_hi[r] = hi;
    r++;
    if (*p == 'x') p++;
    else if (*p && *p != ' ') return nnp_error(NNP_ERR_FORMAT, "worker spec: malformed dynamic shape");
  }
  while (*p == ' ') p++;
  if (!*p || strlen(p) >= sizeof sp->dyn_name) return nnp_error(NNP_ERR_FORMAT, "worker spec: dynamic input name missing");
  strcpy(sp->dyn_name, p);
  sp->dyn_input = (int)idx;
  sp->dyn_rank = r;
  return NNP_OK;
}

static nnp_status read_spec(int fd, worker_spec *sp) {
  nnp_proto_reader r;
  nnp_proto_reader_init(&r, NNP_TENSOR_MAX_BYTES);
  nnp_loop_spec_default(&sp->loop);
  nnp_status st = NNP_OK;
  int got_header = 0;
  char chunk[65536];
  for (;;) {
    nnp_proto_msg m;
    int k = nnp_proto_next(&r, &m);
    if (k < 0) {
      st = NNP_ERR_FORMAT;
      break;
    }
    if (k == 0) {
      ssize_t n = read(fd, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        st = nnp_error(NNP_ERR_FORMAT, "worker spec ended before 'run'");
        break;
      }
      if ((st = nnp_proto_feed(&r, chunk, (size_t)n)) != NNP_OK) break;
      continue;
    }
    if (m.is_tensor) {
      if (strcmp(m.tag, "input") || m.index != sp->n_inputs || sp->n_inputs == NNP_PLAN_MAX_BINDINGS) {
        st = nnp_error(NNP_ERR_FORMAT, "worker spec: unexpected tensor record");
        break;
      }
      nnp_tensor *t = &sp->inputs[sp->n_inputs];
      *t = m.tensor;
      t->data = NULL;
      if ((st = nnp_tensor_alloc(t)) != NNP_OK) break;
      memcpy(t->data, m.tensor.data, nnp_tensor_nbytes(t));
      snprintf(sp->input_names[sp->n_inputs], sizeof sp->input_names[0], "%s", m.name);
      sp->n_inputs++;
      continue;
    }
    char *tok[1];
    char *line_end = m.line + strlen(m.line);
    if (nnp_proto_split(m.line, tok, 1) == 0) continue;
    char *rest = tok[0] + strlen(tok[0]);
    if (rest < line_end) rest++; /* the split put a NUL where the separator was */
    while (*rest == ' ') rest++;
    if (!strcmp(tok[0], "nnperf-spec")) got_header = 1;
    else if (!got_header) {
      st = nnp_error(NNP_ERR_FORMAT, "worker spec does not start with 'nnperf-spec'");
      break;
    } else if (!strcmp(tok[0], "backend")) snprintf(sp->backend, sizeof sp->backend, "%s", rest);
    else if (!strcmp(tok[0], "model")) snprintf(sp->model, sizeof sp->model, "%s", rest);
    else if (!strcmp(tok[0], "options")) snprintf(sp->options, sizeof sp->options, "%s", rest);
    else if (!strcmp(tok[0], "precision")) {
      if (!nnp_precision_parse(rest, &sp->precision)) {
        st = nnp_error(NNP_ERR_FORMAT, "worker spec: unknown precision '%s'", rest);
        break;
      }
    } else if (!strcmp(tok[0], "threads")) sp->threads = atoi(rest);
    else if (!strcmp(tok[0], "seed")) sp->seed = strtoull(rest, NULL, 10);
    else if (!strcmp(tok[0], "memlimit")) sp->memlimit = atoll(rest);
    else if (!strcmp(tok[0], "mode")) sp->serve = !strcmp(rest, "serve");
    else if (!strcmp(tok[0], "streams")) sp->streams = atoi(rest);
    else if (!strcmp(tok[0], "device")) snprintf(sp->device, sizeof sp->device, "%s", rest);
    else if (!strcmp(tok[0], "realistic")) sp->realistic = atoi(rest) != 0;
    else if (!strcmp(tok[0], "loop")) {
      nnp_loop_spec *l = &sp->loop;
      /* the 8th field (warm-up time cap) is optional: older parents send 7 */
      if (sscanf(rest, "%d %d %d %lf %d %lf %lf %lf", &l->warmup_min, &l->warmup_max, &l->warmup_window,
                 &l->warmup_tol, &l->iterations, &l->min_time_s, &l->max_time_s, &l->warmup_max_time_s) < 7) {
        st = nnp_error(NNP_ERR_FORMAT, "worker spec: malformed loop line");
        break;
      }
    } else if (!strcmp(tok[0], "dynamic")) {
      if (parse_dynamic(rest, sp) != NNP_OK) {
        st = NNP_ERR_FORMAT;
        break;
      }
    } else if (!strcmp(tok[0], "run")) break;
    /* unknown keys are ignored: newer parents may send more */
  }
  nnp_proto_reader_free(&r);
  if (st == NNP_OK && (!sp->backend[0] || !sp->model[0]))
    st = nnp_error(NNP_ERR_FORMAT, "worker spec lacks backend or model");
  return st;
}

/* What one inference of a dynamic-shape scenario needs. */
typedef struct dyn_ctx {
  const nnp_backend_vtable *vt;
  void *state;
  worker_spec *sp;
  nnp_tensor cur;   /* the drawn shape's input values (buffer sized for the largest) */
  long next;        /* iteration counter: shape i is a function of seed and i */
} dyn_ctx;

/* The shape of iteration it: each ranged dim uniform in [lo, hi], from seed and it. */
static void dyn_draw(const worker_spec *sp, long it, int64_t *dims) {
  for (int k = 0; k < sp->dyn_rank; k++) {
    uint64_t span = (uint64_t)(sp->dyn_hi[k] - sp->dyn_lo[k] + 1);
    dims[k] = sp->dyn_lo[k] + (int64_t)(nnp_mix64(sp->seed * 0x9E3779B97F4A7C15ull + (uint64_t)it * 64 + (uint64_t)k) % span);
  }
}

/* Untimed: draw the next shape and fill its input values. */
static nnp_status dyn_prepare(void *ctx, long unused) {
  (void)unused;
  dyn_ctx *d = ctx;
  d->cur.rank = d->sp->dyn_rank;
  dyn_draw(d->sp, d->next++, d->cur.dims);
  nnp_fill_seeded(&d->cur, d->sp->seed + (uint64_t)d->sp->dyn_input);
  return NNP_OK;
}

/* Timed: the backend's per-shape work, the input copies, one inference. */
static nnp_status dyn_infer(void *ctx) {
  dyn_ctx *d = ctx;
  worker_spec *sp = d->sp;
  NNP_TRY(d->vt->reshape(d->state, sp->dyn_input, d->cur.rank, d->cur.dims));
  for (int i = 0; i < d->vt->num_inputs(d->state); i++) {
    nnp_tensor *dst = d->vt->input(d->state, i);
    const nnp_tensor *src = i == sp->dyn_input ? &d->cur : NULL;
    for (int k = 0; !src && k < sp->n_inputs; k++)
      if (!strcmp(sp->input_names[k], d->vt->input_name(d->state, i))) src = &sp->inputs[k];
    if (!src || src->dtype != dst->dtype || !nnp_tensor_same_shape(src, dst))
      return nnp_error(NNP_ERR_SHAPE, "backend input '%s' does not match the prepared input", d->vt->input_name(d->state, i));
    memcpy(dst->data, src->data, nnp_tensor_nbytes(dst));
  }
  return d->vt->run(d->state);
}

/* --realistic: what an application does per request, inside the timed region: write the
 * next input (alternately a second seeded input and the spec's) into the backend's input
 * buffer, then infer. For the C backends that buffer is the host buffer itself. */
typedef struct real_ctx {
  const nnp_backend_vtable *vt;
  void *state;
  worker_spec *sp;
  nnp_tensor other[NNP_PLAN_MAX_BINDINGS]; /* the second input of each spec input */
  long next;
} real_ctx;

static nnp_status real_infer(void *ctx) {
  real_ctx *r = ctx;
  int odd = (int)(r->next++ & 1);
  for (int i = 0; i < r->vt->num_inputs(r->state); i++) {
    nnp_tensor *dst = r->vt->input(r->state, i);
    for (int k = 0; k < r->sp->n_inputs; k++)
      if (!strcmp(r->sp->input_names[k], r->vt->input_name(r->state, i)))
        memcpy(dst->data, (odd ? &r->other[k] : &r->sp->inputs[k])->data, nnp_tensor_nbytes(dst));
  }
  return r->vt->run(r->state);
}

static nnp_status real_setup(real_ctx *r) {
  for (int k = 0; k < r->sp->n_inputs; k++) {
    r->other[k] = r->sp->inputs[k];
    r->other[k].data = NULL;
    NNP_TRY(nnp_tensor_alloc(&r->other[k]));
    nnp_fill_seeded(&r->other[k], r->sp->seed + 7919u + (uint64_t)k);
  }
  return NNP_OK;
}

static void real_free(real_ctx *r) {
  for (int k = 0; k < NNP_PLAN_MAX_BINDINGS; k++) nnp_tensor_free(&r->other[k]);
}

/* The footprint and energy records (docs/worker-protocol.md), after the steady state. */
static void report_footprint_energy(FILE *out, const worker_spec *sp, const sample_sink *sink) {
  int64_t bytes = -1;
  int files = -1;
  char cache_dir[1024] = ""; /* the backend's cache_dir= option: its files are not runtime */
  const char *cd = strstr(sp->options, "cache_dir=");
  if (cd && (cd == sp->options || cd[-1] == ',')) snprintf(cache_dir, sizeof cache_dir, "%.*s", (int)strcspn(cd + 10, ","), cd + 10);
  if (nnp_footprint_runtime(sp->model, cache_dir[0] ? cache_dir : NULL, &bytes, &files) != NNP_OK) bytes = -1, files = -1;
  fprintf(out, "footprint %lld %d %lld\n", (long long)bytes, files, (long long)nnp_file_bytes(sp->model));
  double j = sink->taken > 1 ? nnp_energy_joules(&sink->energy) : -1;
  if (j >= 0) fprintf(out, "energy %.9g %ld %s\n", j, sink->taken - 1, sink->energy.source);
  else fprintf(out, "energy -1 0 %s\n", sink->taken > 1 ? sink->energy.source : "not measured (fewer than 2 samples)");
}

/* Serve mode: "infer ID K" runs K inferences back to back and answers
 * "completed ID T_START T_END" (monotonic seconds); "quit" or end of input ends it. */
static nnp_status serve_loop(int in_fd, FILE *out, nnp_status (*infer)(void *), void *ctx) {
  fprintf(out, "serving\n");
  fflush(out);
  char buf[4096];
  size_t len = 0;
  for (;;) {
    char *nl = memchr(buf, '\n', len);
    if (!nl) {
      if (len == sizeof buf) return nnp_error(NNP_ERR_FORMAT, "serve request line too long");
      ssize_t n = read(in_fd, buf + len, sizeof buf - len);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return NNP_OK;
      len += (size_t)n;
      continue;
    }
    *nl = 0;
    unsigned long long id = 0;
    long k = 0;
    if (!strncmp(buf, "quit", 4)) return NNP_OK;
    if (sscanf(buf, "infer %llu %ld", &id, &k) != 2 || k < 1 || k > 1 << 20)
      return nnp_error(NNP_ERR_FORMAT, "malformed serve request '%.64s'", buf);
    double t0 = nnp_now();
    for (long i = 0; i < k; i++) NNP_TRY(infer(ctx));
    fprintf(out, "completed %llu %.9f %.9f\n", id, t0, nnp_now());
    fflush(out);
    size_t used = (size_t)(nl + 1 - buf);
    memmove(buf, nl + 1, len - used);
    len -= used;
  }
}

/* Identical seeded inputs for every backend (sent by the parent) into state's buffers. */
static nnp_status set_inputs(const nnp_backend_vtable *vt, void *state, const worker_spec *sp) {
  for (int i = 0; i < vt->num_inputs(state); i++) {
    nnp_tensor *dst = vt->input(state, i);
    const char *name = vt->input_name(state, i);
    int k = 0;
    while (k < sp->n_inputs && strcmp(sp->input_names[k], name)) k++;
    if (k == sp->n_inputs || sp->inputs[k].dtype != dst->dtype || !nnp_tensor_same_shape(&sp->inputs[k], dst))
      return nnp_error(NNP_ERR_SHAPE, "backend input '%s' does not match the input nnperf prepared", name);
    memcpy(dst->data, sp->inputs[k].data, nnp_tensor_nbytes(dst));
  }
  return NNP_OK;
}

/* Serve mode with N streams: N threads, each running requests on its own backend state
 * (the model loaded once per stream: C backends have no shared-weights execution
 * contexts yet), fed by the reading thread through a small queue. Answers are written
 * under a lock as each request finishes, so they may come out of order. */
#define WORKER_MAX_STREAMS 16

typedef struct stream_pool {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  FILE *out;
  nnp_status (*run)(void *);
  unsigned long long q_id[WORKER_MAX_STREAMS * 2];
  long q_k[WORKER_MAX_STREAMS * 2];
  int q_head, q_len, quit;
  nnp_status failed; /* the first failure; the reader stops on it */
  char failed_msg[1024];
} stream_pool;

typedef struct stream_arg {
  stream_pool *sp;
  void *state;
} stream_arg;

static void *stream_main(void *p) {
  stream_arg *a = p;
  stream_pool *sp = a->sp;
  for (;;) {
    pthread_mutex_lock(&sp->mu);
    while (!sp->q_len && !sp->quit) pthread_cond_wait(&sp->cv, &sp->mu);
    if (!sp->q_len) {
      pthread_mutex_unlock(&sp->mu);
      return NULL;
    }
    unsigned long long id = sp->q_id[sp->q_head];
    long k = sp->q_k[sp->q_head];
    sp->q_head = (sp->q_head + 1) % (WORKER_MAX_STREAMS * 2);
    sp->q_len--;
    pthread_cond_broadcast(&sp->cv);
    pthread_mutex_unlock(&sp->mu);
    double t0 = nnp_now();
    nnp_status st = NNP_OK;
    for (long i = 0; i < k && st == NNP_OK; i++) st = sp->run(a->state);
    double t1 = nnp_now();
    pthread_mutex_lock(&sp->mu);
    if (st != NNP_OK && sp->failed == NNP_OK) {
      sp->failed = st;
      snprintf(sp->failed_msg, sizeof sp->failed_msg, "%s", nnp_last_error()); /* the error is per thread */
    }
    if (st == NNP_OK) {
      fprintf(sp->out, "completed %llu %.9f %.9f\n", id, t0, t1);
      fflush(sp->out);
    } else {
      /* the parent learns at once: a request that never completes would only be dropped */
      char msg[1024];
      snprintf(msg, sizeof msg, "%s", sp->failed_msg);
      for (char *c = msg; *c; c++)
        if (*c == '\n' || *c == '\r') *c = ' ';
      fprintf(sp->out, "error %s %s\n", st == NNP_ERR_NOMEM ? "nomem" : "failed", msg);
      fflush(sp->out);
      sp->quit = 1;
      pthread_cond_broadcast(&sp->cv);
    }
    pthread_mutex_unlock(&sp->mu);
  }
}

static nnp_status serve_streams(int in_fd, FILE *out, nnp_status (*run)(void *), void **states, int n) {
  static stream_pool sp;
  memset(&sp, 0, sizeof sp);
  pthread_mutex_init(&sp.mu, NULL);
  pthread_cond_init(&sp.cv, NULL);
  sp.out = out;
  sp.run = run;
  stream_arg args[WORKER_MAX_STREAMS];
  pthread_t th[WORKER_MAX_STREAMS];
  int started = 0;
  for (; started < n; started++) {
    args[started] = (stream_arg){&sp, states[started]};
    if (pthread_create(&th[started], NULL, stream_main, &args[started]) != 0) break;
  }
  nnp_status st = started == n ? NNP_OK : nnp_error(NNP_ERR_INTERNAL, "cannot start %d stream threads", n);
  pthread_mutex_lock(&sp.mu);
  fprintf(out, "serving %d\n", n);
  fflush(out);
  pthread_mutex_unlock(&sp.mu);
  char buf[4096];
  size_t len = 0;
  while (st == NNP_OK) {
    char *nl = memchr(buf, '\n', len);
    if (!nl) {
      if (len == sizeof buf) {
        st = nnp_error(NNP_ERR_FORMAT, "serve request line too long");
        break;
      }
      ssize_t got = read(in_fd, buf + len, sizeof buf - len);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) break;
      len += (size_t)got;
      continue;
    }
    *nl = 0;
    unsigned long long id = 0;
    long k = 0;
    if (!strncmp(buf, "quit", 4)) break;
    if (sscanf(buf, "infer %llu %ld", &id, &k) != 2 || k < 1 || k > 1 << 20) {
      st = nnp_error(NNP_ERR_FORMAT, "malformed serve request '%.64s'", buf);
      break;
    }
    pthread_mutex_lock(&sp.mu);
    /* the parent sends at most n requests at once; room for 2n is never short */
    while (sp.q_len == WORKER_MAX_STREAMS * 2 && !sp.quit) pthread_cond_wait(&sp.cv, &sp.mu);
    int stop = sp.quit;
    if (!stop) {
      int at = (sp.q_head + sp.q_len) % (WORKER_MAX_STREAMS * 2);
      sp.q_id[at] = id;
      sp.q_k[at] = k;
      sp.q_len++;
      pthread_cond_broadcast(&sp.cv);
    }
    pthread_mutex_unlock(&sp.mu);
    if (stop) break;
    size_t used = (size_t)(nl + 1 - buf);
    memmove(buf, nl + 1, len - used);
    len -= used;
  }
  pthread_mutex_lock(&sp.mu);
  sp.quit = 1; /* the threads finish what is queued, then end */
  pthread_cond_broadcast(&sp.cv);
  pthread_mutex_unlock(&sp.mu);
  for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
  if (st == NNP_OK && sp.failed != NNP_OK) st = nnp_error(sp.failed, "%s", sp.failed_msg);
  return st;
}

/* Dynamic-shape serving draws a fresh shape per inference, as the timing loop does. */
static nnp_status dyn_serve_infer(void *ctx) {
  NNP_TRY(dyn_prepare(ctx, 0));
  return dyn_infer(ctx);
}

/* The end of a worker that ran: its peak memory, the backend unloaded, "done". */
static int finish(FILE *out, const nnp_backend_vtable *vt, void *state, worker_spec *sp) {
  fprintf(out, "memory %lld\n", (long long)nnp_proc_status_bytes(0, "VmHWM"));
  vt->unload(state);
  for (int i = 0; i < sp->n_inputs; i++) nnp_tensor_free(&sp->inputs[i]);
  fprintf(out, "done\n");
  fflush(out);
  return 0;
}

/* Serve mode with streams 2..N: their own loaded copy each, inputs set, one untimed
 * inference (their first would otherwise land in the measured requests). */
static int serve_multi(int in_fd, FILE *out, const nnp_backend_vtable *vt, void *state, const nnp_backend_config *cfg,
                       worker_spec *sp) {
  int n = sp->streams < WORKER_MAX_STREAMS ? sp->streams : WORKER_MAX_STREAMS;
  void *states[WORKER_MAX_STREAMS] = {state};
  int loaded = 1;
  nnp_load_report r2 = {-1, -1, 0, ""};
  nnp_status st = NNP_OK;
  for (; loaded < n && st == NNP_OK; loaded++) {
    st = vt->load(cfg, &states[loaded], &r2);
    if (st != NNP_OK) break;
    st = set_inputs(vt, states[loaded], sp);
    if (st == NNP_OK) st = vt->run(states[loaded]);
  }
  if (st == NNP_OK) st = serve_streams(in_fd, out, vt->run, states, n);
  for (int i = 1; i < loaded; i++) vt->unload(states[i]);
  if (st != NNP_OK) {
    report_error(out, st);
    vt->unload(state);
    return 1;
  }
  return finish(out, vt, state, sp);
}

/* The steady state after the first inference: warm-up and timed loop (the ideal loop,
 * a dynamic scenario's or --realistic's), the last outputs, footprint and energy. */
static int measure(FILE *out, const nnp_backend_vtable *vt, void *state, worker_spec *sp, dyn_ctx *dc) {
  int dynamic = sp->dyn_input >= 0;
  nnp_status st = NNP_OK;
  static sample_sink sink;
  sink.out = out;
  nnp_loop_outcome lo;
  static real_ctx rc;
  rc = (real_ctx){.vt = vt, .state = state, .sp = sp};
  int realistic = sp->realistic && !dynamic;
  if (realistic) st = real_setup(&rc);
  if (st == NNP_OK)
    st = dynamic     ? nnp_timing_loop(&sp->loop, dyn_prepare, dyn_infer, dc, on_sample, &sink, &lo)
         : realistic ? nnp_timing_loop(&sp->loop, NULL, real_infer, &rc, on_sample, &sink, &lo)
                     : nnp_timing_loop(&sp->loop, NULL, vt->run, state, on_sample, &sink, &lo);
  flush_samples(&sink);
  nnp_tensor_free(&dc->cur);
  real_free(&rc);
  /* the last outputs must answer the spec's inputs for the accuracy check: untimed */
  if (st == NNP_OK && realistic && (st = set_inputs(vt, state, sp)) == NNP_OK) st = vt->run(state);
  if (st != NNP_OK) {
    report_error(out, st);
    vt->unload(state);
    return 1;
  }
  fprintf(out, "warmup %d %d\n", lo.warmup_iterations, lo.warmup_stable ? 1 : 0);
  for (int i = 0; i < vt->num_outputs(state); i++)
    nnp_proto_write_tensor(out, "last", i, vt->output_name(state, i), vt->output(state, i));
  fprintf(out, "summary %d %d\n", lo.n_samples, lo.time_capped ? 1 : 0);
  report_footprint_energy(out, sp, &sink);
  return finish(out, vt, state, sp);
}

int nnp_worker_main(int in_fd, int out_fd) {
  double t_start = nnp_now();
  FILE *out = fdopen(out_fd, "w");
  if (!out) return 2;
  fprintf(out, "nnperf-worker %d\n", NNP_PROTO_VERSION);
  static worker_spec sp;
  memset(&sp, 0, sizeof sp);
  sp.dyn_input = -1;
  nnp_status st = read_spec(in_fd, &sp);
  if (st != NNP_OK) {
    report_error(out, st);
    return 2;
  }
#ifndef __SANITIZE_ADDRESS__
  /* Allocations beyond the limit fail cleanly (a NOMEM row) instead of waiting for the
   * parent's resident-set watchdog; skipped under ASan, whose shadow memory alone
   * exceeds any address-space limit. */
  if (sp.memlimit > 0) {
    struct rlimit rl = {(rlim_t)sp.memlimit, (rlim_t)sp.memlimit};
    setrlimit(RLIMIT_AS, &rl);
  }
#endif
  fprintf(out, "ready %.9f %.9f\n", t_start, nnp_now());
  const nnp_backend_entry *be = nnp_backend_find(sp.backend);
  if (!be || be->kind != NNP_BACKEND_INPROC) {
    nnp_error(NNP_ERR_UNSUPPORTED, "backend '%s' does not run in the C worker", sp.backend);
    report_error(out, NNP_ERR_UNSUPPORTED);
    return 1;
  }
  const nnp_backend_vtable *vt = be->vt;
  char version[256] = "";
  if ((st = vt->probe(version, sizeof version)) != NNP_OK) {
    report_error(out, NNP_ERR_UNSUPPORTED);
    return 1;
  }
  fprintf(out, "version %s\n", version);
  if (sp.device[0] && strcmp(sp.device, "cpu") != 0) {
    nnp_error(NNP_ERR_UNSUPPORTED, "backend '%s' runs on the CPU only, not on %s", sp.backend, sp.device);
    report_error(out, NNP_ERR_UNSUPPORTED);
    return 1;
  }
  nnp_backend_config cfg = {.model_path = sp.model, .threads = sp.threads, .precision = sp.precision,
                            .options = sp.options, .n_shapes = sp.n_inputs};
  for (int i = 0; i < sp.n_inputs; i++) {
    cfg.shapes[i].input = sp.input_names[i];
    cfg.shapes[i].rank = sp.inputs[i].rank;
    memcpy(cfg.shapes[i].dims, sp.inputs[i].dims, sizeof cfg.shapes[i].dims);
  }
  int dynamic = sp.dyn_input >= 0;
  if (dynamic) { /* load for the first drawn shape; iterations switch shapes */
    if (!vt->reshape) {
      nnp_error(NNP_ERR_UNSUPPORTED, "backend '%s' does not support dynamic input shapes", sp.backend);
      report_error(out, NNP_ERR_UNSUPPORTED);
      return 1;
    }
    if (cfg.n_shapes == NNP_PLAN_MAX_BINDINGS) {
      nnp_error(NNP_ERR_LIMIT, "too many inputs");
      report_error(out, NNP_ERR_LIMIT);
      return 1;
    }
    nnp_shape_binding *b = &cfg.shapes[cfg.n_shapes++];
    b->input = sp.dyn_name;
    b->rank = sp.dyn_rank;
    dyn_draw(&sp, 0, b->dims);
  }
  nnp_load_report rep = {-1, -1, 0, ""};
  void *state = NULL;
  double t_load0 = nnp_now();
  st = vt->load(&cfg, &state, &rep);
  double t_load1 = nnp_now();
  if (st != NNP_OK) {
    report_error(out, st);
    return 1;
  }
  fprintf(out, "load %.9f %.9f %.9f %d\n", rep.parse_s, rep.compile_s, t_load1 - t_load0, rep.threads_used);
  if (rep.note[0]) fprintf(out, "note %s\n", rep.note);
  dyn_ctx dc = {.vt = vt, .state = state, .sp = &sp};
  if (dynamic) {
    if (sp.dyn_input >= vt->num_inputs(state)) {
      nnp_error(NNP_ERR_SHAPE, "dynamic input %d does not exist", sp.dyn_input);
      st = NNP_ERR_SHAPE;
    } else { /* a buffer for the largest shape of the range */
      dc.cur.dtype = vt->input(state, sp.dyn_input)->dtype;
      dc.cur.rank = sp.dyn_rank;
      memcpy(dc.cur.dims, sp.dyn_hi, sizeof dc.cur.dims);
      st = nnp_tensor_alloc(&dc.cur);
    }
  } else {
    st = set_inputs(vt, state, &sp);
  }
  if (st != NNP_OK) {
    report_error(out, st);
    vt->unload(state);
    nnp_tensor_free(&dc.cur);
    return 1;
  }
  fflush(out);
  if (dynamic) dyn_prepare(&dc, 0);
  double t0 = nnp_now();
  st = dynamic ? dyn_infer(&dc) : vt->run(state);
  double t1 = nnp_now();
  if (st != NNP_OK) {
    report_error(out, st);
    vt->unload(state);
    nnp_tensor_free(&dc.cur);
    return 1;
  }
  fprintf(out, "first %.9f %.9f\n", t1 - t0, t1);
  for (int i = 0; i < vt->num_outputs(state); i++)
    nnp_proto_write_tensor(out, "first", i, vt->output_name(state, i), vt->output(state, i));
  fflush(out);
  if (sp.serve && sp.streams > 1 && !dynamic) return serve_multi(in_fd, out, vt, state, &cfg, &sp);
  if (sp.serve) {
    st = dynamic ? serve_loop(in_fd, out, dyn_serve_infer, &dc) : serve_loop(in_fd, out, vt->run, state);
    nnp_tensor_free(&dc.cur);
    if (st != NNP_OK) {
      report_error(out, st);
      vt->unload(state);
      return 1;
    }
    return finish(out, vt, state, &sp);
  }
  return measure(out, vt, state, &sp, &dc);
}
