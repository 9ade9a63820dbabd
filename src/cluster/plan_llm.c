/* The "llm" section of a sweep plan (docs/sweep.md): read and checked with the rest of
 * the plan (each model must read as a GGUF here, before anything runs or is submitted),
 * and each LLM model's group turned into a sweep spec of the LLM workload, the one
 * `nnperf llm bench` runs. */
#define _GNU_SOURCE
#include <libgen.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cluster/plan_llm.h"
#include "cluster/plan_read.h"
#include "llm/gguf.h"
#include "llm/llm_backends.h"

static const char *const llm_keys[] = {"models", "backends", "threads", "prompt_lengths", "gen_length",
                                       "concurrency", "requests", "warmup", "options", NULL};

int nnp_plan_llm_default_backends(void) { return nnp_llm_backend_count(); }

/* A model path as the plan gives it, relative ones against the plan's folder (a Slurm job
 * runs in the results folder, so the plan's folder is the one fixed point). */
static nnp_status read_model(nnp_sweep_plan *p, const char *given) {
  nnp_plan_llm *l = &p->llm;
  char *out = l->models[l->n_models++], folder[1024];
  snprintf(folder, sizeof folder, "%s", p->path);
  int w = given[0] == '/' ? snprintf(out, sizeof l->models[0], "%s", given)
                          : snprintf(out, sizeof l->models[0], "%s/%s", dirname(folder), given);
  if (w < 0 || (size_t)w >= sizeof l->models[0]) return nnp_plan_bad(p, "llm.models", "a path too long");
  nnp_gguf_info info;
  if (nnp_gguf_read_info(out, &info) != NNP_OK) {
    char why[600];
    snprintf(why, sizeof why, "%s", nnp_last_error());
    return nnp_plan_bad(p, "llm.models", why);
  }
  return NNP_OK;
}

static nnp_status read_models(nnp_sweep_plan *p, json_t *o) {
  json_t *a, *v;
  size_t i;
  NNP_TRY(nnp_plan_get_list(p, o, "llm", "models", 1, &a));
  if (!a) return nnp_plan_bad(p, "llm.models", "missing (a list of GGUF files)");
  json_array_foreach(a, i, v) NNP_TRY(read_model(p, json_string_value(v)));
  return NNP_OK;
}

static nnp_status read_backends(nnp_sweep_plan *p, json_t *o) {
  json_t *a, *v;
  size_t i;
  NNP_TRY(nnp_plan_get_list(p, o, "llm", "backends", 1, &a));
  if (a) json_array_foreach(a, i, v) {
      const char *name = json_string_value(v);
      if (!nnp_llm_backend_find(name))
        return nnp_error(NNP_ERR_INVALID, "plan %s: llm.backends: unknown LLM backend '%s' (nnperf backends lists them)",
                         p->path, name);
      snprintf(p->llm.backends[p->llm.n_backends++], sizeof p->llm.backends[0], "%s", name);
    }
  return nnp_plan_get_str(p, o, "options", "llm.options", p->llm.options, sizeof p->llm.options);
}

nnp_status nnp_plan_read_llm(nnp_sweep_plan *p, json_t *o) {
  nnp_plan_llm *l = &p->llm;
  l->requests = l->warmup = -1;
  if (!json_is_object(o)) return nnp_plan_bad(p, "llm", "wants an object");
  NNP_TRY(nnp_plan_known_keys(p, o, "llm", llm_keys));
  NNP_TRY(read_backends(p, o));
  /* the ranges of nnperf llm bench's options of the same names */
  NNP_TRY(nnp_plan_get_ints(p, o, "llm", "threads", 1, 1024, l->threads, &l->n_threads));
  NNP_TRY(nnp_plan_get_ints(p, o, "llm", "prompt_lengths", 1, 1 << 20, l->prompt_lengths, &l->n_prompt_lengths));
  NNP_TRY(nnp_plan_get_ints(p, o, "llm", "concurrency", 1, 64, l->concurrency, &l->n_concurrency));
  double gen = 0, requests = -1, warmup = -1;
  NNP_TRY(nnp_plan_get_num(p, o, "llm", "gen_length", 1, 4096, &gen));
  NNP_TRY(nnp_plan_get_num(p, o, "llm", "requests", 1, 100000, &requests));
  NNP_TRY(nnp_plan_get_num(p, o, "llm", "warmup", 0, 100000, &warmup));
  if ((gen && gen != (int)gen) || (requests > 0 && requests != (int)requests) || (warmup > 0 && warmup != (int)warmup))
    return nnp_plan_bad(p, "llm", "gen_length, requests and warmup want whole numbers");
  l->gen_length = (int)gen, l->requests = (int)requests, l->warmup = (int)warmup;
  return read_models(p, o); /* last: the checks that need no file come first */
}

/* Every CPU this process may run on: the threads of a plan that names none. */
static int cpus_allowed(void) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : 1;
}

void nnp_plan_llm_group_spec(const nnp_sweep_plan *p, int g, nnp_llm_sweep_spec *ls, nnp_sweep_spec *s) {
  const nnp_plan_llm *l = &p->llm;
  nnp_llm_sweep_spec_default(ls);
  ls->model = nnp_plan_group_model(p, g);
  if (l->n_backends)
    for (int i = 0; i < l->n_backends; i++) ls->backends[ls->n_backends++] = l->backends[i];
  else
    for (int i = 0; i < nnp_llm_backend_count(); i++) ls->backends[ls->n_backends++] = nnp_llm_backend_get(i)->name;
  const int *threads = l->n_threads ? l->threads : p->threads;
  ls->n_threads = l->n_threads ? l->n_threads : p->n_threads;
  memcpy(ls->threads, threads, sizeof(int) * (size_t)ls->n_threads);
  if (!ls->n_threads) ls->threads[ls->n_threads++] = cpus_allowed();
  if (l->n_prompt_lengths) memcpy(ls->prompt_lens, l->prompt_lengths, sizeof ls->prompt_lens);
  if (l->n_prompt_lengths) ls->n_prompt_lens = l->n_prompt_lengths;
  if (l->n_concurrency) memcpy(ls->concurrency, l->concurrency, sizeof ls->concurrency);
  if (l->n_concurrency) ls->n_concurrency = l->n_concurrency;
  if (l->gen_length) ls->gen_len = l->gen_length;
  if (l->requests > 0) ls->requests = l->requests;
  if (l->warmup >= 0) ls->warmup = l->warmup;
  ls->options = l->options[0] ? l->options : NULL;
  ls->seed = p->seed;
  ls->timeout_s = p->timeout_s;
  ls->mem_limit = (long long)p->mem_limit_mib << 20;
  s->workload = &nnp_llm_workload;
  s->workload_args = ls;
  s->model = ls->model;
  s->seed = p->seed;
  s->processes = 1; /* as llm bench: one worker per row, its requests are the samples */
  s->timeout_s = p->timeout_s;
}
