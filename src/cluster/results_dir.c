/* The sweep's shared results folder: see results_dir.h. */
#include "cluster/results_dir.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nnperf/alloc.h"
#include "nnperf/report.h"
#include "nnperf/result_load.h"
#include "nnperf/sweep.h"

static uint64_t fnv1a(const char *a, const char *b) {
  uint64_t h = 1469598103934665603ULL;
  for (const char *s = a; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
  h = (h ^ '|') * 1099511628211ULL;
  for (const char *s = b; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
  return h;
}

void nnp_results_group_id(const nnp_sweep_plan *plan, int g, char out[17]) {
  int n_shapes = plan->n_shapes ? plan->n_shapes : 1;
  const char *shape = plan->n_shapes ? plan->shapes[g % n_shapes] : "";
  snprintf(out, 17, "%016llx", (unsigned long long)fnv1a(plan->models[g / n_shapes], shape));
}

nnp_status nnp_results_mkdirs(const char *path) {
  char buf[4096];
  snprintf(buf, sizeof buf, "%s", path);
  for (char *p = buf + 1;; p++) {
    char c = *p;
    if (c != '/' && c) continue;
    *p = 0;
    if (mkdir(buf, 0777) != 0 && errno != EEXIST)
      return nnp_error(NNP_ERR_IO, "results folder %s: cannot create: %s", buf, strerror(errno));
    *p = c;
    if (!c) return NNP_OK;
  }
}

nnp_status nnp_results_write_row(const char *dir, const char *gid, const nnp_bench_result *res,
                                 const nnp_bench_row *row) {
  char key[NNP_SWEEP_KEY_MAX], folder[4096], path[4400];
  NNP_TRY(nnp_sweep_row_key(row, key, sizeof key));
  snprintf(folder, sizeof folder, "%s/rows/%s", dir, row->hw_class);
  NNP_TRY(nnp_results_mkdirs(folder));
  snprintf(path, sizeof path, "%s/%s-%016llx.json", folder, gid, (unsigned long long)fnv1a(res->model, key));
  nnp_bench_result one = *res; /* the run's header, this row only */
  one.rows = (nnp_bench_row *)row;
  one.n_rows = one.cap_rows = 1;
  one.load = NULL;
  one.coldstart = NULL;
  return nnp_report_write_json(&one, path);
}

/* Moves the rows of the document at path into *out. */
static nnp_status take_rows(const char *path, int ok_only, nnp_bench_result *out) {
  nnp_bench_result doc;
  NNP_TRY(nnp_result_load_file(path, &doc));
  if (!out->model[0]) {
    nnp_bench_row *rows = out->rows;
    int n = out->n_rows, cap = out->cap_rows;
    *out = doc;
    out->rows = rows, out->n_rows = n, out->cap_rows = cap;
    out->load = NULL, out->coldstart = NULL;
  }
  for (int i = 0; i < doc.n_rows; i++) {
    if (ok_only && doc.rows[i].status != NNP_ROW_OK) continue;
    if (out->n_rows == out->cap_rows) {
      int cap = out->cap_rows ? 2 * out->cap_rows : 16;
      nnp_bench_row *grown = nnp_realloc(out->rows, sizeof *grown * (size_t)cap);
      if (!grown) {
        nnp_bench_result_free(&doc);
        return nnp_error(NNP_ERR_NOMEM, "%s: no memory for its rows", path);
      }
      out->rows = grown, out->cap_rows = cap;
    }
    out->rows[out->n_rows++] = doc.rows[i];
    memset(&doc.rows[i], 0, sizeof doc.rows[i]);
  }
  nnp_bench_result_free(&doc);
  return NNP_OK;
}

nnp_status nnp_results_read(const char *dir, const char *hw_class, const char *gid, int ok_only,
                            nnp_bench_result *out) {
  char folder[4096];
  snprintf(folder, sizeof folder, "%s/rows/%s", dir, hw_class);
  DIR *d = opendir(folder);
  if (!d) return NNP_OK; /* nothing finished there yet */
  nnp_status st = NNP_OK;
  for (struct dirent *e; st == NNP_OK && (e = readdir(d));) {
    size_t len = strlen(e->d_name);
    if (len < 6 || strcmp(e->d_name + len - 5, ".json") || (gid && strncmp(e->d_name, gid, 16))) continue;
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", folder, e->d_name);
    st = take_rows(path, ok_only, out);
  }
  closedir(d);
  return st;
}

int nnp_results_any(const char *dir) {
  char folder[4096];
  snprintf(folder, sizeof folder, "%s/rows", dir);
  DIR *d = opendir(folder);
  if (!d) return 0;
  int any = 0;
  for (struct dirent *e; !any && (e = readdir(d));) any = e->d_name[0] != '.';
  closedir(d);
  return any;
}
