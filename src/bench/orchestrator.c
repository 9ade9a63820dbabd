/* The parent side of a bench row (orchestrator.h): the worker's spec, its records parsed
 * into the row, and how it ended turned into the row's status. */
#define _GNU_SOURCE /* strsignal */
#include "bench/orchestrator.h"
#include "bench/cpu_share.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/protocol.h"
#include "bench/timing_loop.h"
#include "nnperf/alloc.h"

typedef struct row_reader {
  nnp_bench_row *row;
  int cap_samples;
  int got_done, got_error;
  int expected_samples;
  char error_kind[32];
} row_reader;

static nnp_status add_sample(row_reader *rr, double v) {
  nnp_bench_row *r = rr->row;
  if (r->n_samples == rr->cap_samples) {
    int ncap = rr->cap_samples ? rr->cap_samples * 2 : 1024;
    double *ns = nnp_realloc(r->samples, sizeof(double) * (size_t)ncap);
    if (!ns) return nnp_error(NNP_ERR_NOMEM, "out of memory collecting samples");
    r->samples = ns;
    rr->cap_samples = ncap;
  }
  r->samples[r->n_samples++] = v;
  return NNP_OK;
}

static nnp_status keep_output(nnp_bench_row *r, const nnp_proto_msg *m) {
  nnp_tensor **arr = !strcmp(m->tag, "first") ? &r->first_outputs : !strcmp(m->tag, "last") ? &r->last_outputs : NULL;
  if (!arr) return NNP_OK;
  if (m->index >= 64) return nnp_error(NNP_ERR_LIMIT, "worker sent more than 64 outputs");
  if (m->index >= r->n_outputs) {
    int n = m->index + 1;
    nnp_tensor *a = nnp_realloc(r->first_outputs, sizeof(nnp_tensor) * (size_t)n);
    if (!a) return nnp_error(NNP_ERR_NOMEM, "out of memory");
    r->first_outputs = a;
    nnp_tensor *b = nnp_realloc(r->last_outputs, sizeof(nnp_tensor) * (size_t)n);
    if (!b) return nnp_error(NNP_ERR_NOMEM, "out of memory");
    r->last_outputs = b;
    for (int i = r->n_outputs; i < n; i++) {
      memset(&a[i], 0, sizeof a[i]);
      memset(&b[i], 0, sizeof b[i]);
    }
    r->n_outputs = n;
  }
  nnp_tensor *t = &(*arr)[m->index];
  nnp_tensor_free(t);
  *t = m->tensor;
  t->data = NULL;
  NNP_TRY(nnp_tensor_alloc(t));
  memcpy(t->data, m->tensor.data, nnp_tensor_nbytes(t));
  return NNP_OK;
}

static int64_t tok_i64(const char *t) { return strtoll(t, NULL, 10); }

/* The records beyond timing (footprint, energy, device, device_memory, phase); 1 when
 * tok[0] was one of them. Malformed numbers read as 0 or -1: they describe, never time. */
static int handle_extras(nnp_row_extras *x, char **tok, int n, const char *rest) {
  if (!strcmp(tok[0], "footprint") && n >= 4) {
    x->runtime_bytes = tok_i64(tok[1]);
    x->runtime_files = (int)tok_i64(tok[2]);
    x->model_bytes = tok_i64(tok[3]);
  } else if (!strcmp(tok[0], "energy") && n >= 3) {
    double j = atof(tok[1]);
    int64_t inferences = tok_i64(tok[2]);
    x->energy_j = j >= 0 && inferences > 0 ? j / (double)inferences : -1;
    const char *src = rest + strlen(tok[1]) + 1 + strlen(tok[2]);
    while (*src == ' ') src++;
    snprintf(x->energy_source, sizeof x->energy_source, "%s", src);
  } else if (!strcmp(tok[0], "device")) {
    snprintf(x->device_info, sizeof x->device_info, "%s", rest);
  } else if (!strcmp(tok[0], "device_memory") && n >= 4) {
    x->dev_alloc_peak = tok_i64(tok[1]);
    x->dev_reserved_peak = tok_i64(tok[2]);
    x->dev_process_bytes = tok_i64(tok[3]);
  } else if (!strcmp(tok[0], "phase") && n >= 3) {
    if (x->n_phases < NNP_MAX_EXTRA_PHASES) {
      snprintf(x->phase_name[x->n_phases], sizeof x->phase_name[0], "%s", tok[1]);
      x->phase_s[x->n_phases++] = atof(tok[2]);
    }
  } else {
    return 0;
  }
  return 1;
}

