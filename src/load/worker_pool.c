#define _GNU_SOURCE /* ppoll */
#include "load/worker_pool.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/timing_loop.h"
#include "nnperf/alloc.h"

static nnp_status worker_failed(nnp_load_pool *p, int k, const char *why) {
  char last[600];
  nnp_worker_last_line(p->w[k].err_tail, last, sizeof last);
  return nnp_error(NNP_ERR_INTERNAL, "worker %d of %d: %s%s%s", k + 1, p->n, why, last[0] ? ": " : "", last);
}

/* One record from worker k. Returns 1 "serving", 2 "completed" (ids in *id, *t_end),
 * 0 anything else (start-up records are kept), -1 an error (message set). */
static int handle(nnp_load_pool *p, int k, nnp_proto_msg *m, int64_t *id, double *t_end) {
  nnp_load_worker *w = &p->w[k];
  if (m->is_tensor) return 0;
  char *tok[8];
  char copy[512];
  snprintf(copy, sizeof copy, "%s", m->line);
  int n = nnp_proto_split(m->line, tok, 8);
  if (!n) return 0;
  if (!strcmp(tok[0], "completed") && n >= 4) {
    *id = atoll(tok[1]);
    *t_end = atof(tok[3]);
    return 2;
  }
  if (!strcmp(tok[0], "serving")) {
    /* "serving N": N requests at once; a worker that says no N runs one at a time */
    int k2 = n >= 2 ? atoi(tok[1]) : 1;
    w->streams = k2 < 1 ? 1 : k2 > w->streams ? w->streams : k2;
    return 1;
  }
  if (!strcmp(tok[0], "ready") && n >= 3) w->spawn_to_ready_s = atof(tok[2]) - w->proc.t_spawn;
  else if (!strcmp(tok[0], "load") && n >= 4) w->load_s = atof(tok[3]);
  else if (!strcmp(tok[0], "first") && n >= 3) {
    w->first_s = atof(tok[1]);
    w->cold_start_s = atof(tok[2]) - w->proc.t_spawn;
  } else if (!strcmp(tok[0], "version")) snprintf(w->version, sizeof w->version, "%s", copy + 8);
  else if (!strcmp(tok[0], "note")) snprintf(w->note, sizeof w->note, "%s", copy + 5);
  else if (!strcmp(tok[0], "error")) {
    worker_failed(p, k, copy + 6);
    return -1;
  }
  return 0;
}

/* Waits up to `wait_s` for output from any worker and feeds it through handle().
 * on_serving / on_completed are counted into the callbacks' arguments. */
#define MAX_DONE (NNP_LOAD_MAX_INSTANCES * NNP_LOAD_MAX_STREAMS)
typedef struct events {
  int serving[NNP_LOAD_MAX_INSTANCES];
  int n_done;
  int64_t done_id[MAX_DONE];
  int done_worker[MAX_DONE];
  double done_t[MAX_DONE];
} events;

