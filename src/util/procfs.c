#include "util/procfs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int64_t nnp_proc_status_bytes(pid_t pid, const char *key) {
  char path[64], line[256];
  if (pid) snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
  else snprintf(path, sizeof path, "/proc/self/status");
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  size_t kl = strlen(key);
  long long kb = -1;
  while (fgets(line, sizeof line, f))
    if (!strncmp(line, key, kl) && line[kl] == ':') kb = atoll(line + kl + 1);
  fclose(f);
  return kb < 0 ? -1 : (int64_t)kb * 1024;
}