int nnp_row_extras_record(nnp_row_extras *x, const char *line) {
  char copy[2048], split[2048], *tok[80]; /* extras are short lines; a long one is not one */
  if (strlen(line) >= sizeof copy) return 0;
  snprintf(copy, sizeof copy, "%s", line);
  snprintf(split, sizeof split, "%s", line);
  int n = nnp_proto_split(split, tok, 80);
  if (!n) return 0;
  const char *rest = copy + (strlen(tok[0]) < strlen(copy) ? strlen(tok[0]) + 1 : strlen(copy));
  return handle_extras(x, tok, n, rest);
}

void nnp_row_extras_init(nnp_row_extras *x) {
  memset(x, 0, sizeof *x);
  x->runtime_bytes = x->model_bytes = x->dev_alloc_peak = x->dev_reserved_peak = x->dev_process_bytes = -1;
  x->runtime_files = -1;
  x->energy_j = -1;
  snprintf(x->device, sizeof x->device, "cpu");
}

/* Handles one record from the worker. */
static nnp_status handle(row_reader *rr, nnp_proto_msg *m, double t_spawn, nnp_progress_fn progress, void *ud,
                         const nnp_row_request *req) {
  nnp_bench_row *r = rr->row;
  if (m->is_tensor) return keep_output(r, m);
  char *line = m->line;
  char *tok[80];
  char copy[NNP_PROTO_MAX_LINE + 1];
  snprintf(copy, sizeof copy, "%s", line);
  int n = nnp_proto_split(line, tok, 80);
  if (!n) return NNP_OK;
  const char *rest = copy + (strlen(tok[0]) < strlen(copy) ? strlen(tok[0]) + 1 : strlen(copy));
  if (handle_extras(&r->ext, tok, n, rest)) return NNP_OK;
  if (!strcmp(tok[0], "ready") && n >= 3) {
    r->spawn_to_ready_s = atof(tok[2]) - t_spawn;
    if (progress) progress(ud, "load", 0, 0);
  } else if (!strcmp(tok[0], "version")) {
    snprintf(r->backend_version, sizeof r->backend_version, "%s", rest);
  } else if (!strcmp(tok[0], "load") && n >= 5) {
    r->parse_s = atof(tok[1]);
    r->compile_s = atof(tok[2]);
    r->load_s = atof(tok[3]);
  } else if (!strcmp(tok[0], "note")) {
    snprintf(r->note, sizeof r->note, "%s", rest);
  } else if (!strcmp(tok[0], "first") && n >= 3) {
    r->first_s = atof(tok[1]);
    r->cold_start_s = atof(tok[2]) - t_spawn;
    if (progress) progress(ud, "warm-up", 0, 0);
  } else if (!strcmp(tok[0], "samples")) {
    for (int i = 1; i < n; i++) NNP_TRY(add_sample(rr, atof(tok[i])));
    if (progress) progress(ud, "measure", r->n_samples, req->loop.iterations);
  } else if (!strcmp(tok[0], "warmup") && n >= 3) {
    r->warmup_iterations = atoi(tok[1]);
    r->warmup_stable = atoi(tok[2]) != 0;
  } else if (!strcmp(tok[0], "summary") && n >= 3) {
    rr->expected_samples = atoi(tok[1]);
    r->time_capped = atoi(tok[2]) != 0;
  } else if (!strcmp(tok[0], "memory") && n >= 2) {
    r->vmhwm_bytes = atoll(tok[1]);
  } else if (!strcmp(tok[0], "done")) {
    rr->got_done = 1;
  } else if (!strcmp(tok[0], "error") && n >= 2) {
    rr->got_error = 1;
    snprintf(rr->error_kind, sizeof rr->error_kind, "%s", tok[1]);
    const char *msg = rest + strlen(tok[1]);
    while (*msg == ' ') msg++;
    snprintf(r->reason, sizeof r->reason, "%s", msg);
  }
  return NNP_OK;
}

