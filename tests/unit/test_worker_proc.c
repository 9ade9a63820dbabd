/* The worker-process helper every row kind runs its workers through (bench/worker_proc.h):
 * real child processes (/bin/sh), each ending one way — exit, signal, time limit, memory
 * limit, a parser refusing its stdout, a program that does not exist — must be told apart,
 * with its stdout fed in order and the end of its stderr kept. */
#include <signal.h>
#include <string.h>

#include "bench/worker_proc.h"
#include "test.h"

typedef struct collected {
  char out[4096];
  size_t n;
  bool refuse; /* the parser says "protocol error" at the first chunk */
} collected;

static bool collect(void *ud, const char *buf, size_t n) {
  collected *c = ud;
  if (c->refuse) return false;
  if (c->n + n < sizeof c->out) {
    memcpy(c->out + c->n, buf, n);
    c->n += n;
    c->out[c->n] = 0;
  }
  return true;
}

/* Runs `sh -c script` with the limits; input goes to its stdin. */
static void run_sh(const char *script, const char *input, double timeout_s, int64_t mem_limit, collected *c,
                   nnp_worker_exit *x) {
  const char *argv[] = {"sh", "-c", script, NULL};
  nnp_worker_cmd cmd = {.exe = "/bin/sh", .argv = argv};
  nnp_worker_proc p;
  CHECK_OK(nnp_worker_start(&cmd, &p));
  CHECK(p.pid > 0 && p.in);
  if (p.in) {
    fputs(input, p.in);
    fclose(p.in);
  }
  nnp_worker_wait(&p, timeout_s, mem_limit, collect, c, x);
}

static void test_exit_and_streams(void) {
  collected c = {0};
  nnp_worker_exit x;
  run_sh("read a; echo \"got $a\"; echo oops >&2; echo last words >&2; exit 3", "spec\n", 20, 0, &c, &x);
  CHECK(x.end == NNP_WORKER_EXITED && !x.feed_failed);
  CHECK_MSG(x.exit_status == 3 && x.term_signal == 0, "exit %d signal %d", x.exit_status, x.term_signal);
  CHECK_MSG(!strcmp(c.out, "got spec\n"), "stdout '%s'", c.out);
  char line[128];
  nnp_worker_last_line(x.stderr_tail, line, sizeof line);
  CHECK_MSG(!strcmp(line, "last words"), "last line '%s'", line);
  CHECK(x.peak_rss_bytes > 0);
}

static void test_signal_and_timeout(void) {
  collected c = {0};
  nnp_worker_exit x;
  run_sh("kill -SEGV $$", "", 20, 0, &c, &x);
  CHECK_MSG(x.end == NNP_WORKER_EXITED && x.term_signal == SIGSEGV && x.exit_status == -1, "signal %d",
            x.term_signal);
  run_sh("sleep 30", "", 0.3, 0, &c, &x);
  CHECK(x.end == NNP_WORKER_TIMED_OUT && x.term_signal == SIGKILL);
}

static void test_memory_limit(void) {
  collected c = {0};
  nnp_worker_exit x;
  /* a shell string doubled to 256 MiB (well over the 32 MiB limit), then kept */
  run_sh("s=xxxxxxxxxxxxxxxx; i=0; while [ $i -lt 24 ]; do s=$s$s; i=$((i+1)); done; sleep 30", "", 60, 32 << 20, &c,
         &x);
  CHECK_MSG(x.end == NNP_WORKER_OVER_MEMORY && x.rss_seen > (32 << 20), "end %d rss %lld", (int)x.end,
            (long long)x.rss_seen);
}

static void test_refused_and_missing(void) {
  collected c = {.refuse = true};
  nnp_worker_exit x;
  run_sh("echo garbage; echo more; exit 0", "", 20, 0, &c, &x);
  CHECK_MSG(x.end == NNP_WORKER_EXITED && x.feed_failed && c.n == 0, "end %d fed %zu", (int)x.end, c.n);
  const char *argv[] = {"nope", NULL};
  nnp_worker_cmd cmd = {.exe = "/nonexistent/nnperf-worker", .argv = argv};
  nnp_worker_proc p;
  CHECK_OK(nnp_worker_start(&cmd, &p));
  if (p.in) fclose(p.in);
  collected d = {0};
  nnp_worker_wait(&p, 20, 0, collect, &d, &x);
  char line[256];
  nnp_worker_last_line(x.stderr_tail, line, sizeof line);
  CHECK_MSG(x.exit_status == 127 && strstr(line, "cannot run /nonexistent/nnperf-worker"), "%d '%s'", x.exit_status,
            line);
}

static void test_tail_and_last_line(void) {
  char tail[8] = "";
  nnp_worker_tail_append(tail, sizeof tail, "abc", 3);
  nnp_worker_tail_append(tail, sizeof tail, "defgh", 5);
  CHECK_MSG(!strcmp(tail, "bcdefgh"), "'%s'", tail); /* the end kept, 7 bytes + terminator */
  nnp_worker_tail_append(tail, sizeof tail, "0123456789", 10);
  CHECK_MSG(!strcmp(tail, "3456789"), "'%s'", tail);
  char line[128];
  nnp_worker_last_line("x\n==1==ERROR: AddressSanitizer: heap-use-after-free on 0x1\nmore\nlast\n", line,
                       sizeof line);
  CHECK_MSG(!strcmp(line, "ERROR: AddressSanitizer: heap-use-after-free on 0x1"), "'%s'", line);
  nnp_worker_last_line("a\nb  \n\n", line, sizeof line);
  CHECK_MSG(!strcmp(line, "b"), "'%s'", line);
}

int main(void) {
  test_exit_and_streams();
  test_signal_and_timeout();
  test_memory_limit();
  test_refused_and_missing();
  test_tail_and_last_line();
  TEST_MAIN_END();
}
