/* A model argument as a file a worker process can open: "zoo:NAME" is built and written
 * to a fresh temporary folder, anything else is taken as a path. bench, load and
 * coldstart all hand workers a path, so they share this step. */
#ifndef NNP_ZOO_FILE_H
#define NNP_ZOO_FILE_H

#include <stddef.h>

#include "nnperf/status.h"

/* Fills path (capacity n). For zoo:NAME also creates /tmp/nnperf-TAG-XXXXXX into tmpdir
 * (capacity tn) and writes NAME.onnx there; otherwise tmpdir is "". On error nothing is
 * left on disk and tmpdir is "". */
nnp_status nnp_zoo_model_file(const char *model, const char *tag, char *path, size_t n, char *tmpdir, size_t tn);

/* Removes what nnp_zoo_model_file wrote (nothing for a plain path) and clears tmpdir. */
void nnp_zoo_model_file_remove(const char *path, char *tmpdir);

#endif