/* Statistics and throughput from the pooled raw samples. */
static void summarise(nnp_bench_row *row, uint64_t seed) {
  memset(&row->stats, 0, sizeof row->stats);
  row->items_per_s = row->measured_items_per_s = 0;
  if (row->n_samples <= 0 || row->status != NNP_ROW_OK) return;
  nnp_stats_compute_grouped(row->samples, row->n_samples, row->process_samples, row->n_processes, seed, &row->stats);
  row->items_per_s = row->stats.p50 > 0 ? (double)row->batch / row->stats.p50 : 0;
  double sum = 0;
  for (int i = 0; i < row->n_samples; i++) sum += row->samples[i];
  row->measured_items_per_s = sum > 0 ? (double)row->batch * row->n_samples / sum : 0;
}

static void write_spec(FILE *f, const nnp_row_request *q) {
  fprintf(f, "nnperf-spec %d\nbackend %s\nmodel %s\nprecision %s\nthreads %d\nseed %llu\n", NNP_PROTO_VERSION,
          q->backend, q->model_path, nnp_precision_name(q->precision), q->threads, (unsigned long long)q->seed);
  if (q->options && q->options[0]) fprintf(f, "options %s\n", q->options);
  if (q->mem_limit > 0) fprintf(f, "memlimit %lld\n", q->mem_limit);
  if (q->serve) fprintf(f, "mode serve\n");
  if (q->serve && q->streams > 1) fprintf(f, "streams %d\n", q->streams);
  if (q->device && q->device[0] && strcmp(q->device, "cpu") != 0) fprintf(f, "device %s\n", q->device);
  if (q->realistic) fprintf(f, "realistic 1\n");
  const nnp_loop_spec *l = &q->loop;
  fprintf(f, "loop %d %d %d %.6g %d %.6g %.6g %.6g\n", l->warmup_min, l->warmup_max, l->warmup_window, l->warmup_tol,
          l->iterations, l->min_time_s, l->max_time_s, l->warmup_max_time_s);
  int sent = 0;
  for (int i = 0; i < q->n_inputs; i++) {
    if (i == q->dyn_input) {
      fprintf(f, "dynamic %d %s %s\n", i, q->dyn_dims, q->input_names[i]);
      continue;
    }
    nnp_proto_write_tensor(f, "input", sent++, q->input_names[i], &q->inputs[i]);
  }
  fprintf(f, "run\n");
}

void nnp_row_init(const nnp_row_request *req, nnp_bench_row *row) {
  memset(row, 0, sizeof *row);
  snprintf(row->backend, sizeof row->backend, "%s", req->backend);
  row->precision = req->precision;
  row->threads = req->threads;
  row->batch = req->batch;
  snprintf(row->scenario, sizeof row->scenario, "%s", req->scenario);
  snprintf(row->label, sizeof row->label, "%s %s t%d b%lld", req->backend, nnp_precision_name(req->precision),
           req->threads, (long long)req->batch);
  row->spawn_to_ready_s = row->parse_s = row->compile_s = row->load_s = row->first_s = row->cold_start_s = -1;
  row->peak_rss_bytes = row->vmhwm_bytes = -1;
  row->exit_status = -1;
  nnp_row_extras *x = &row->ext;
  nnp_row_extras_init(x);
  snprintf(x->device, sizeof x->device, "%s", req->device && req->device[0] ? req->device : "cpu");
  x->realistic = req->realistic != 0;
  if (strcmp(x->device, "cpu") != 0 || x->realistic) { /* labels name rows: say what differs */
    size_t l = strlen(row->label);
    snprintf(row->label + l, sizeof row->label - l, "%s%s%s", strcmp(x->device, "cpu") ? " " : "",
             strcmp(x->device, "cpu") ? x->device : "", x->realistic ? " realistic" : "");
  }
}

nnp_status nnp_worker_spawn(const nnp_row_request *req, nnp_worker_proc *p) {
  static const char *const self_argv[] = {"nnperf", "__worker", NULL};
  nnp_worker_cmd cmd = {.exe = req->external_argv ? req->external_argv[0] : req->worker_exe,
                        .argv = req->external_argv ? req->external_argv : self_argv,
                        .pythonpath = req->pythonpath,
                        .pin_cpus = req->pin_cpus};
  NNP_TRY(nnp_worker_start(&cmd, p));
  if (p->in) {
    write_spec(p->in, req);
    if (req->serve) {
      fflush(p->in); /* errors (EPIPE) show up as a worker failure */
    } else {
      fclose(p->in); /* errors (EPIPE) show up as a worker failure below */
      p->in = NULL;
    }
  }
  return NNP_OK;
}

