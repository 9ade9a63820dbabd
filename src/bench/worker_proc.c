/* A worker process's life from the parent's side (worker_proc.h). */
#define _GNU_SOURCE /* sched_setaffinity, CPU_SET */
#include "bench/worker_proc.h"

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/timing_loop.h"
#include "util/procfs.h"

volatile sig_atomic_t nnp_bench_interrupted;

/* In the child, between fork and exec: only async-signal-safe calls matter here. */
static void become_worker(const nnp_worker_cmd *cmd, pid_t parent, const int in[2], const int out[2],
                          const int err[2]) {
  setpgid(0, 0);
  /* A parent killed with SIGKILL cannot kill its worker group: the kernel does it, so a
   * hung worker never outlives an interrupted sweep (and never competes with the
   * --resume that follows). getppid() catches a parent that died before prctl. */
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(127);
  if (cmd->pin_cpus > 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c = 0; c < cmd->pin_cpus; c++) CPU_SET(c, &set);
    sched_setaffinity(0, sizeof set, &set);
  }
  dup2(in[0], 0);
  dup2(out[1], 1);
  dup2(err[1], 2);
  for (int fd = 3; fd < 256; fd++) close(fd);
  if (cmd->pythonpath) setenv("PYTHONPATH", cmd->pythonpath, 1);
  execv(cmd->exe, (char *const *)cmd->argv);
  fprintf(stderr, "cannot run %s: %s\n", cmd->exe, strerror(errno));
  _exit(127);
}

nnp_status nnp_worker_start(const nnp_worker_cmd *cmd, nnp_worker_proc *p) {
  memset(p, 0, sizeof *p);
  int in[2], out[2], err[2];
  if (pipe(in)) return nnp_error(NNP_ERR_IO, "cannot create pipes for the worker: %s", strerror(errno));
  if (pipe(out) || pipe(err)) {
    int e = errno;
    close(in[0]), close(in[1]);
    return nnp_error(NNP_ERR_IO, "cannot create pipes for the worker: %s", strerror(e));
  }
  signal(SIGPIPE, SIG_IGN); /* a worker that dies early must not kill the parent */
  p->t_spawn = nnp_now();
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    for (int k = 0; k < 2; k++) close(in[k]), close(out[k]), close(err[k]);
    return nnp_error(NNP_ERR_IO, "cannot start a worker process: %s", strerror(e));
  }
  if (pid == 0) become_worker(cmd, parent, in, out, err);
  setpgid(pid, pid);
  close(in[0]);
  close(out[1]);
  close(err[1]);
  p->pid = pid;
  p->out_fd = out[0];
  p->err_fd = err[0];
  p->in = fdopen(in[1], "w");
  if (!p->in) close(in[1]); /* the worker sees EOF: its failure shows in its outcome */
  return NNP_OK;
}

void nnp_worker_tail_append(char *tail, size_t cap, const char *buf, size_t n) {
  size_t keep = cap - 1, len = strlen(tail);
  if (n >= keep) {
    memcpy(tail, buf + n - keep, keep);
    tail[keep] = 0;
    return;
  }
  if (len + n > keep) {
    size_t drop = len + n - keep;
    memmove(tail, tail + drop, len - drop);
    len -= drop;
  }
  memcpy(tail + len, buf, n);
  tail[len + n] = 0;
}

void nnp_worker_last_line(const char *tail, char *out, size_t n) {
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

/* Why the pump must stop now, or -1 to go on. The memory limit is enforced here, on the
 * resident set: RLIMIT_AS in the worker cannot work under AddressSanitizer (its shadow
 * reserves terabytes), and RSS is what a user's machine runs out of. */
static int must_stop(const nnp_worker_proc *p, double left, int64_t mem_limit, nnp_worker_exit *out) {
  if (left <= 0) return NNP_WORKER_TIMED_OUT;
  if (nnp_bench_interrupted) return NNP_WORKER_INTERRUPTED;
  if (mem_limit > 0) {
    int64_t rss = nnp_proc_status_bytes(p->pid, "VmRSS");
    if (rss > out->rss_seen) out->rss_seen = rss;
    if (rss > mem_limit) return NNP_WORKER_OVER_MEMORY;
  }
  return -1;
}

/* Reads what is ready on fds[k]; closes it at EOF. Returns false once it is closed. */
static bool read_one(struct pollfd *fd, int k, nnp_worker_feed_fn feed, void *ud, nnp_worker_exit *out) {
  char buf[65536];
  ssize_t got = read(fd->fd, buf, sizeof buf);
  if (got < 0 && errno == EINTR) return true;
  if (got <= 0) {
    close(fd->fd);
    fd->fd = -1;
    return false;
  }
  if (k == 1) nnp_worker_tail_append(out->stderr_tail, sizeof out->stderr_tail, buf, (size_t)got);
  else if (!out->feed_failed && !feed(ud, buf, (size_t)got)) out->feed_failed = true;
  return true;
}

static void pump(nnp_worker_proc *p, double timeout_s, int64_t mem_limit, nnp_worker_feed_fn feed, void *ud,
                 nnp_worker_exit *out) {
  struct pollfd fds[2] = {{p->out_fd, POLLIN, 0}, {p->err_fd, POLLIN, 0}};
  int open_fds = 2;
  out->end = NNP_WORKER_EXITED;
  while (open_fds > 0) {
    double left = p->t_spawn + timeout_s - nnp_now();
    int stop = must_stop(p, left, mem_limit, out);
    if (stop >= 0) {
      out->end = (nnp_worker_end)stop;
      break;
    }
    int slice = mem_limit > 0 ? 50 : 200; /* ms between checks of the limits */
    int pr = poll(fds, 2, left > slice / 1000.0 ? slice : (int)(left * 1000) + 1);
    if (pr < 0 && errno != EINTR) break;
    for (int k = 0; k < 2; k++)
      if (fds[k].fd >= 0 && (fds[k].revents & (POLLIN | POLLHUP | POLLERR)) && !read_one(&fds[k], k, feed, ud, out))
        open_fds--;
  }
  for (int k = 0; k < 2; k++)
    if (fds[k].fd >= 0) close(fds[k].fd);
  p->out_fd = p->err_fd = -1;
}

void nnp_worker_wait(nnp_worker_proc *p, double timeout_s, int64_t mem_limit, nnp_worker_feed_fn feed, void *ud,
                     nnp_worker_exit *out) {
  memset(out, 0, sizeof *out);
  out->exit_status = -1;
  pump(p, timeout_s, mem_limit, feed, ud, out);
  if (out->end != NNP_WORKER_EXITED || out->feed_failed) kill(-p->pid, SIGKILL);
  int wstatus = 0;
  struct rusage ru;
  memset(&ru, 0, sizeof ru);
  while (wait4(p->pid, &wstatus, 0, &ru) < 0 && errno == EINTR) {
  }
  kill(-p->pid, SIGKILL); /* anything the worker left behind in its group */
  out->peak_rss_bytes = (int64_t)ru.ru_maxrss * 1024;
  out->ru = ru;
  if (WIFEXITED(wstatus)) out->exit_status = WEXITSTATUS(wstatus);
  if (WIFSIGNALED(wstatus)) out->term_signal = WTERMSIG(wstatus);
}
