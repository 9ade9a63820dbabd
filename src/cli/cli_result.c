/* Loading a result for report/compare: from a file, or from the run history. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/cli_result.h"
#include "nnperf/history.h"
#include "nnperf/result_load.h"

int cli_history_id(const char *spec, long long *id) {
  if (!strncmp(spec, "history:", 8)) spec += 8;
  else if (*spec == '@') spec++;
  char *end;
  errno = 0;
  long long v = strtoll(spec, &end, 10);
  if (errno || end == spec || *end || v < 1) return 0;
  *id = v;
  return 1;
}

nnp_status cli_load_result(const char *spec, const char *history_path, nnp_bench_result *out) {
  long long id;
  if (access(spec, F_OK) == 0 || !cli_history_id(spec, &id)) return nnp_result_load_file(spec, out);
  char path[1024];
  if (history_path) snprintf(path, sizeof path, "%s", history_path);
  else NNP_TRY(nnp_history_default_path(path, sizeof path));
  if (access(path, F_OK) != 0)
    return nnp_error(NNP_ERR_IO, "'%s' is neither a result file nor a run of the history '%s' (no such database)", spec,
                     path);
  nnp_history *h;
  NNP_TRY(nnp_history_open(path, &h));
  nnp_status s = nnp_history_load(h, id, out);
  nnp_history_close(h);
  return s;
}

void cli_store_history(const nnp_bench_result *r, const char *history_path, int quiet) {
  char hpath[1024];
  nnp_history *h = NULL;
  int64_t run_id = 0;
  if (history_path) snprintf(hpath, sizeof hpath, "%s", history_path);
  if ((history_path || nnp_history_default_path(hpath, sizeof hpath) == NNP_OK) && nnp_history_open(hpath, &h) == NNP_OK &&
      nnp_history_add(h, r, &run_id) == NNP_OK) {
    /* the table went to stdout first: flush it, or a redirected stdout (fully buffered)
     * gets this line spliced into the middle of the table when both go to one file */
    fflush(stdout);
    if (!quiet) fprintf(stderr, "nnperf: stored as history run %lld (%s)\n", (long long)run_id, hpath);
  } else {
    /* the measurement itself is fine: say so, keep the exit status */
    fprintf(stderr, "nnperf: warning: run not stored in the history: %s\n", nnp_last_error());
  }
  nnp_history_close(h);
}

int cli_asked_could_run(const nnp_bench_result *r, int explicit_backends, int rc) {
  int ok = 0, n = r->rows ? r->n_rows : 0;
  for (int i = 0; i < n; i++) {
    const nnp_bench_row *w = &r->rows[i];
    ok += w->status == NNP_ROW_OK;
    if (explicit_backends && w->status == NNP_ROW_UNAVAILABLE) /* asked for by name: said plainly */
      fprintf(stderr, "nnperf: '%s' was asked for but is unavailable here: %.300s\n", w->label, w->reason);
  }
  if (n > 0 && ok == 0 && rc == CLI_OK) {
    fprintf(stderr, "nnperf: error: none of the %d row%s asked for could run\n", n, n == 1 ? "" : "s");
    return CLI_FAIL;
  }
  return rc;
}
