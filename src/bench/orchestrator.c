#define _GNU_SOURCE /* sched_setaffinity, CPU_SET */
#include "bench/orchestrator.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/protocol.h"
#include "bench/timing_loop.h"
#include "nnperf/alloc.h"
#include "util/procfs.h"

volatile sig_atomic_t nnp_bench_interrupted;

#define STDERR_TAIL 2048

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

/* The most telling line of a dead worker's stderr: a sanitizer's verdict if there is
 * one (it exits with status 1 instead of dying from the signal), else the last line. */
static void last_line(const char *tail, char *out, size_t n) {
  const char *asan = strstr(tail, "ERROR: AddressSanitizer:");
  if (!asan) asan = strstr(tail, "runtime error:");
  if (asan) {
    size_t len = strcspn(asan, "\n");
    snprintf(out, n, "%.*s", (int)len, asan);
    return;
  }
  size_t len = strlen(tail);
  while (len && (tail[len - 1] == '\n' || tail[len - 1] == ' ')) len--;
  size_t start = len;
  while (start && tail[start - 1] != '\n') start--;
  snprintf(out, n, "%.*s", (int)(len - start), tail + start);
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
  x->runtime_bytes = x->model_bytes = x->dev_alloc_peak = x->dev_reserved_peak = x->dev_process_bytes = -1;
  x->runtime_files = -1;
  x->energy_j = -1;
  snprintf(x->device, sizeof x->device, "%s", req->device && req->device[0] ? req->device : "cpu");
  x->realistic = req->realistic != 0;
  if (strcmp(x->device, "cpu") != 0 || x->realistic) { /* labels name rows: say what differs */
    size_t l = strlen(row->label);
    snprintf(row->label + l, sizeof row->label - l, "%s%s%s", strcmp(x->device, "cpu") ? " " : "",
             strcmp(x->device, "cpu") ? x->device : "", x->realistic ? " realistic" : "");
  }
}

nnp_status nnp_worker_spawn(const nnp_row_request *req, nnp_worker_proc *p) {
  memset(p, 0, sizeof *p);
  int in_pipe[2], out_pipe[2], err_pipe[2];
  if (pipe(in_pipe) || pipe(out_pipe) || pipe(err_pipe))
    return nnp_error(NNP_ERR_IO, "cannot create pipes for the worker: %s", strerror(errno));
  signal(SIGPIPE, SIG_IGN); /* a worker that dies early must not kill the parent */
  p->t_spawn = nnp_now();
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    for (int k = 0; k < 2; k++) close(in_pipe[k]), close(out_pipe[k]), close(err_pipe[k]);
    return nnp_error(NNP_ERR_IO, "cannot start a worker process: %s", strerror(e));
  }
  if (pid == 0) {
    setpgid(0, 0);
    /* A parent killed with SIGKILL cannot kill its worker group: the kernel does it, so a
     * hung worker never outlives an interrupted sweep (and never competes with the
     * --resume that follows). getppid() catches a parent that died before prctl. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    if (req->pin_cpus > 0) {
      cpu_set_t set;
      CPU_ZERO(&set);
      for (int c = 0; c < req->pin_cpus; c++) CPU_SET(c, &set);
      sched_setaffinity(0, sizeof set, &set);
    }
    dup2(in_pipe[0], 0);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    for (int fd = 3; fd < 256; fd++) close(fd);
    if (req->pythonpath) setenv("PYTHONPATH", req->pythonpath, 1);
    if (req->external_argv) {
      execv(req->external_argv[0], (char *const *)req->external_argv);
    } else {
      char *argv[] = {"nnperf", "__worker", NULL};
      execv(req->worker_exe, argv);
    }
    _exit(127);
  }
  setpgid(pid, pid);
  close(in_pipe[0]);
  close(out_pipe[1]);
  close(err_pipe[1]);
  p->pid = pid;
  p->out_fd = out_pipe[0];
  p->err_fd = err_pipe[0];
  FILE *spec = fdopen(in_pipe[1], "w");
  if (spec) {
    write_spec(spec, req);
    if (req->serve) {
      fflush(spec); /* errors (EPIPE) show up as a worker failure */
      p->in = spec;
    } else {
      fclose(spec); /* errors (EPIPE) show up as a worker failure below */
    }
  } else {
    close(in_pipe[1]);
  }
  return NNP_OK;
}

/* Appends buf[0..g) to the STDERR_TAIL-byte tail (capacity STDERR_TAIL + 1), keeping its end. */
static void keep_tail(char *tail, size_t *tail_len, const char *buf, size_t g) {
  if (g >= STDERR_TAIL) {
    memcpy(tail, buf + g - STDERR_TAIL, STDERR_TAIL);
    *tail_len = STDERR_TAIL;
  } else {
    if (*tail_len + g > STDERR_TAIL) {
      size_t drop = *tail_len + g - STDERR_TAIL;
      memmove(tail, tail + drop, *tail_len - drop);
      *tail_len -= drop;
    }
    memcpy(tail + *tail_len, buf, g);
    *tail_len += g;
  }
  tail[*tail_len] = 0;
}

