/* Sweep plan files (docs/sweep.md): read with jansson, every field checked before
 * anything runs or is submitted, so a typo costs a one-line error, not a queue slot. */
#include <jansson.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nnperf/backend.h"
#include "cluster/plan_read.h"
#include "nnperf/sweep_plan.h"

/* a plan's axes are copied whole into a sweep spec's */
_Static_assert(NNP_PLAN_MAX_LIST <= NNP_SWEEP_MAX_AXIS, "plan lists must fit the sweep spec's axes");

static const char *const top_keys[] = {"name", "results", "models", "backends", "precisions", "batches", "threads",
                                       "shapes", "loop", "hardware", "slurm", "llm", NULL};
static const char *const loop_keys[] = {"warmup", "iterations", "min_time_s", "max_time_s", "processes",
                                        "timeout_s", "mem_limit_mib", "seed", NULL};
static const char *const hw_keys[] = {"name", "partition", "constraint", NULL};
static const char *const slurm_keys[] = {"mem_mib", "time_margin_s", "nnperf", NULL};

nnp_status nnp_plan_bad(const nnp_sweep_plan *p, const char *field, const char *why) {
  return nnp_error(NNP_ERR_INVALID, "plan %s: %s: %s", p->path, field, why);
}
/* An unknown key is an error: a misspelt "batchs" must not silently run the default. */
nnp_status nnp_plan_known_keys(const nnp_sweep_plan *p, json_t *o, const char *where, const char *const *keys) {
  const char *k;
  json_t *v;
  json_object_foreach(o, k, v) {
    int ok = 0;
    for (int i = 0; keys[i]; i++) ok |= !strcmp(k, keys[i]);
    if (!ok) return nnp_error(NNP_ERR_INVALID, "plan %s: %s%s%s: unknown field", p->path, where, *where ? "." : "", k);
  }
  return NNP_OK;
}

nnp_status nnp_plan_get_str(const nnp_sweep_plan *p, json_t *o, const char *key, const char *field, char *out,
                            size_t n) {
  json_t *v = json_object_get(o, key);
  if (!v) return NNP_OK;
  if (!json_is_string(v) || strlen(json_string_value(v)) >= n) return nnp_plan_bad(p, field, "wants a (short) string");
  snprintf(out, n, "%s", json_string_value(v));
  return NNP_OK;
}

/* "loop" + "warmup" -> "loop.warmup": the field as the plan spells it, for errors. */
static void field_name(const char *where, const char *key, char *out, size_t n) {
  snprintf(out, n, "%s%s%s", where, *where ? "." : "", key);
}

nnp_status nnp_plan_get_num(const nnp_sweep_plan *p, json_t *o, const char *where, const char *key, double lo,
                            double hi, double *out) {
  json_t *v = json_object_get(o, key);
  if (!v) return NNP_OK;
  double x = json_number_value(v);
  if (!json_is_number(v) || !(x >= lo && x <= hi)) {
    char why[96], field[64];
    snprintf(why, sizeof why, "wants a number in %g..%g", lo, hi);
    field_name(where, key, field, sizeof field);
    return nnp_plan_bad(p, field, why);
  }
  *out = x;
  return NNP_OK;
}

nnp_status nnp_plan_get_list(const nnp_sweep_plan *p, json_t *o, const char *where, const char *key, int strings,
                             json_t **out) {
  json_t *a = json_object_get(o, key);
  char field[64];
  field_name(where, key, field, sizeof field);
  *out = NULL;
  if (!a) return NNP_OK;
  if (!json_is_array(a) || json_array_size(a) == 0 || json_array_size(a) > NNP_PLAN_MAX_LIST)
    return nnp_plan_bad(p, field, "wants a non-empty list (at most 16 values)");
  size_t i;
  json_t *v;
  json_array_foreach(a, i, v) if (strings ? !json_is_string(v) : !json_is_integer(v))
      return nnp_plan_bad(p, field, strings ? "wants a list of strings" : "wants a list of integers");
  *out = a;
  return NNP_OK;
}

nnp_status nnp_plan_get_ints(const nnp_sweep_plan *p, json_t *o, const char *where, const char *key, int lo, int hi,
                             int *out, int *n) {
  json_t *a, *v;
  size_t i;
  NNP_TRY(nnp_plan_get_list(p, o, where, key, 0, &a));
  if (!a) return NNP_OK;
  json_array_foreach(a, i, v) {
    if (json_integer_value(v) < lo || json_integer_value(v) > hi) {
      char why[96], field[64];
      snprintf(why, sizeof why, "%lld: wants integers in %d..%d", (long long)json_integer_value(v), lo, hi);
      field_name(where, key, field, sizeof field);
      return nnp_plan_bad(p, field, why);
    }
    out[(*n)++] = (int)json_integer_value(v);
  }
  return NNP_OK;
}

