/* The sweep's shared results folder: see results_dir.h. */
#include "cluster/results_dir.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nnperf/alloc.h"
#include "nnperf/llm_bench.h"
#include "nnperf/result.h"
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
  const char *shape = nnp_plan_group_is_llm(plan, g) ? "llm" : plan->n_shapes ? plan->shapes[g % n_shapes] : "";
  snprintf(out, 17, "%016llx", (unsigned long long)fnv1a(nnp_plan_group_model(plan, g), shape));
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

/* An LLM row's one-row document: its section's row (the measurements) with the host. */
static nnp_status write_llm_row(const char *path, const nnp_bench_result *one, int index, const nnp_bench_row *row) {
  nnp_llm_row w = one->llm->rows[index]; /* shallow: its requests stay the run's */
  snprintf(w.hw_class, sizeof w.hw_class, "%s", row->hw_class);
  snprintf(w.node, sizeof w.node, "%s", row->node);
  snprintf(w.job_id, sizeof w.job_id, "%s", row->job_id);
  w.host_env = row->host_env;
  nnp_llm_result llm = *one->llm;
  llm.rows = &w;
  llm.n_rows = llm.cap_rows = 1;
  nnp_bench_result doc = *one;
  doc.llm = &llm;
  return nnp_result_write_file(&doc, path);
}

nnp_status nnp_results_write_row(const char *dir, const char *gid, const nnp_bench_result *res, int index,
                                 const nnp_results_host *host) {
  nnp_bench_row row = res->rows[index];
  snprintf(row.hw_class, sizeof row.hw_class, "%s", host->hw_class);
  snprintf(row.node, sizeof row.node, "%s", host->node);
  snprintf(row.job_id, sizeof row.job_id, "%s", host->job_id);
  row.host_env = res->env;
  char key[NNP_SWEEP_KEY_MAX], folder[4096], path[4400];
  NNP_TRY(nnp_sweep_row_key(&row, key, sizeof key));
  snprintf(folder, sizeof folder, "%s/rows/%s", dir, row.hw_class);
  NNP_TRY(nnp_results_mkdirs(folder));
  snprintf(path, sizeof path, "%s/%s-%016llx.json", folder, gid, (unsigned long long)fnv1a(res->model, key));
  nnp_bench_result one = *res; /* the run's header, this row only */
  one.rows = &row;
  one.n_rows = one.cap_rows = 1;
  one.load = NULL;
  one.coldstart = NULL;
  if (res->llm && index < res->llm->n_rows) return write_llm_row(path, &one, index, &row);
  one.llm = NULL;
  return nnp_report_write_json(&one, path);
}

/* Room for one more row in *out and in its LLM section when it has one (the section
 * first: its capacity never falls behind the rows'). */
static nnp_status grow(nnp_bench_result *out, const char *path) {
  if (out->n_rows < out->cap_rows) return NNP_OK;
  int cap = out->cap_rows ? 2 * out->cap_rows : 16;
  if (out->llm && out->llm->cap_rows < cap) {
    nnp_llm_row *w = nnp_realloc(out->llm->rows, sizeof *w * (size_t)cap);
    if (!w) return nnp_error(NNP_ERR_NOMEM, "%s: no memory for its rows", path);
    memset(w + out->llm->cap_rows, 0, sizeof *w * (size_t)(cap - out->llm->cap_rows)); /* the free walks cap_rows */
    out->llm->rows = w, out->llm->cap_rows = cap;
  }
  nnp_bench_row *grown = nnp_realloc(out->rows, sizeof *grown * (size_t)cap);
  if (!grown) return nnp_error(NNP_ERR_NOMEM, "%s: no memory for its rows", path);
  out->rows = grown, out->cap_rows = cap;
  return NNP_OK;
}

/* The first document gives *out its header (and an LLM section, rows apart); later ones
 * must be of the same kind. */
static nnp_status take_header(const char *path, nnp_bench_result *doc, nnp_bench_result *out) {
  if (!out->model[0]) {
    nnp_bench_row *rows = out->rows;
    int n = out->n_rows, cap = out->cap_rows;
    *out = *doc;
    out->rows = rows, out->n_rows = n, out->cap_rows = cap;
    out->load = NULL, out->coldstart = NULL, out->llm = NULL;
    if (doc->llm && n == 0) {
      if (!(out->llm = nnp_calloc(1, sizeof *out->llm))) return nnp_error(NNP_ERR_NOMEM, "%s: out of memory", path);
      *out->llm = *doc->llm;
      out->llm->rows = NULL, out->llm->n_rows = out->llm->cap_rows = 0;
      nnp_free(out->rows); /* rebuilt in step with the section's */
      out->rows = NULL, out->cap_rows = 0;
    }
  }
  if (!out->llm != !doc->llm)
    return nnp_error(NNP_ERR_INVALID, "%s: an %s row among %s rows: one group's rows are of one kind", path,
                     doc->llm ? "LLM" : "inference", out->llm ? "LLM" : "inference");
  return NNP_OK;
}

/* Moves the rows of the document at path into *out. */
static nnp_status take_rows(const char *path, int done_only, nnp_bench_result *out) {
  nnp_bench_result doc;
  NNP_TRY(nnp_result_load_file(path, &doc));
  nnp_status st = take_header(path, &doc, out);
  for (int i = 0; st == NNP_OK && i < doc.n_rows; i++) {
    nnp_row_status rs = doc.rows[i].status;
    if (done_only && rs != NNP_ROW_OK && rs != NNP_ROW_UNAVAILABLE) continue;
    if ((st = grow(out, path)) != NNP_OK) break;
    if (out->llm) { /* the reader keeps doc.rows[i] mirroring doc.llm->rows[i] */
      out->llm->rows[out->llm->n_rows++] = doc.llm->rows[i];
      memset(&doc.llm->rows[i], 0, sizeof doc.llm->rows[i]);
    }
    out->rows[out->n_rows++] = doc.rows[i];
    memset(&doc.rows[i], 0, sizeof doc.rows[i]);
  }
  nnp_bench_result_free(&doc);
  return st;
}

nnp_status nnp_results_read(const char *dir, const char *hw_class, const char *gid, int done_only,
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
    st = take_rows(path, done_only, out);
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