nnp_status nnp_run_row(const nnp_row_request *req, nnp_bench_row *row, nnp_progress_fn progress, void *ud) {
  nnp_row_init(req, row);
  nnp_row_request bench = *req;
  bench.serve = 0;
  nnp_worker_proc wp;
  NNP_TRY(nnp_worker_spawn(&bench, &wp));
  pid_t pid = wp.pid;
  double t_spawn = wp.t_spawn;
  int out_pipe[2] = {wp.out_fd, -1}, err_pipe[2] = {wp.err_fd, -1};
  nnp_proto_reader rd;
  nnp_proto_reader_init(&rd, NNP_TENSOR_MAX_BYTES);
  row_reader rr = {.row = row};
  char tail[STDERR_TAIL + 1] = "";
  size_t tail_len = 0;
  int timed_out = 0, interrupted = 0, protocol_error = 0, over_memory = 0;
  int64_t rss_seen = 0;
  char protocol_msg[512] = "";
  struct pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  char buf[65536];
  while (open_fds > 0) {
    double left = t_spawn + req->timeout_s - nnp_now();
    if (left <= 0) {
      timed_out = 1;
      break;
    }
    if (nnp_bench_interrupted) {
      interrupted = 1;
      break;
    }
    /* The memory limit is enforced here, on the resident set: RLIMIT_AS in the worker
     * cannot work under AddressSanitizer (its shadow reserves terabytes), and RSS is
     * what a user's machine runs out of. Polled every 50 ms while a limit is set. */
    if (req->mem_limit > 0) {
      int64_t rss = nnp_proc_status_bytes(pid, "VmRSS");
      if (rss > rss_seen) rss_seen = rss;
      if (rss > req->mem_limit) {
        over_memory = 1;
        break;
      }
    }
    int slice = req->mem_limit > 0 ? 50 : 200;
    int pr = poll(fds, 2, left > slice / 1000.0 ? slice : (int)(left * 1000) + 1);
    if (pr < 0 && errno != EINTR) break;
    for (int k = 0; k < 2; k++) {
      if (fds[k].fd < 0 || !(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t got = read(fds[k].fd, buf, sizeof buf);
      if (got <= 0) {
        if (got < 0 && errno == EINTR) continue;
        close(fds[k].fd);
        fds[k].fd = -1;
        open_fds--;
        continue;
      }
      if (k == 1) { /* keep the last STDERR_TAIL bytes of the worker's stderr */
        keep_tail(tail, &tail_len, buf, (size_t)got);
        continue;
      }
      if (protocol_error) continue;
      if (nnp_proto_feed(&rd, buf, (size_t)got) != NNP_OK) {
        protocol_error = 1;
        snprintf(protocol_msg, sizeof protocol_msg, "%s", nnp_last_error());
        continue;
      }
      nnp_proto_msg m;
      int k2;
      while ((k2 = nnp_proto_next(&rd, &m)) == 1)
        if (handle(&rr, &m, t_spawn, progress, ud, req) != NNP_OK) {
          protocol_error = 1;
          snprintf(protocol_msg, sizeof protocol_msg, "%s", nnp_last_error());
          break;
        }
      if (k2 < 0) {
        protocol_error = 1;
        snprintf(protocol_msg, sizeof protocol_msg, "%s", nnp_last_error());
      }
    }
  }
  if (timed_out || interrupted || protocol_error || over_memory) kill(-pid, SIGKILL);
  for (int k = 0; k < 2; k++)
    if (fds[k].fd >= 0) close(fds[k].fd);
  int wstatus = 0;
  struct rusage ru;
  memset(&ru, 0, sizeof ru);
  while (wait4(pid, &wstatus, 0, &ru) < 0 && errno == EINTR) {
  }
  kill(-pid, SIGKILL); /* anything the worker left behind in its group */
  nnp_proto_reader_free(&rd);
  row->peak_rss_bytes = (int64_t)ru.ru_maxrss * 1024;
  if (WIFEXITED(wstatus)) row->exit_status = WEXITSTATUS(wstatus);
  if (WIFSIGNALED(wstatus)) row->term_signal = WTERMSIG(wstatus);

  char errline[600];
  last_line(tail, errline, sizeof errline);
  if (interrupted) {
    row->status = NNP_ROW_FAILED;
    snprintf(row->reason, sizeof row->reason, "interrupted by the user");
  } else if (over_memory) {
    row->status = NNP_ROW_OOM;
    snprintf(row->reason, sizeof row->reason,
             "worker exceeded the memory limit of %lld MiB (resident %lld MiB) and was killed", req->mem_limit >> 20,
             (long long)(rss_seen >> 20));
  } else if (timed_out) {
    row->status = NNP_ROW_TIMEOUT;
    snprintf(row->reason, sizeof row->reason, "worker exceeded the %.0f s time limit and was killed (after %d samples)",
             req->timeout_s, row->n_samples);
  } else if (protocol_error) {
    row->status = NNP_ROW_FAILED;
    snprintf(row->reason, sizeof row->reason, "worker protocol error: %s", protocol_msg);
  } else if (rr.got_done && row->exit_status == 0) {
    row->status = NNP_ROW_OK;
    if (rr.expected_samples != row->n_samples) {
      row->status = NNP_ROW_FAILED;
      snprintf(row->reason, sizeof row->reason, "worker reported %d samples but sent %d", rr.expected_samples,
               row->n_samples);
    }
  } else if (rr.got_error) {
    row->status = !strcmp(rr.error_kind, "unsupported") ? NNP_ROW_UNSUPPORTED
                  : !strcmp(rr.error_kind, "unavailable") ? NNP_ROW_UNAVAILABLE
                  : !strcmp(rr.error_kind, "nomem")     ? NNP_ROW_OOM
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
  if (row->status != NNP_ROW_OK && row->term_signal == 0 && row->status == NNP_ROW_FAILED && !row->reason[0] &&
      errline[0])
    snprintf(row->reason, sizeof row->reason, "%s", errline);
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
    nnp_bench_row_free(&next);
  }
  summarise(row, req->seed);
  return NNP_OK;
}