static nnp_status pump(nnp_load_pool *p, double wait_s, events *ev) {
  struct pollfd fds[2 * NNP_LOAD_MAX_INSTANCES];
  for (int k = 0; k < p->n; k++) {
    fds[2 * k] = (struct pollfd){p->w[k].proc.out_fd, POLLIN, 0};
    fds[2 * k + 1] = (struct pollfd){p->w[k].proc.err_fd, POLLIN, 0};
  }
  if (wait_s < 0) wait_s = 0;
  struct timespec ts = {(time_t)wait_s, (long)((wait_s - (double)(time_t)wait_s) * 1e9)};
  int pr = ppoll(fds, (nfds_t)(2 * p->n), &ts, NULL);
  if (pr < 0) return errno == EINTR ? NNP_OK : nnp_error(NNP_ERR_IO, "poll: %s", strerror(errno));
  char buf[65536];
  for (int i = 0; i < 2 * p->n; i++) {
    if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    int k = i / 2;
    ssize_t got = read(fds[i].fd, buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (i % 2) { /* stderr: keep the tail; its end alone is no failure */
      if (got > 0) nnp_worker_tail_append(p->w[k].err_tail, sizeof p->w[k].err_tail, buf, (size_t)got);
      else {
        close(p->w[k].proc.err_fd);
        p->w[k].proc.err_fd = -1;
      }
      continue;
    }
    if (got <= 0) { /* its stdout closed: say how it ended */
      char why[160] = "exited without a result";
      int status;
      double until = nnp_now() + 1;
      pid_t r = 0;
      while ((r = waitpid(p->w[k].proc.pid, &status, WNOHANG)) == 0 && nnp_now() < until) usleep(1000);
      if (r == p->w[k].proc.pid && WIFSIGNALED(status))
        snprintf(why, sizeof why, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
      else if (r == p->w[k].proc.pid && WIFEXITED(status))
        snprintf(why, sizeof why, "exited with status %d without a result", WEXITSTATUS(status));
      if (r == p->w[k].proc.pid) p->w[k].proc.pid = 0; /* reaped: nothing left to end */
      return worker_failed(p, k, why);
    }
    if (nnp_proto_feed(&p->w[k].rd, buf, (size_t)got) != NNP_OK) return worker_failed(p, k, nnp_last_error());
    nnp_proto_msg m;
    int r;
    while ((r = nnp_proto_next(&p->w[k].rd, &m)) == 1) {
      int64_t id = 0;
      double t = 0;
      int h = handle(p, k, &m, &id, &t);
      if (h < 0) return NNP_ERR_INTERNAL;
      if (h == 1) ev->serving[k] = 1;
      if (h == 2) {
        if (ev->n_done == MAX_DONE) return worker_failed(p, k, "answered requests it was not sent");
        ev->done_id[ev->n_done] = id;
        ev->done_worker[ev->n_done] = k;
        ev->done_t[ev->n_done++] = t;
      }
    }
    if (r < 0) return worker_failed(p, k, nnp_last_error());
  }
  return NNP_OK;
}

nnp_status nnp_load_pool_start(const nnp_row_request *req, int instances, double timeout_s, nnp_load_pool *p) {
  memset(p, 0, sizeof *p);
  if (instances < 1 || instances > NNP_LOAD_MAX_INSTANCES)
    return nnp_error(NNP_ERR_INVALID, "instances must be 1..%d", NNP_LOAD_MAX_INSTANCES);
  p->timeout_s = timeout_s;
  nnp_row_request r = *req;
  r.serve = 1;
  if (r.streams > NNP_LOAD_MAX_STREAMS) r.streams = NNP_LOAD_MAX_STREAMS;
  for (int k = 0; k < instances; k++) {
    nnp_load_worker *w = &p->w[k];
    w->spawn_to_ready_s = w->load_s = w->first_s = w->cold_start_s = -1;
    /* what we ask for; "serving N" may lower it */
    w->streams = req->streams < 1 ? 1 : req->streams > NNP_LOAD_MAX_STREAMS ? NNP_LOAD_MAX_STREAMS : req->streams;
    nnp_proto_reader_init(&w->rd, NNP_TENSOR_MAX_BYTES);
    p->n = k + 1;
    nnp_status st = nnp_worker_spawn(&r, &w->proc);
    if (st != NNP_OK) {
      p->n = k;
      nnp_proto_reader_free(&w->rd);
      nnp_load_pool_stop(p);
      return st;
    }
  }
  events ev;
  memset(&ev, 0, sizeof ev);
  double deadline = nnp_now() + timeout_s;
  for (;;) {
    int all = 1;
    for (int k = 0; k < p->n; k++) all &= ev.serving[k];
    if (all) return NNP_OK;
    double left = deadline - nnp_now();
    nnp_status st = left <= 0 ? nnp_error(NNP_ERR_INTERNAL, "workers did not load the model within %.0f s", timeout_s)
                              : pump(p, left < 0.2 ? left : 0.2, &ev);
    if (st == NNP_OK && ev.n_done) st = nnp_error(NNP_ERR_INTERNAL, "a worker answered before it was asked");
    if (st != NNP_OK) {
      char msg[1024];
      snprintf(msg, sizeof msg, "%s", nnp_last_error());
      nnp_load_pool_stop(p);
      return nnp_error(st, "%s", msg);
    }
  }
}

int nnp_load_pool_slots(const nnp_load_pool *p) {
  int n = 0;
  for (int k = 0; k < p->n; k++) n += p->w[k].streams;
  return n;
}

static void send_request(nnp_load_worker *w, int64_t first, int count) {
  int slot = 0;
  while (w->req_count[slot]) slot++; /* callers check in_flight < streams: a slot is free */
  w->req_first[slot] = first;
  w->req_count[slot] = count;
  w->in_flight++;
  fprintf(w->proc.in, "infer %lld %d\n", (long long)first, count);
  fflush(w->proc.in);
}

/* The slot of w's request answered as id, or -1 when it sent none such. */
static int answered(nnp_load_worker *w, int64_t id) {
  for (int s = 0; s < NNP_LOAD_MAX_STREAMS; s++)
    if (w->req_count[s] && w->req_first[s] == id) return s;
  return -1;
}

static int pool_in_flight(const nnp_load_pool *p) {
  int n = 0;
  for (int k = 0; k < p->n; k++) n += p->w[k].in_flight;
  return n;
}

nnp_status nnp_load_pool_run(nnp_load_pool *p, nnp_load_run *run, double *latency, nnp_load_summary *out) {
  int64_t n = run->n, next = 0, arrived = 0, done = 0;
  int max_batch = run->max_batch > 0 ? run->max_batch : 1;
  for (int64_t i = 0; i < n; i++) latency[i] = -1;
  double t0 = nnp_now(), last_done = t0;
  double issue_end = run->closed ? (run->duration_s > 0 ? run->duration_s : 1e30) : (n ? run->arrival[n - 1] : 0);
  double deadline = run->closed && run->duration_s <= 0 ? 1e30 : issue_end + run->drain_s;
  nnp_status st = NNP_OK;
  events ev;
  while (done < n && st == NNP_OK) {
    double now = nnp_now() - t0;
    if (now > deadline) break;
    if (nnp_bench_interrupted) {
      st = nnp_error(NNP_ERR_INTERNAL, "interrupted by the user");
      break;
    }
    if (!run->closed)
      while (arrived < n && run->arrival[arrived] <= now) arrived++;
    /* the oldest waiting query goes to the worker with the fewest requests in flight that
     * has a free stream (idle workers first: a second stream of a busy worker shares its
     * CPU); a closed loop has one query in flight, the next arrives when it completes */
    for (;;) {
      nnp_load_worker *w = NULL;
      for (int k = 0; k < p->n; k++)
        if (p->w[k].in_flight < (run->closed ? 1 : p->w[k].streams) && (!w || p->w[k].in_flight < w->in_flight))
          w = &p->w[k];
      if (!w) break;
      if (run->closed) {
        if (next >= n || now > issue_end || pool_in_flight(p)) break;
        run->arrival[next] = now;
        arrived = next + 1;
      }
      if (next >= arrived) break;
      int64_t cnt = arrived - next < max_batch ? arrived - next : max_batch;
      send_request(w, next, (int)cnt);
      next += cnt;
    }
    double wait = deadline - now;
    if (!run->closed && arrived < n && run->arrival[arrived] - now < wait) wait = run->arrival[arrived] - now;
    if (run->closed && wait > 0.2) wait = 0.2;
    if (run->closed && !pool_in_flight(p) && (next >= n || now > issue_end)) break;
    memset(&ev, 0, sizeof ev);
    st = pump(p, wait, &ev);
    for (int e = 0; e < ev.n_done && st == NNP_OK; e++) {
      nnp_load_worker *w = &p->w[ev.done_worker[e]];
      int slot = answered(w, ev.done_id[e]);
      if (slot < 0) {
        st = worker_failed(p, ev.done_worker[e], "answered a request it was not sent");
        break;
      }
      for (int64_t i = w->req_first[slot]; i < w->req_first[slot] + w->req_count[slot]; i++)
        latency[i] = ev.done_t[e] - (t0 + run->arrival[i]);
      done += w->req_count[slot];
      if (ev.done_t[e] > last_done) last_done = ev.done_t[e];
      w->req_count[slot] = 0;
      w->in_flight--;
    }
  }
  /* requests still in flight at the deadline: their answers must not leak into the next run */
  double limit = nnp_now() + p->timeout_s;
  for (;;) {
    if (!pool_in_flight(p) || st != NNP_OK) break;
    if (nnp_now() > limit) {
      st = nnp_error(NNP_ERR_INTERNAL, "workers did not finish their requests within %.0f s", p->timeout_s);
      break;
    }
    memset(&ev, 0, sizeof ev);
    st = pump(p, 0.2, &ev);
    for (int e = 0; e < ev.n_done; e++) {
      nnp_load_worker *w = &p->w[ev.done_worker[e]];
      int slot = answered(w, ev.done_id[e]);
      if (slot >= 0) {
        w->req_count[slot] = 0;
        w->in_flight--;
      }
    }
  }
  if (st != NNP_OK) return st;
  int64_t issued = run->closed ? next : n;
  double offered = issued > 0 && run->arrival[issued - 1] > 0 ? (double)issued / run->arrival[issued - 1] : 0;
  if (nnp_load_summarise(latency, issued, run->bound_s, last_done - t0, offered, out))
    return nnp_error(NNP_ERR_NOMEM, "out of memory summarising latencies");
  return NNP_OK;
}

void nnp_load_pool_stop(nnp_load_pool *p) {
  for (int k = 0; k < p->n; k++) {
    nnp_load_worker *w = &p->w[k];
    if (w->proc.in) {
      fputs("quit\n", w->proc.in);
      fclose(w->proc.in);
      w->proc.in = NULL;
    }
  }
  for (int k = 0; k < p->n; k++) {
    nnp_load_worker *w = &p->w[k];
    if (w->proc.pid > 0) {
      /* a worker that quit exits at once; give it a moment, then end its group */
      double until = nnp_now() + 2;
      int status;
      while (waitpid(w->proc.pid, &status, WNOHANG) == 0 && nnp_now() < until) usleep(2000);
      kill(-w->proc.pid, SIGKILL);
      waitpid(w->proc.pid, &status, WNOHANG);
    }
    if (w->proc.out_fd > 0) close(w->proc.out_fd);
    if (w->proc.err_fd > 0) close(w->proc.err_fd);
    nnp_proto_reader_free(&w->rd);
    memset(w, 0, sizeof *w);
  }
  p->n = 0;
}
