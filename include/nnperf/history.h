/* Run history: every `nnperf bench`, `load` and `coldstart` result stored in a SQLite database, so that runs can
 * be listed, exported again as result JSON and compared with later ones. */
#ifndef NNPERF_HISTORY_H
#define NNPERF_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nnperf/bench.h"
#include "nnperf/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nnp_history nnp_history;

/* $NNPERF_HISTORY if set, else $XDG_DATA_HOME/nnperf/history.db, else
 * ~/.local/share/nnperf/history.db. NNP_ERR_INVALID when none can be formed. */
nnp_status nnp_history_default_path(char *out, size_t n);

/* Opens (creating the file, its folder and the schema when missing) the database at
 * path. Other processes may use it at the same time (busy waits up to 10 s). */
nnp_status nnp_history_open(const char *path, nnp_history **out);
void nnp_history_close(nnp_history *h);

/* Stores r (environment, every row with its summary, raw samples per process, and the
 * full result JSON) in one transaction: either all of it is stored or nothing. */
nnp_status nnp_history_add(nnp_history *h, const nnp_bench_result *r, int64_t *id);

typedef struct nnp_history_entry {
  int64_t id;
  char timestamp[32]; /* env.timestamp of the run, UTC */
  char model[512];
  char command_line[1024];
  int n_rows, n_ok;
  bool noisy;
  char kind[16];      /* bench, load or coldstart */
} nnp_history_entry;

/* Calls fn for every run, oldest first; fn returning non-zero stops the listing. */
nnp_status nnp_history_list(nnp_history *h, int (*fn)(void *ud, const nnp_history_entry *e), void *ud);

/* The run with this id, as the result it was stored from. NNP_ERR_INVALID when there is
 * no such run. */
nnp_status nnp_history_load(nnp_history *h, int64_t id, nnp_bench_result *out);

/* The stored result JSON of run id (exactly what nnperf bench wrote), malloc'd into
 * *json (free with nnp_free). */
nnp_status nnp_history_export_json(nnp_history *h, int64_t id, char **json, size_t *len);

#ifdef __cplusplus
}
#endif
#endif
