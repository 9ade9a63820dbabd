/* Output-path check before measuring (see writable.h). */
#include "util/writable.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

nnp_status nnp_check_writable(const char *path) {
  if (!path || !path[0]) return nnp_error(NNP_ERR_INVALID, "no output path given");
  char dir[4096];
  if (snprintf(dir, sizeof dir, "%s", path) >= (int)sizeof dir)
    return nnp_error(NNP_ERR_LIMIT, "output path '%.64s...' is too long", path);
  char *slash = strrchr(dir, '/');
  if (slash && !slash[1]) return nnp_error(NNP_ERR_IO, "'%s' names a folder, not a file", path);
  struct stat st;
  if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) return nnp_error(NNP_ERR_IO, "'%s' is a folder, not a file", path);
  if (!slash) snprintf(dir, sizeof dir, ".");
  else if (slash == dir) dir[1] = 0;
  else *slash = 0;
  if (stat(dir, &st) != 0) return nnp_error(NNP_ERR_IO, "cannot write '%s': folder '%s': %s", path, dir, strerror(errno));
  if (!S_ISDIR(st.st_mode)) return nnp_error(NNP_ERR_IO, "cannot write '%s': '%s' is not a folder", path, dir);
  /* the writer creates a temporary file in dir and renames it over path; access() alone
   * says yes to root on a read-only or special folder (/proc), so create one and remove it */
  char probe[4200];
  snprintf(probe, sizeof probe, "%s/.nnperf-probe.%ld", dir, (long)getpid());
  int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0 && errno != EEXIST)
    return nnp_error(NNP_ERR_IO, "cannot write '%s': cannot create files in folder '%s': %s", path, dir, strerror(errno));
  if (fd >= 0) {
    close(fd);
    unlink(probe);
  }
  return NNP_OK;
}
