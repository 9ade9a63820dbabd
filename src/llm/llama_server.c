/* Starting, watching and stopping llama-server (see llama_server.h). */
#include "llm/llama_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "llm/llm_client.h"
#include "nnperf/alloc.h"

volatile pid_t nnp_llama_server_running_pid = 0;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int nnp_llama_server_find(const char *binary, char *out, size_t cap) {
  const char *env = getenv("NNP_LLAMA_SERVER"), *cache = getenv("NNP_CACHE"), *home = getenv("HOME");
  if (binary && *binary) snprintf(out, cap, "%s", binary);
  else if (env && *env) snprintf(out, cap, "%s", env);
  else if (cache && *cache) snprintf(out, cap, "%s/llama-0.3.36/bin/llama-server", cache);
  else snprintf(out, cap, "%s/.cache/nnperf/llama-0.3.36/bin/llama-server", home ? home : "");
  return access(out, X_OK) == 0;
}

/* A loopback port nobody listens on now (the kernel's pick; the server binds it a moment
 * later, and a lost race shows as the server failing to start with its log). */
static int free_port(void) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  int port = -1;
  if (bind(fd, (struct sockaddr *)&a, sizeof a) == 0 && getsockname(fd, (struct sockaddr *)&a, &len) == 0)
    port = ntohs(a.sin_port);
  close(fd);
  return port;
}

#define MAX_ARGS 40

static int build_argv(const nnp_llama_server_opts *o, nnp_llama_server *s, char nums[6][24], char **argv) {
  int n = 0, ctx = o->ctx_per_slot * (o->parallel > 0 ? o->parallel : 1);
  snprintf(nums[0], 24, "%d", s->port);
  snprintf(nums[1], 24, "%d", o->threads > 0 ? o->threads : 2);
  snprintf(nums[2], 24, "%d", o->parallel > 0 ? o->parallel : 1);
  snprintf(nums[3], 24, "%d", ctx < 256 ? 256 : ctx);
  const char *fixed[] = {s->binary, "-m", o->model, "--host", "127.0.0.1", "--port", nums[0], "-t", nums[1], "-tb",
                         nums[1], "--parallel", nums[2], "-c", nums[3],
                         /* chosen by --repack (llm_repack.h): off where ggml's AMX path can crash */
                         o->repack ? "--repack" : "--no-repack", "--metrics", "--no-webui", o->cont_batching ? "--cont-batching" : "--no-cont-batching"};
  for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) argv[n++] = (char *)fixed[i];
  if (o->kv_type && *o->kv_type) {
    const char *kv[] = {"-ctk", o->kv_type, "-ctv", o->kv_type, "-fa", "on"};
    for (int i = 0; i < 6; i++) argv[n++] = (char *)kv[i];
  }
  argv[n] = NULL;
  size_t l = 0;
  s->args[0] = '\0';
  for (int i = 1; i < n && l + 2 < sizeof s->args; i++)
    l += (size_t)snprintf(s->args + l, sizeof s->args - l, "%s%s", i > 1 ? " " : "", argv[i]);
  return n;
}

static void child_exec(char **argv, int log_fd, pid_t parent) {
  prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive nnperf */
  if (getppid() != parent) _exit(127);
  setpgid(0, 0);                    /* Ctrl-C reaches nnperf, which stops the server itself */
  int devnull = open("/dev/null", O_RDONLY);
  if (devnull >= 0) dup2(devnull, 0);
  dup2(log_fd, 1);
  dup2(log_fd, 2);
  execv(argv[0], argv);
  dprintf(2, "exec %s: %s\n", argv[0], strerror(errno));
  _exit(127);
}

