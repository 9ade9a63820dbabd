/* nnperf sweep --slurm and nnperf sweep status: see sweep_jobs.h. Jobs are recorded in
 * DIR/jobs.tsv ("id<TAB>class<TAB>group<TAB>group id<TAB>rows"), their states asked of
 * squeue/sacct each time, their rows read from DIR/rows. */
#define _GNU_SOURCE
#include "cluster/sweep_jobs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/results_dir.h"
#include "cluster/slurm.h"
#include "nnperf/alloc.h"

#define MAX_JOBS 1024

/* The sbatch options of a class's jobs: --exclusive (a benchmark needs the whole node),
 * the class's partition and constraint, limits derived from the plan. */
static int job_options(const nnp_sweep_plan *plan, const nnp_plan_hw_class *c, const char *dir, int g, int n_rows,
                       char bufs[][1200], const char **opts) {
  int k = 0;
  snprintf(bufs[k], sizeof bufs[0], "--job-name=nnperf-%s-%s", plan->name, c->name), k++;
  snprintf(bufs[k], sizeof bufs[0], "--exclusive"), k++;
  snprintf(bufs[k], sizeof bufs[0], "--nodes=1"), k++;
  snprintf(bufs[k], sizeof bufs[0], "--time=%d", nnp_plan_job_minutes(plan, g, n_rows)), k++;
  snprintf(bufs[k], sizeof bufs[0], "--mem=%lld", (long long)nnp_plan_job_mem_mib(plan)), k++;
  snprintf(bufs[k], sizeof bufs[0], "--output=%s/jobs/slurm-%%j.out", dir), k++;
  snprintf(bufs[k], sizeof bufs[0], "--chdir=%s", dir), k++;
  if (c->partition[0]) snprintf(bufs[k], sizeof bufs[0], "--partition=%s", c->partition), k++;
  if (c->constraint[0]) snprintf(bufs[k], sizeof bufs[0], "--constraint=%s", c->constraint), k++;
  for (int i = 0; i < k; i++) opts[i] = bufs[i];
  return k;
}

/* Job script: runs this nnperf on the node for one class and group. Paths are single-quoted. */
static nnp_status write_script(const nnp_sweep_plan *plan, const char *dir, const char *self, const char *cls, int g,
                               char *path, size_t n) {
  const char *exe = plan->nnperf_exe[0] ? plan->nnperf_exe : self;
  if (strchr(exe, '\'') || strchr(plan->path, '\'') || strchr(dir, '\''))
    return nnp_error(NNP_ERR_INVALID, "plan %s: a path holds a single quote; the job script cannot quote it", plan->path);
  char jobs[4096];
  snprintf(jobs, sizeof jobs, "%s/jobs", dir);
  NNP_TRY(nnp_results_mkdirs(jobs));
  snprintf(path, n, "%s/%s-g%d.sh", jobs, cls, g);
  FILE *f = fopen(path, "w");
  if (!f) return nnp_error(NNP_ERR_IO, "%s: cannot write the job script", path);
  fprintf(f, "#!/bin/sh\n# nnperf sweep job: plan %s, hardware class %s, group %d\n", plan->path, cls, g);
  fprintf(f, "exec '%s' sweep __job '%s' --class '%s' --group %d --results '%s'\n", exe, plan->path, cls, g, dir);
  return fclose(f) == 0 ? NNP_OK : nnp_error(NNP_ERR_IO, "%s: write failed", path);
}

/* Rows of group g of class c still to run: all, or with resume those without an ok file. */
static int rows_to_run(const nnp_sweep_plan *plan, const char *dir, const char *cls, int g, int resume) {
  int total = nnp_plan_group_rows(plan, g);
  if (!resume) return total;
  char gid[17];
  nnp_results_group_id(plan, g, gid);
  nnp_bench_result done;
  memset(&done, 0, sizeof done);
  int ok = nnp_results_read(dir, cls, gid, 1, &done) == NNP_OK ? done.n_rows : 0;
  nnp_bench_result_free(&done);
  return ok >= total ? 0 : total - ok;
}