/* models and backends: required, unless the plan holds LLM rows only (an "llm" section
 * and neither of them). */
static nnp_status read_models(nnp_sweep_plan *p, json_t *root) {
  json_t *a, *v;
  size_t i;
  if (json_object_get(root, "llm") && !json_object_get(root, "models") && !json_object_get(root, "backends"))
    return NNP_OK;
  NNP_TRY(nnp_plan_get_list(p, root, "", "models", 1, &a));
  if (!a) return nnp_plan_bad(p, "models", "missing (a list of .onnx paths or zoo:NAME)");
  json_array_foreach(a, i, v) snprintf(p->models[p->n_models++], sizeof p->models[0], "%s", json_string_value(v));
  NNP_TRY(nnp_plan_get_list(p, root, "", "backends", 1, &a));
  if (!a) return nnp_plan_bad(p, "backends", "missing (nnperf backends lists them)");
  json_array_foreach(a, i, v) {
    const char *name = json_string_value(v);
    if (!nnp_backend_find(name) || strlen(name) >= sizeof p->backends[0])
      return nnp_error(NNP_ERR_INVALID, "plan %s: backends: unknown backend '%s' (nnperf backends lists them)",
                       p->path, name);
    snprintf(p->backends[p->n_backends++], sizeof p->backends[0], "%s", name);
  }
  return NNP_OK;
}

static nnp_status read_axes(nnp_sweep_plan *p, json_t *root) {
  json_t *a;
  size_t i;
  json_t *v;
  NNP_TRY(read_models(p, root));
  NNP_TRY(nnp_plan_get_list(p, root, "", "precisions", 1, &a));
  if (a) json_array_foreach(a, i, v) {
      if (!nnp_precision_parse(json_string_value(v), &p->precisions[p->n_precisions++]))
        return nnp_error(NNP_ERR_INVALID, "plan %s: precisions: unknown precision '%s' (fp32, fp16, int8, mixed)",
                         p->path, json_string_value(v));
    }
  NNP_TRY(nnp_plan_get_list(p, root, "", "batches", 0, &a));
  if (a) json_array_foreach(a, i, v) {
      if (json_integer_value(v) < 1 || json_integer_value(v) > 1 << 20) return nnp_plan_bad(p, "batches", "wants 1..1048576");
      p->batches[p->n_batches++] = json_integer_value(v);
    }
  NNP_TRY(nnp_plan_get_ints(p, root, "", "threads", 1, 1024, p->threads, &p->n_threads));
  NNP_TRY(nnp_plan_get_list(p, root, "", "shapes", 1, &a));
  if (a) json_array_foreach(a, i, v) {
      const char *s = json_string_value(v);
      if ((strncmp(s, "static:", 7) && strncmp(s, "dynamic:", 8)) || strlen(s) >= sizeof p->shapes[0] ||
          !strchr(s, ':')[1])
        return nnp_error(NNP_ERR_INVALID, "plan %s: shapes: '%s' is not static:DIMS or dynamic:DIMS", p->path, s);
      snprintf(p->shapes[p->n_shapes++], sizeof p->shapes[0], "%s", s);
    }
  return NNP_OK;
}

static nnp_status read_loop(nnp_sweep_plan *p, json_t *root) {
  json_t *o = json_object_get(root, "loop");
  if (!o) return NNP_OK;
  if (!json_is_object(o)) return nnp_plan_bad(p, "loop", "wants an object");
  NNP_TRY(nnp_plan_known_keys(p, o, "loop", loop_keys));
  double warmup = p->loop.warmup_min, iters = p->loop.iterations, procs = p->processes, mem = 0, seed = 1;
  NNP_TRY(nnp_plan_get_num(p, o, "loop", "warmup", 0, 1e6, &warmup));
  NNP_TRY(nnp_plan_get_num(p, o, "loop", "iterations", 1, 1e8, &iters));
  NNP_TRY(nnp_plan_get_num(p, o, "loop", "min_time_s", 0, 1e5, &p->loop.min_time_s));
  NNP_TRY(nnp_plan_get_num(p, o, "loop", "max_time_s", 0.001, 1e5, &p->loop.max_time_s));
  NNP_TRY(nnp_plan_get_num(p, o, "loop", "processes", 1, NNP_MAX_PROCESSES, &procs));
  NNP_TRY(nnp_plan_get_num(p, o, "loop", "timeout_s", 0.1, 1e6, &p->timeout_s));
  NNP_TRY(nnp_plan_get_num(p, o, "loop", "mem_limit_mib", 0, 1 << 30, &mem));
  NNP_TRY(nnp_plan_get_num(p, o, "loop", "seed", 0, 4e18, &seed));
  p->loop.warmup_min = (int)warmup;
  if (p->loop.warmup_max < p->loop.warmup_min) p->loop.warmup_max = p->loop.warmup_min;
  p->loop.iterations = (int)iters;
  p->processes = (int)procs;
  p->mem_limit_mib = (int64_t)mem;
  p->seed = (uint64_t)seed;
  return NNP_OK;
}

