/* Slurm through its client commands (sbatch, squeue, sacct, scancel): see slurm.h. */
#define _GNU_SOURCE
#include "cluster/slurm.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int on_path(const char *name) {
  const char *path = getenv("PATH");
  char buf[4096];
  snprintf(buf, sizeof buf, "%s", path ? path : "/usr/bin:/bin");
  for (char *dir = strtok(buf, ":"); dir; dir = strtok(NULL, ":")) {
    char full[4608];
    snprintf(full, sizeof full, "%s/%s", dir, name);
    if (access(full, X_OK) == 0) return 1;
  }
  return 0;
}

nnp_status nnp_slurm_available(void) {
  const char *tools[] = {"sbatch", "squeue", "scancel"};
  for (int i = 0; i < 3; i++)
    if (!on_path(tools[i]))
      return nnp_error(NNP_ERR_UNSUPPORTED,
                       "Slurm is not available: %s not found on PATH (Slurm's client commands; Debian: slurm-client)",
                       tools[i]);
  return NNP_OK;
}

int nnp_slurm_command(char *const argv[], char *out, size_t n) {
  int fd[2];
  out[0] = 0;
  if (pipe(fd) != 0) return -1;
  pid_t pid = fork();
  if (pid < 0) {
    close(fd[0]);
    close(fd[1]);
    return -1;
  }
  if (pid == 0) {
    dup2(fd[1], 1);
    dup2(fd[1], 2);
    close(fd[0]);
    close(fd[1]);
    execvp(argv[0], argv);
    fprintf(stderr, "cannot run %s: %s", argv[0], strerror(errno));
    _exit(127);
  }
  close(fd[1]);
  size_t used = 0;
  char sink[512];
  for (;;) { /* read everything (a full pipe would block the child), keep what fits */
    ssize_t r = used + 1 < n ? read(fd[0], out + used, n - 1 - used) : read(fd[0], sink, sizeof sink);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    if (used + 1 < n) used += (size_t)r;
  }
  close(fd[0]);
  out[used] = 0;
  while (used && (out[used - 1] == '\n' || out[used - 1] == ' ')) out[--used] = 0;
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

nnp_status nnp_slurm_submit(const char *const *options, int n_options, const char *script, int test_only,
                            const char *what, char *job_id, size_t n) {
  char *argv[48];
  int k = 0;
  argv[k++] = "sbatch";
  argv[k++] = test_only ? "--test-only" : "--parsable";
  for (int i = 0; i < n_options && k < 46; i++) argv[k++] = (char *)options[i];
  argv[k++] = script ? (char *)script : "--wrap=true"; /* --test-only needs no script file */
  argv[k] = NULL;
  char out[2048];
  int rc = nnp_slurm_command(argv, out, sizeof out);
  if (rc != 0) {
    for (char *c = out; *c; c++) if (*c == '\n') *c = ' '; /* one line */
    return nnp_error(NNP_ERR_INVALID, "%s: sbatch refused it: %s", what, out[0] ? out : "(no message)");
  }
  if (!test_only) snprintf(job_id, n, "%.*s", (int)strcspn(out, ";\n"), out);
  return NNP_OK;
}

int nnp_slurm_state_final(const char *s) {
  return strcmp(s, "PENDING") && strcmp(s, "RUNNING") && strcmp(s, "CONFIGURING") && strcmp(s, "COMPLETING") &&
         strcmp(s, "SUSPENDED") && strcmp(s, "REQUEUED") && strcmp(s, "RESIZING") && strcmp(s, "UNKNOWN");
}

/* Lines "id|state|node|reason" into the matching entries of out. */
static void take_lines(char *text, const char *const *ids, int n, nnp_slurm_job_state *out) {
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
    char *f[4] = {line, "", "", ""};
    for (int k = 1; k < 4; k++) {
      char *bar = strchr(f[k - 1], '|');
      if (!bar) break;
      *bar = 0;
      f[k] = bar + 1;
    }
    for (int i = 0; i < n; i++)
      if (!strcmp(ids[i], f[0]) && !strcmp(out[i].state, "UNKNOWN")) {
        snprintf(out[i].state, sizeof out[i].state, "%.*s", (int)strcspn(f[1], " "), f[1]); /* "CANCELLED by 0" */
        snprintf(out[i].node, sizeof out[i].node, "%s", f[2]);
        snprintf(out[i].reason, sizeof out[i].reason, "%s", f[3]);
      }
  }
}

void nnp_slurm_job_states(const char *const *ids, int n, nnp_slurm_job_state *out) {
  char list[4096] = "";
  size_t used = 0;
  for (int i = 0; i < n; i++) {
    memset(&out[i], 0, sizeof out[i]);
    snprintf(out[i].state, sizeof out[i].state, "UNKNOWN");
    used += (size_t)snprintf(list + used, used < sizeof list ? sizeof list - used : 0, "%s%s", i ? "," : "", ids[i]);
  }
  if (!n || used >= sizeof list) return;
  static char text[1 << 16];
  char *sq[] = {"squeue", "-h", "--states=all", "-o", "%i|%T|%N|%r", "-j", list, NULL};
  if (nnp_slurm_command(sq, text, sizeof text) == 0) take_lines(text, ids, n, out);
  int missing = 0;
  for (int i = 0; i < n; i++) missing |= !strcmp(out[i].state, "UNKNOWN");
  char *sa[] = {"sacct", "-n", "-P", "-X", "-o", "JobID,State,NodeList,Reason", "-j", list, NULL};
  if (missing && nnp_slurm_command(sa, text, sizeof text) == 0) take_lines(text, ids, n, out);
}
