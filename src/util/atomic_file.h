/* Writing a file so that a reader (or a crash) sees either the previous complete file
 * or the new one, never half of either: a temporary file next to the target, flushed
 * and fsynced, renamed over it (rename within one folder is atomic), then the folder
 * fsynced so the rename itself is durable. */
#ifndef NNP_UTIL_ATOMIC_FILE_H
#define NNP_UTIL_ATOMIC_FILE_H

#include <stdio.h>

#include "nnperf/status.h"

typedef struct nnp_atomic_file {
  FILE *f;         /* write the content here */
  char path[4097];
  char tmp[4200];  /* "<dir>/.<name>.tmp.<pid>.<k>" */
} nnp_atomic_file;

/* Creates the temporary file exclusively (pid and a counter keep concurrent writers
 * apart; mode 0666 lets the umask decide the permissions, as for fopen). A path that
 * ends in '/' is NNP_ERR_INVALID. */
nnp_status nnp_atomic_open(nnp_atomic_file *af, const char *path);
/* Flushes, fsyncs, closes and renames; on any failure the temporary file is removed. */
nnp_status nnp_atomic_commit(nnp_atomic_file *af);
/* Gives up: closes and removes the temporary file. */
void nnp_atomic_abort(nnp_atomic_file *af);

#endif