static nnp_status read_hardware(nnp_sweep_plan *p, json_t *root) {
  json_t *a = json_object_get(root, "hardware"), *v;
  size_t i;
  if (!a) return NNP_OK;
  if (!json_is_array(a) || json_array_size(a) > NNP_PLAN_MAX_CLASSES)
    return nnp_plan_bad(p, "hardware", "wants a list of at most 16 classes {name, partition, constraint}");
  json_array_foreach(a, i, v) {
    char field[48];
    snprintf(field, sizeof field, "hardware[%zu]", i);
    if (!json_is_object(v)) return nnp_plan_bad(p, field, "wants an object {name, partition, constraint}");
    NNP_TRY(nnp_plan_known_keys(p, v, field, hw_keys));
    nnp_plan_hw_class *c = &p->classes[p->n_classes++];
    NNP_TRY(nnp_plan_get_str(p, v, "name", field, c->name, sizeof c->name));
    NNP_TRY(nnp_plan_get_str(p, v, "partition", field, c->partition, sizeof c->partition));
    NNP_TRY(nnp_plan_get_str(p, v, "constraint", field, c->constraint, sizeof c->constraint));
    if (!c->name[0] || strpbrk(c->name, "/ \t|"))
      return nnp_plan_bad(p, field, "needs a name without '/', '|' or blanks");
    for (int k = 0; k < p->n_classes - 1; k++)
      if (!strcmp(p->classes[k].name, c->name)) return nnp_plan_bad(p, field, "repeats the name of another class");
  }
  return NNP_OK;
}

static nnp_status read_slurm_llm(nnp_sweep_plan *p, json_t *root) {
  json_t *s = json_object_get(root, "slurm"), *l = json_object_get(root, "llm");
  if (s) {
    if (!json_is_object(s)) return nnp_plan_bad(p, "slurm", "wants an object");
    NNP_TRY(nnp_plan_known_keys(p, s, "slurm", slurm_keys));
    double mem = 0;
    NNP_TRY(nnp_plan_get_num(p, s, "slurm", "mem_mib", 1, 1 << 30, &mem));
    p->job_mem_mib = (int64_t)mem;
    NNP_TRY(nnp_plan_get_num(p, s, "slurm", "time_margin_s", 0, 1e6, &p->job_margin_s));
    NNP_TRY(nnp_plan_get_str(p, s, "nnperf", "slurm.nnperf", p->nnperf_exe, sizeof p->nnperf_exe));
  }
  return l ? nnp_plan_read_llm(p, l) : NNP_OK;
}

nnp_status nnp_plan_load(const char *path, nnp_sweep_plan *p) {
  memset(p, 0, sizeof *p);
  snprintf(p->path, sizeof p->path, "%s", path);
  nnp_loop_spec_default(&p->loop);
  p->processes = 3;
  p->timeout_s = 600;
  p->seed = 1;
  p->job_margin_s = 120;
  json_error_t je;
  json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
  if (!root) return nnp_error(NNP_ERR_INVALID, "plan %s: line %d: %s", path, je.line, je.text);
  nnp_status st = json_is_object(root) ? NNP_OK : nnp_plan_bad(p, "(top level)", "wants a JSON object");
  if (st == NNP_OK) st = nnp_plan_known_keys(p, root, "", top_keys);
  if (st == NNP_OK) st = nnp_plan_get_str(p, root, "name", "name", p->name, sizeof p->name);
  if (st == NNP_OK) st = nnp_plan_get_str(p, root, "results", "results", p->results, sizeof p->results);
  if (st == NNP_OK) st = read_axes(p, root);
  if (st == NNP_OK) st = read_loop(p, root);
  if (st == NNP_OK) st = read_hardware(p, root);
  if (st == NNP_OK) st = read_slurm_llm(p, root);
  json_decref(root);
  if (st == NNP_OK && !p->name[0]) {
    char copy[1024];
    snprintf(copy, sizeof copy, "%s", path);
    snprintf(p->name, sizeof p->name, "%.*s", (int)strcspn(basename(copy), "."), basename(copy));
  }
  if (st == NNP_OK && !p->results[0]) snprintf(p->results, sizeof p->results, "%s.results", p->name);
  return st;
}

