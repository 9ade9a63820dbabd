/* Opening input files that must be regular files: a FIFO would block the reader until
 * a writer appears, /dev/zero would feed it forever. Used by the ONNX loader and the
 * result JSON loader (report, compare, bench --resume). */
#ifndef NNP_UTIL_REGULAR_FILE_H
#define NNP_UTIL_REGULAR_FILE_H

#include <stddef.h>
#include <stdio.h>

#include "nnperf/status.h"

/* Opens path for reading without blocking on FIFOs, refusing anything that is not a
 * regular file (error in *err; *not_regular, if given, says which refusal it was). */
FILE *nnp_open_regular(const char *path, nnp_status *err, int *not_regular);

/* Reads a whole file into memory (nnp_malloc), refusing files over max_bytes. */
nnp_status nnp_read_file(const char *path, size_t max_bytes, void **data, size_t *size);

#endif