/* The worker's stdout, parsed record by record into the row. */
typedef struct row_feed {
  nnp_proto_reader rd;
  row_reader rr;
  const nnp_row_request *req;
  double t_spawn;
  nnp_progress_fn progress;
  void *ud;
  char protocol_msg[512];
} row_feed;

static bool feed_row(void *ud, const char *buf, size_t n) {
  row_feed *f = ud;
  if (nnp_proto_feed(&f->rd, buf, n) != NNP_OK) {
    snprintf(f->protocol_msg, sizeof f->protocol_msg, "%s", nnp_last_error());
    return false;
  }
  nnp_proto_msg m;
  int k;
  while ((k = nnp_proto_next(&f->rd, &m)) == 1)
    if (handle(&f->rr, &m, f->t_spawn, f->progress, f->ud, f->req) != NNP_OK) {
      snprintf(f->protocol_msg, sizeof f->protocol_msg, "%s", nnp_last_error());
      return false;
    }
  if (k < 0) {
    snprintf(f->protocol_msg, sizeof f->protocol_msg, "%s", nnp_last_error());
    return false;
  }
  return true;
}

/* The row's status and reason from how its worker ended and what it sent. */
static void set_outcome(nnp_bench_row *row, const nnp_row_request *req, const row_feed *f, const nnp_worker_exit *x) {
  const row_reader *rr = &f->rr;
  char errline[600];
  nnp_worker_last_line(x->stderr_tail, errline, sizeof errline);
  if (x->end == NNP_WORKER_INTERRUPTED) {
    row->status = NNP_ROW_FAILED;
    snprintf(row->reason, sizeof row->reason, "interrupted by the user");
  } else if (x->end == NNP_WORKER_OVER_MEMORY) {
    row->status = NNP_ROW_OOM;
    snprintf(row->reason, sizeof row->reason,
             "worker exceeded the memory limit of %lld MiB (resident %lld MiB) and was killed", req->mem_limit >> 20,
             (long long)(x->rss_seen >> 20));
  } else if (x->end == NNP_WORKER_TIMED_OUT) {
    row->status = NNP_ROW_TIMEOUT;
    snprintf(row->reason, sizeof row->reason, "worker exceeded the %.0f s time limit and was killed (after %d samples)",
             req->timeout_s, row->n_samples);
  } else if (x->feed_failed) {
    row->status = NNP_ROW_FAILED;
    snprintf(row->reason, sizeof row->reason, "worker protocol error: %s", f->protocol_msg);
  } else if (rr->got_done && row->exit_status == 0) {
    row->status = NNP_ROW_OK;
    if (rr->expected_samples != row->n_samples) {
      row->status = NNP_ROW_FAILED;
      snprintf(row->reason, sizeof row->reason, "worker reported %d samples but sent %d", rr->expected_samples,
               row->n_samples);
    }
  } else if (rr->got_error) {
    row->status = !strcmp(rr->error_kind, "unsupported") ? NNP_ROW_UNSUPPORTED
                  : !strcmp(rr->error_kind, "unavailable") ? NNP_ROW_UNAVAILABLE
                  : !strcmp(rr->error_kind, "nomem")     ? NNP_ROW_OOM
                                                        : NNP_ROW_FAILED;
  } else if (row->term_signal) {
    row->status = row->term_signal == SIGKILL ? NNP_ROW_OOM : NNP_ROW_CRASHED;
    snprintf(row->reason, sizeof row->reason, "worker killed by signal %d (%s)%s%s%s", row->term_signal,
             strsignal(row->term_signal), row->term_signal == SIGKILL ? ", likely the out-of-memory killer" : "",
             errline[0] ? ": " : "", errline);
  } else {
    row->status = NNP_ROW_CRASHED;
    snprintf(row->reason, sizeof row->reason, "worker exited with status %d without a result%s%s", row->exit_status,
             errline[0] ? ": " : "", errline);
  }
  if (row->status == NNP_ROW_FAILED && row->term_signal == 0 && !row->reason[0] && errline[0])
    snprintf(row->reason, sizeof row->reason, "%s", errline);
}

