#include "bench/worker.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bench/protocol.h"
#include "bench/timing_loop.h"
#include "nnperf/alloc.h"
#include "nnperf/backend.h"

typedef struct worker_spec {
  char backend[64];
  char model[4096];
  char options[1024];
  nnp_precision precision;
  int threads;
  unsigned long long seed;
  long long memlimit;
  nnp_loop_spec loop;
  int n_inputs;
  nnp_tensor inputs[NNP_PLAN_MAX_BINDINGS];
  char input_names[NNP_PLAN_MAX_BINDINGS][256];
} worker_spec;

typedef struct sample_sink {
  FILE *out;
  double buf[64];
  int n;
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

static int64_t read_vmhwm(void) {
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  long long kb = -1;
  while (fgets(line, sizeof line, f))
    if (!strncmp(line, "VmHWM:", 6)) kb = atoll(line + 6);
  fclose(f);
  return kb < 0 ? -1 : kb * 1024;
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
    else if (!strcmp(tok[0], "loop")) {
      nnp_loop_spec *l = &sp->loop;
      if (sscanf(rest, "%d %d %d %lf %d %lf %lf", &l->warmup_min, &l->warmup_max, &l->warmup_window, &l->warmup_tol,
                 &l->iterations, &l->min_time_s, &l->max_time_s) != 7) {
        st = nnp_error(NNP_ERR_FORMAT, "worker spec: malformed loop line");
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

int nnp_worker_main(int in_fd, int out_fd) {
  double t_start = nnp_now();
  FILE *out = fdopen(out_fd, "w");
  if (!out) return 2;
  fprintf(out, "nnperf-worker %d\n", NNP_PROTO_VERSION);
  static worker_spec sp;
  memset(&sp, 0, sizeof sp);
  nnp_status st = read_spec(in_fd, &sp);
  if (st != NNP_OK) {
    report_error(out, st);
    return 2;
  }
  if (sp.memlimit > 0) {
    struct rlimit rl = {(rlim_t)sp.memlimit, (rlim_t)sp.memlimit};
    setrlimit(RLIMIT_AS, &rl);
  }
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
  nnp_backend_config cfg = {.model_path = sp.model, .threads = sp.threads, .precision = sp.precision,
                            .options = sp.options, .n_shapes = sp.n_inputs};
  for (int i = 0; i < sp.n_inputs; i++) {
    cfg.shapes[i].input = sp.input_names[i];
    cfg.shapes[i].rank = sp.inputs[i].rank;
    memcpy(cfg.shapes[i].dims, sp.inputs[i].dims, sizeof cfg.shapes[i].dims);
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
  /* identical seeded inputs for every backend: sent by the parent */
  for (int i = 0; i < vt->num_inputs(state); i++) {
    nnp_tensor *dst = vt->input(state, i);
    const char *name = vt->input_name(state, i);
    int k = 0;
    while (k < sp.n_inputs && strcmp(sp.input_names[k], name)) k++;
    if (k == sp.n_inputs || sp.inputs[k].dtype != dst->dtype || !nnp_tensor_same_shape(&sp.inputs[k], dst)) {
      nnp_error(NNP_ERR_SHAPE, "backend input '%s' does not match the input nnperf prepared", name);
      report_error(out, NNP_ERR_SHAPE);
      vt->unload(state);
      return 1;
    }
    memcpy(dst->data, sp.inputs[k].data, nnp_tensor_nbytes(dst));
  }
  fflush(out);
  double t0 = nnp_now();
  st = vt->run(state);
  double t1 = nnp_now();
  if (st != NNP_OK) {
    report_error(out, st);
    vt->unload(state);
    return 1;
  }
  fprintf(out, "first %.9f %.9f\n", t1 - t0, t1);
  for (int i = 0; i < vt->num_outputs(state); i++)
    nnp_proto_write_tensor(out, "first", i, vt->output_name(state, i), vt->output(state, i));
  fflush(out);
  sample_sink sink = {.out = out};
  nnp_loop_outcome lo;
  st = nnp_timing_loop(&sp.loop, vt->run, state, on_sample, &sink, &lo);
  flush_samples(&sink);
  if (st != NNP_OK) {
    report_error(out, st);
    vt->unload(state);
    return 1;
  }
  fprintf(out, "warmup %d %d\n", lo.warmup_iterations, lo.warmup_stable ? 1 : 0);
  for (int i = 0; i < vt->num_outputs(state); i++)
    nnp_proto_write_tensor(out, "last", i, vt->output_name(state, i), vt->output(state, i));
  fprintf(out, "summary %d %d\n", lo.n_samples, lo.time_capped ? 1 : 0);
  fprintf(out, "memory %lld\n", (long long)read_vmhwm());
  vt->unload(state);
  for (int i = 0; i < sp.n_inputs; i++) nnp_tensor_free(&sp.inputs[i]);
  fprintf(out, "done\n");
  fflush(out);
  return 0;
}
