/* One worker process, as every kind of row runs it (a bench row, a load-test instance, an
 * LLM row): in its own process group, killed by the kernel with its parent
 * (PR_SET_PDEATHSIG), optionally pinned, its stdin, stdout and stderr on pipes. The parent
 * pumps its stdout into the caller's parser and keeps the tail of its stderr, under a
 * wall-clock limit, a resident-memory limit and the sweep's interrupt flag; whatever ends
 * it is told apart (exit, time, memory, interrupt) so the caller can name the row's
 * status. One path, so every kind of row runs under the same isolation. */
#ifndef NNP_BENCH_WORKER_PROC_H
#define NNP_BENCH_WORKER_PROC_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <stdio.h>

#include "nnperf/status.h"

#define NNP_WORKER_STDERR_TAIL 2048 /* bytes of a worker's stderr kept for its failure message */

/* Set by a SIGINT/SIGTERM handler: the current worker is killed and the row marked. */
extern volatile sig_atomic_t nnp_bench_interrupted;

/* What to run. */
typedef struct nnp_worker_cmd {
  const char *exe;          /* the program execv runs */
  const char *const *argv;  /* its argv, NULL-terminated */
  const char *pythonpath;   /* PYTHONPATH for a Python worker, or NULL */
  int pin_cpus;             /* > 0: pin the worker to CPUs 0..pin_cpus-1 */
} nnp_worker_cmd;

/* A started worker process. in is the worker's stdin (the caller writes its spec, then
 * closes it, or keeps it for requests in serve mode); NULL if it could not be opened. */
typedef struct nnp_worker_proc {
  int pid;
  FILE *in;
  int out_fd, err_fd;
  double t_spawn; /* CLOCK_MONOTONIC seconds just before fork */
} nnp_worker_proc;

/* Forks and execs cmd into *p. A worker that cannot exec exits with status 127 and says
 * why on its stderr. Errors only when no process could be started (pipes, fork). */
nnp_status nnp_worker_start(const nnp_worker_cmd *cmd, nnp_worker_proc *p);

/* Gets each chunk of the worker's stdout; returns false on a protocol error, after which
 * the rest of its stdout is drained unread and the worker is killed at the end. */
typedef bool (*nnp_worker_feed_fn)(void *ud, const char *buf, size_t n);

typedef enum nnp_worker_end {
  NNP_WORKER_EXITED,      /* stdout and stderr closed: it finished or died by itself */
  NNP_WORKER_TIMED_OUT,   /* timeout_s after the spawn */
  NNP_WORKER_OVER_MEMORY, /* resident set above mem_limit */
  NNP_WORKER_INTERRUPTED, /* nnp_bench_interrupted */
} nnp_worker_end;

typedef struct nnp_worker_exit {
  nnp_worker_end end;
  bool feed_failed;        /* feed returned false */
  int exit_status;         /* -1 unless it exited */
  int term_signal;         /* 0 unless a signal ended it */
  int64_t peak_rss_bytes;  /* ru_maxrss of the reaped worker */
  int64_t rss_seen;        /* the largest VmRSS polled while mem_limit was set */
  struct rusage ru;        /* of the reaped worker: its CPU time (cpu_share.c) */
  char stderr_tail[NNP_WORKER_STDERR_TAIL + 1];
} nnp_worker_exit;

/* Pumps p (stdout to feed, stderr to the tail) until both close, timeout_s after the
 * spawn, its resident set passes mem_limit (bytes, polled every 50 ms; 0: none) or the
 * interrupt flag is set; kills its process group unless it ended by itself with feed
 * content, reaps it, closes p's descriptors (not p->in) and fills *out. */
void nnp_worker_wait(nnp_worker_proc *p, double timeout_s, int64_t mem_limit, nnp_worker_feed_fn feed, void *ud,
                     nnp_worker_exit *out);

/* Appends buf[0..n) to the NUL-terminated tail (cap bytes with its terminator), keeping
 * the end. */
void nnp_worker_tail_append(char *tail, size_t cap, const char *buf, size_t n);

/* The most telling line of a dead worker's stderr: a sanitizer's verdict if there is one
 * (it exits with status 1 instead of dying from the signal), else the last line. */
void nnp_worker_last_line(const char *tail, char *out, size_t n);

#endif
