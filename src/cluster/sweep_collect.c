/* nnperf sweep collect: see sweep_collect.h. */
#include "cluster/sweep_collect.h"

#include <stdio.h>
#include <string.h>

#include "cluster/results_dir.h"
#include "llm/llm_sweep.h"
#include "nnperf/llm_bench.h"

/* "resnet50.onnx native fp32 t1 b1": rows of several models side by side in one table.
 * LLM rows also name a class other than "local": the LLM table has no host column. */
static void label_rows(const nnp_sweep_plan *plan, int g, const char *cls, nnp_bench_result *r, int from) {
  const char *model = nnp_plan_group_model(plan, g);
  const char *shortname = strrchr(model, '/') ? strrchr(model, '/') + 1 : model;
  int elsewhere = r->llm && strcmp(cls, "local");
  for (int i = from; i < r->n_rows; i++) {
    char label[96];
    if (elsewhere) snprintf(label, sizeof label, "%.40s %.44s @%.9s", shortname, r->rows[i].label, cls);
    else snprintf(label, sizeof label, "%.40s %.54s", shortname, r->rows[i].label);
    snprintf(r->rows[i].label, sizeof r->rows[i].label, "%s", label);
    if (r->llm) snprintf(r->llm->rows[i].label, sizeof r->llm->rows[i].label, "%s", label);
  }
}

static void set_header(const nnp_sweep_plan *plan, nnp_bench_result *r) {
  snprintf(r->model, sizeof r->model, "sweep:%s", plan->path);
  snprintf(r->command_line, sizeof r->command_line, "nnperf sweep collect %s", plan->path);
  r->accuracy_rtol = -1;
  nnp_env_capture(&r->env); /* the collecting machine; each row has its own in host.env */
  if (r->llm) nnp_llm_sync_header(r);
}

nnp_status nnp_sweep_collect(const nnp_sweep_plan *plan, const char *dir, nnp_bench_result *cnn,
                             nnp_bench_result *llm) {
  memset(cnn, 0, sizeof *cnn);
  memset(llm, 0, sizeof *llm);
  char classes[NNP_PLAN_MAX_CLASSES + 1][48];
  int n = 0;
  snprintf(classes[n++], sizeof classes[0], "local");
  for (int c = 0; c < plan->n_classes; c++) snprintf(classes[n++], sizeof classes[0], "%s", plan->classes[c].name);
  for (int g = 0; g < nnp_plan_n_groups(plan); g++) {
    char gid[17];
    nnp_results_group_id(plan, g, gid);
    nnp_bench_result *into = nnp_plan_group_is_llm(plan, g) ? llm : cnn;
    for (int c = 0; c < n; c++) {
      int before = into->n_rows;
      NNP_TRY(nnp_results_read(dir, classes[c], gid, 0, into));
      label_rows(plan, g, classes[c], into, before);
    }
  }
  set_header(plan, cnn);
  set_header(plan, llm);
  return NNP_OK;
}
