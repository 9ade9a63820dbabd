#include "util/atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

nnp_status nnp_atomic_open(nnp_atomic_file *af, const char *path) {
  static atomic_uint counter;
  memset(af, 0, sizeof *af);
  if (!path || !path[0]) return nnp_error(NNP_ERR_INVALID, "no output path given");
  if (strlen(path) >= sizeof af->path) return nnp_error(NNP_ERR_LIMIT, "output path '%.64s...' is too long", path);
  strcpy(af->path, path);
  const char *slash = strrchr(path, '/');
  const int dir_len = slash ? (int)(slash - path + 1) : 0;
  const char *base = path + dir_len;
  if (!base[0]) return nnp_error(NNP_ERR_INVALID, "output path '%s' names a directory, not a file", path);
  for (int attempt = 0; attempt < 100; attempt++) {
    unsigned k = atomic_fetch_add(&counter, 1);
    snprintf(af->tmp, sizeof af->tmp, "%.*s.%s.tmp.%ld.%u", dir_len, path, base, (long)getpid(), k);
    int fd = open(af->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      af->f = fdopen(fd, "wb");
      if (af->f) return NNP_OK;
      int e = errno;
      close(fd);
      unlink(af->tmp);
      return nnp_error(NNP_ERR_IO, "cannot open '%s': %s", af->tmp, strerror(e));
    }
    if (errno != EEXIST)
      return nnp_error(NNP_ERR_IO, "cannot create '%s' (temporary file for '%s'): %s", af->tmp, path,
                       strerror(errno));
  }
  return nnp_error(NNP_ERR_IO, "cannot create a temporary file next to '%s'", path);
}

void nnp_atomic_abort(nnp_atomic_file *af) {
  if (!af->f) return;
  fclose(af->f);
  af->f = NULL;
  unlink(af->tmp);
}

nnp_status nnp_atomic_commit(nnp_atomic_file *af) {
  int err = 0;
  errno = 0;
  if (ferror(af->f) || fflush(af->f) != 0) err = errno ? errno : EIO;
  if (!err && fsync(fileno(af->f)) != 0) err = errno;
  if (fclose(af->f) != 0 && !err) err = errno ? errno : EIO;
  af->f = NULL;
  if (!err && rename(af->tmp, af->path) != 0) err = errno;
  if (err) {
    unlink(af->tmp);
    return nnp_error(NNP_ERR_IO, "cannot write '%s': %s", af->path, strerror(err));
  }
  /* Some file systems refuse fsync on a folder; the file is complete, so that is not
   * an error worth failing for. */
  char dir[sizeof af->path];
  snprintf(dir, sizeof dir, "%s", af->path);
  char *slash = strrchr(dir, '/');
  if (!slash) snprintf(dir, sizeof dir, ".");
  else if (slash == dir) dir[1] = '\0';
  else *slash = '\0';
  int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    (void)fsync(dfd);
    close(dfd);
  }
  return NNP_OK;
}
