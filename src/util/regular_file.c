/* Reading files that must be regular files (see regular_file.h). */
#include "util/regular_file.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nnperf/alloc.h"

FILE *nnp_open_regular(const char *path, nnp_status *err, int *not_regular) {
  if (not_regular) *not_regular = 0;
  /* O_NONBLOCK: opening a FIFO must not wait for a writer; then refuse anything that is
   * not a regular file (FIFO, device, folder) before reading a byte. */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    *err = nnp_error(NNP_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
    return NULL;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    if (not_regular) *not_regular = 1;
    *err = nnp_error(NNP_ERR_IO, "'%s' is not a regular file", path);
    return NULL;
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  FILE *f = fdopen(fd, "rb");
  if (!f) {
    close(fd);
    *err = nnp_error(NNP_ERR_NOMEM, "cannot open '%s': %s", path, strerror(errno));
  }
  return f;
}

nnp_status nnp_read_file(const char *path, size_t max_bytes, void **data, size_t *size) {
  nnp_status err = NNP_OK;
  FILE *f = nnp_open_regular(path, &err, NULL);
  if (!f) return err;
  struct stat st;
  fstat(fileno(f), &st);
  if ((unsigned long long)st.st_size > max_bytes) {
    fclose(f);
    return nnp_error(NNP_ERR_LIMIT, "'%s' is %lld bytes, over the %zu-byte limit", path,
                     (long long)st.st_size, max_bytes);
  }
  size_t n = (size_t)st.st_size;
  void *buf = nnp_malloc(n);
  if (!buf) {
    fclose(f);
    return nnp_error(NNP_ERR_NOMEM, "cannot allocate %zu bytes to read '%s'", n, path);
  }
  if (n && fread(buf, 1, n, f) != n) {
    fclose(f);
    nnp_free(buf);
    return nnp_error(NNP_ERR_IO, "short read on '%s'", path);
  }
  fclose(f);
  *data = buf;
  *size = n;
  return NNP_OK;
}