static int n_cnn_groups(const nnp_sweep_plan *p) { return p->n_models * (p->n_shapes ? p->n_shapes : 1); }

int nnp_plan_n_groups(const nnp_sweep_plan *p) { return n_cnn_groups(p) + p->llm.n_models; }

int nnp_plan_group_is_llm(const nnp_sweep_plan *p, int g) { return g >= n_cnn_groups(p); }

const char *nnp_plan_group_model(const nnp_sweep_plan *p, int g) {
  if (nnp_plan_group_is_llm(p, g)) return p->llm.models[g - n_cnn_groups(p)];
  return p->models[g / (p->n_shapes ? p->n_shapes : 1)];
}

int nnp_plan_group_rows(const nnp_sweep_plan *p, int g) {
  if (nnp_plan_group_is_llm(p, g)) {
    const nnp_plan_llm *l = &p->llm;
    int threads = l->n_threads ? l->n_threads : p->n_threads ? p->n_threads : 1;
    return (l->n_backends ? l->n_backends : nnp_plan_llm_default_backends()) * threads *
           (l->n_prompt_lengths ? l->n_prompt_lengths : 1) * (l->n_concurrency ? l->n_concurrency : 1);
  }
  int n = p->n_backends * (p->n_precisions ? p->n_precisions : 1) * (p->n_threads ? p->n_threads : 1);
  int static_shape = p->n_shapes && !strncmp(p->shapes[g % p->n_shapes], "static:", 7); /* fixes the batch */
  return n * (static_shape || !p->n_batches ? 1 : p->n_batches);
}

void nnp_plan_group_spec(const nnp_sweep_plan *p, int g, nnp_sweep_spec *s) {
  int n_shapes = p->n_shapes ? p->n_shapes : 1;
  s->model = p->models[g / n_shapes];
  s->n_backends = p->n_backends;
  for (int i = 0; i < p->n_backends; i++) s->backends[i] = p->backends[i];
  s->n_precisions = p->n_precisions;
  memcpy(s->precisions, p->precisions, sizeof s->precisions);
  s->n_batches = p->n_batches;
  memcpy(s->batches, p->batches, sizeof s->batches);
  s->n_threads = p->n_threads;
  memcpy(s->threads, p->threads, sizeof s->threads);
  if (p->n_shapes) {
    const char *shape = p->shapes[g % n_shapes];
    if (!strncmp(shape, "static:", 7)) s->static_shape = shape + 7;
    else s->dynamic_shape = shape + 8;
  }
  s->loop = p->loop;
  s->seed = p->seed;
  s->processes = p->processes;
  s->timeout_s = p->timeout_s;
  s->mem_limit_bytes = p->mem_limit_mib << 20;
}

int nnp_plan_job_minutes(const nnp_sweep_plan *p, int g, int n_rows) {
  double per_process = p->loop.warmup_max_time_s + p->loop.max_time_s + 30; /* 30 s: start-up and load */
  if (per_process > p->timeout_s || nnp_plan_group_is_llm(p, g)) per_process = p->timeout_s;
  int processes = nnp_plan_group_is_llm(p, g) ? 1 : p->processes; /* an LLM row runs in one worker */
  double s = n_rows * processes * per_process + p->job_margin_s;
  return (int)ceil(s / 60);
}

int64_t nnp_plan_job_mem_mib(const nnp_sweep_plan *p) {
  if (p->job_mem_mib) return p->job_mem_mib;
  return p->mem_limit_mib ? p->mem_limit_mib + 1024 : 4096;
}

void nnp_plan_results_dir(const nnp_sweep_plan *p, char *out, size_t n) {
  if (p->results[0] == '/') {
    snprintf(out, n, "%s", p->results);
    return;
  }
  char copy[1024];
  snprintf(copy, sizeof copy, "%s", p->path);
  snprintf(out, n, "%s/%s", dirname(copy), p->results);
}