nnp_status nnp_run_row(const nnp_row_request *req, nnp_bench_row *row, nnp_progress_fn progress, void *ud) {
  nnp_row_init(req, row);
  nnp_row_request bench = *req;
  bench.serve = 0;
  nnp_worker_proc wp;
  nnp_cpu_mark cpu_before, cpu_after;
  nnp_cpu_mark_now(&cpu_before);
  NNP_TRY(nnp_worker_spawn(&bench, &wp));
  row_feed f = {.rr = {.row = row}, .req = req, .t_spawn = wp.t_spawn, .progress = progress, .ud = ud};
  nnp_proto_reader_init(&f.rd, NNP_TENSOR_MAX_BYTES);
  nnp_worker_exit x;
  nnp_worker_wait(&wp, req->timeout_s, req->mem_limit, feed_row, &f, &x);
  nnp_cpu_mark_now(&cpu_after);
  nnp_proto_reader_free(&f.rd);
  nnp_cpu_share_fill(row, &cpu_before, &cpu_after, &x.ru);
  row->peak_rss_bytes = x.peak_rss_bytes;
  row->exit_status = x.exit_status;
  row->term_signal = x.term_signal;
  set_outcome(row, req, &f, &x);
  row->n_processes = 1;
  row->process_samples[0] = row->n_samples;
  summarise(row, req->seed);
  return NNP_OK;
}

nnp_status nnp_run_row_once(const nnp_row_request *req, nnp_bench_row *row) {
  nnp_row_request once = *req;
  once.loop.warmup_min = once.loop.warmup_max = 0;
  once.loop.iterations = 1;
  once.loop.min_time_s = 0;
  return nnp_run_row(&once, row, NULL, NULL);
}

nnp_status nnp_run_row_processes(const nnp_row_request *req, int processes, nnp_bench_row *row,
                                 nnp_progress_fn progress, void *ud) {
  if (processes < 1) processes = 1;
  if (processes > NNP_MAX_PROCESSES) processes = NNP_MAX_PROCESSES;
  nnp_row_request share = *req;
  if (processes > 1) { /* each process measures its share of the steady state */
    share.loop.iterations = (req->loop.iterations + processes - 1) / processes;
    share.loop.min_time_s = req->loop.min_time_s / processes;
    share.loop.max_time_s = req->loop.max_time_s / processes;
  }
  NNP_TRY(nnp_run_row(&share, row, progress, ud));
  for (int p = 1; p < processes && row->status == NNP_ROW_OK && !nnp_bench_interrupted; p++) {
    nnp_bench_row next;
    NNP_TRY(nnp_run_row(&share, &next, progress, ud));
    if (next.status != NNP_ROW_OK) {
      row->status = next.status;
      snprintf(row->reason, sizeof row->reason, "process %d of %d: %s", p + 1, processes, next.reason);
      row->exit_status = next.exit_status;
      row->term_signal = next.term_signal;
      nnp_bench_row_free(&next);
      break;
    }
    if (next.n_samples > 0) {
      double *s = nnp_realloc(row->samples, sizeof(double) * (size_t)(row->n_samples + next.n_samples));
      if (!s) {
        nnp_bench_row_free(&next);
        return nnp_error(NNP_ERR_NOMEM, "out of memory pooling samples");
      }
      memcpy(s + row->n_samples, next.samples, sizeof(double) * (size_t)next.n_samples);
      row->samples = s;
      row->n_samples += next.n_samples;
    }
    row->process_samples[row->n_processes++] = next.n_samples;
    row->time_capped |= next.time_capped;
    if (next.peak_rss_bytes > row->peak_rss_bytes) row->peak_rss_bytes = next.peak_rss_bytes;
    if (next.vmhwm_bytes > row->vmhwm_bytes) row->vmhwm_bytes = next.vmhwm_bytes;
    nnp_cpu_share_pool(row, &next);
    nnp_bench_row_free(&next);
  }
  nnp_cpu_share_note(row, req->pin_cpus > 0 ? req->pin_cpus : nnp_cpus_allowed());
  summarise(row, req->seed);
  return NNP_OK;
}