static nnp_status check_classes(const nnp_sweep_plan *plan, const char *dir) {
  NNP_TRY(nnp_slurm_available());
  if (!plan->n_classes)
    return nnp_error(NNP_ERR_INVALID, "plan %s: hardware: --slurm needs at least one class {name, partition, constraint}",
                     plan->path);
  for (int c = 0; c < plan->n_classes; c++) {
    char bufs[12][1200], what[160];
    const char *opts[12];
    int k = job_options(plan, &plan->classes[c], dir, 0, 1, bufs, opts);
    snprintf(what, sizeof what, "plan %s: hardware class %s", plan->path, plan->classes[c].name);
    NNP_TRY(nnp_slurm_submit(opts, k, NULL, 1, what, NULL, 0));
  }
  return NNP_OK;
}

nnp_status nnp_sweep_submit(const nnp_sweep_plan *plan, const char *dir, int resume, const char *self, FILE *log) {
  NNP_TRY(check_classes(plan, dir)); /* before the folder is made: a refused plan leaves nothing */
  NNP_TRY(nnp_results_mkdirs(dir));
  char index[4200];
  snprintf(index, sizeof index, "%s/jobs.tsv", dir);
  int submitted = 0;
  for (int c = 0; c < plan->n_classes; c++)
    for (int g = 0; g < nnp_plan_n_groups(plan); g++) {
      const char *cls = plan->classes[c].name;
      int n_rows = rows_to_run(plan, dir, cls, g, resume);
      if (!n_rows) continue;
      char script[4400], bufs[12][1200], id[32], what[160], gid[17];
      const char *opts[12];
      NNP_TRY(write_script(plan, dir, self, cls, g, script, sizeof script));
      int k = job_options(plan, &plan->classes[c], dir, g, n_rows, bufs, opts);
      snprintf(what, sizeof what, "plan %s: hardware class %s", plan->path, cls);
      NNP_TRY(nnp_slurm_submit(opts, k, script, 0, what, id, sizeof id));
      nnp_results_group_id(plan, g, gid);
      FILE *f = fopen(index, "a");
      if (!f) return nnp_error(NNP_ERR_IO, "%s: cannot append job %s (submitted)", index, id);
      fprintf(f, "%s\t%s\t%d\t%s\t%d\n", id, cls, g, gid, n_rows);
      fclose(f);
      fprintf(log, "submitted job %s: class %s, %s, %d rows\n", id, cls, nnp_plan_group_model(plan, g), n_rows);
      submitted++;
    }
  if (!submitted) fprintf(log, "nothing to submit: every row of the plan is done\n");
  return NNP_OK;
}

typedef struct job_line {
  char id[32], cls[48], gid[17];
  int group, n_rows;
} job_line;

static int read_jobs(const char *dir, job_line *jobs, int max) {
  char index[4200], line[512];
  snprintf(index, sizeof index, "%s/jobs.tsv", dir);
  FILE *f = fopen(index, "r");
  int n = 0;
  if (!f) return 0;
  while (n < max && fgets(line, sizeof line, f))
    if (sscanf(line, "%31[^\t]\t%47[^\t]\t%d\t%16[^\t]\t%d", jobs[n].id, jobs[n].cls, &jobs[n].group, jobs[n].gid,
               &jobs[n].n_rows) == 5)
      n++;
  fclose(f);
  return n;
}