/* The last line of the server's log that says something (why it did not come up). */
static void log_tail(const char *path, char *out, size_t cap) {
  out[0] = '\0';
  FILE *f = fopen(path, "r");
  if (!f) return;
  char line[400];
  while (fgets(line, sizeof line, f)) {
    size_t n = strlen(line);
    while (n && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = '\0';
    if (n && (strstr(line, "error") || strstr(line, "failed") || strstr(line, "exec ") || !out[0]))
      snprintf(out, cap, "%s", line);
  }
  fclose(f);
}

static nnp_status wait_ready(nnp_llama_server *s, double timeout_s) {
  double give_up = s->t_spawn + timeout_s;
  while (now_s() < give_up) {
    int status;
    if (waitpid(s->pid, &status, WNOHANG) == s->pid) {
      s->pid = 0;
      nnp_llama_server_running_pid = 0;
      char why[300];
      log_tail(s->log_path, why, sizeof why);
      return nnp_error(NNP_ERR_IO, "llama-server exited (%s %d) before it was ready; its log %s says: %s",
                       WIFEXITED(status) ? "status" : "signal", WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
                       s->log_path, why);
    }
    if (nnp_llm_interrupted) return nnp_error(NNP_ERR_IO, "interrupted while llama-server was loading");
    long code = 0;
    char *body = NULL;
    if (nnp_llm_http_get(s->url, "/health", NULL, 1.0, 4096, &code, &body) == NNP_OK && code == 200) {
      nnp_free(body);
      s->t_ready = now_s();
      return NNP_OK;
    }
    nnp_free(body);
    nnp_clear_error();
    usleep(50 * 1000);
  }
  return nnp_error(NNP_ERR_IO, "llama-server did not answer /health with 200 within %g s (log: %s)", timeout_s,
                   s->log_path);
}

nnp_status nnp_llama_server_start(const nnp_llama_server_opts *o, nnp_llama_server *s) {
  memset(s, 0, sizeof *s);
  if (!nnp_llama_server_find(o->binary, s->binary, sizeof s->binary))
    return nnp_error(NNP_ERR_UNSUPPORTED,
                     "llama-server not found at %s: build it once per machine with scripts/install-llm.sh "
                     "(or give --server-bin / NNP_LLAMA_SERVER)", s->binary);
  if (access(o->model, R_OK) != 0) return nnp_error(NNP_ERR_IO, "model '%s': %s", o->model, strerror(errno));
  if ((s->port = free_port()) <= 0) return nnp_error(NNP_ERR_IO, "no free loopback port: %s", strerror(errno));
  snprintf(s->url, sizeof s->url, "http://127.0.0.1:%d", s->port);
  snprintf(s->log_path, sizeof s->log_path, "/tmp/nnperf-llama-server-XXXXXX");
  int log_fd = mkstemp(s->log_path);
  if (log_fd < 0) return nnp_error(NNP_ERR_IO, "llama-server log file: %s", strerror(errno));
  char nums[6][24], *argv[MAX_ARGS];
  build_argv(o, s, nums, argv);
  pid_t parent = getpid();
  s->t_spawn = now_s();
  pid_t pid = fork();
  if (pid < 0) {
    close(log_fd);
    return nnp_error(NNP_ERR_IO, "fork for llama-server: %s", strerror(errno));
  }
  if (pid == 0) child_exec(argv, log_fd, parent);
  close(log_fd);
  s->pid = pid;
  nnp_llama_server_running_pid = pid;
  nnp_status st = wait_ready(s, o->ready_timeout_s > 0 ? o->ready_timeout_s : 120);
  if (st != NNP_OK) {
    /* the log the error names stays: no later stop of this server may remove it */
    s->log_path[0] = '\0';
    nnp_llama_server_stop(s);
  }
  return st;
}

void nnp_llama_server_stop(nnp_llama_server *s) {
  if (s->pid > 0) {
    kill(s->pid, SIGTERM);
    int status;
    for (int i = 0; i < 100; i++) {
      if (waitpid(s->pid, &status, WNOHANG) == s->pid) goto gone;
      usleep(50 * 1000);
    }
    kill(s->pid, SIGKILL);
    waitpid(s->pid, &status, 0);
  gone:
    s->pid = 0;
    nnp_llama_server_running_pid = 0;
  }
  if (s->log_path[0]) unlink(s->log_path);
  s->log_path[0] = '\0';
}