/* One job's line: its rows in the folder now (a later job of the same group shares them). */
static void status_job(const nnp_sweep_plan *plan, const char *dir, const job_line *j, const nnp_slurm_job_state *s,
                       int latest, FILE *f, int *totals) {
  nnp_bench_result rows;
  memset(&rows, 0, sizeof rows);
  if (nnp_results_read(dir, j->cls, j->gid, 0, &rows) != NNP_OK)
    fprintf(f, "  (unreadable row file: %s)\n", nnp_last_error());
  int ok = 0, unavailable = 0, failed, expected = nnp_plan_group_rows(plan, j->group);
  for (int i = 0; i < rows.n_rows; i++) ok += rows.rows[i].status == NNP_ROW_OK;
  for (int i = 0; i < rows.n_rows; i++) unavailable += rows.rows[i].status == NNP_ROW_UNAVAILABLE;
  failed = rows.n_rows - ok - unavailable;
  int missing = expected - rows.n_rows;
  const char *model = nnp_plan_group_model(plan, j->group);
  char extra[48] = ""; /* a backend not installed on the node is not a failure: said apart */
  if (unavailable) snprintf(extra, sizeof extra, ", %d unavailable", unavailable);
  fprintf(f, "job %-8s %-10s %-12s node %-10s %-22s rows: %d ok%s, %d failed, %d not done (of %d)\n", j->id, j->cls,
          s->state, s->node[0] ? s->node : "-", strrchr(model, '/') ? strrchr(model, '/') + 1 : model, ok, extra,
          failed, missing, expected);
  for (int i = 0; i < rows.n_rows; i++)
    if (rows.rows[i].status != NNP_ROW_OK && rows.rows[i].status != NNP_ROW_UNAVAILABLE)
      fprintf(f, "  failed: %s: %s: %s\n", rows.rows[i].label, nnp_row_status_name(rows.rows[i].status),
              rows.rows[i].reason);
  const char *why = s->reason[0] && strcmp(s->reason, "None") ? s->reason : ""; /* squeue says "None" */
  if (missing > 0 && latest) {
    if (nnp_slurm_state_final(s->state))
      fprintf(f, "  failed: %d rows: job %s ended %s%s%s before they finished (nnperf sweep --slurm --resume reruns them)\n",
              missing, j->id, s->state, *why ? ": " : "", why);
    else
      fprintf(f, "  %s: %d rows%s%s\n", !strcmp(s->state, "PENDING") ? "queued" : "running", missing,
              *why ? ", reason: " : "", why);
  }
  if (latest) {
    int ended = nnp_slurm_state_final(s->state);
    totals[0] += ok, totals[1] += failed + (ended ? missing : 0), totals[2] += ended ? 0 : missing;
    totals[3] += unavailable;
  }
  nnp_bench_result_free(&rows);
}

nnp_status nnp_sweep_status(const nnp_sweep_plan *plan, const char *dir, FILE *f) {
  job_line *jobs = nnp_calloc(MAX_JOBS, sizeof *jobs);
  nnp_slurm_job_state *states = nnp_calloc(MAX_JOBS, sizeof *states);
  const char **ids = nnp_calloc(MAX_JOBS, sizeof *ids);
  if (!jobs || !states || !ids) {
    nnp_free(jobs), nnp_free(states), nnp_free(ids);
    return nnp_error(NNP_ERR_NOMEM, "sweep status: no memory");
  }
  int n = read_jobs(dir, jobs, MAX_JOBS);
  for (int i = 0; i < n; i++) ids[i] = jobs[i].id;
  if (n) nnp_slurm_job_states(ids, n, states);
  int totals[4] = {0, 0, 0, 0};
  for (int i = 0; i < n; i++) {
    int latest = 1; /* the last job of a class x group speaks for its rows */
    for (int k = i + 1; k < n; k++) latest &= !(jobs[k].group == jobs[i].group && !strcmp(jobs[k].cls, jobs[i].cls));
    status_job(plan, dir, &jobs[i], &states[i], latest, f, totals);
  }
  if (!n) fprintf(f, "no jobs submitted yet for %s (results folder %s)\n", plan->path, dir);
  else if (totals[3])
    fprintf(f, "total: %d rows ok, %d unavailable, %d failed, %d not done\n", totals[0], totals[3], totals[1], totals[2]);
  else fprintf(f, "total: %d rows ok, %d failed, %d not done\n", totals[0], totals[1], totals[2]);
  nnp_free(jobs), nnp_free(states), nnp_free(ids);
  return NNP_OK;
}
