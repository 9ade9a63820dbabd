/* The plan reader's typed getters (src/cluster/plan.c), shared with the llm section's
 * reader (plan_llm.c). Each error is one line naming the plan file and the field as the
 * plan spells it ("llm.gen_length"); where is the section ("" for the top level). */
#ifndef NNP_CLUSTER_PLAN_READ_H
#define NNP_CLUSTER_PLAN_READ_H

#include <jansson.h>
#include <stddef.h>

#include "nnperf/sweep_plan.h"

nnp_status nnp_plan_bad(const nnp_sweep_plan *p, const char *field, const char *why);
/* An unknown key of o is an error: a misspelt key must not silently run the default. */
nnp_status nnp_plan_known_keys(const nnp_sweep_plan *p, json_t *o, const char *where, const char *const *keys);
nnp_status nnp_plan_get_str(const nnp_sweep_plan *p, json_t *o, const char *key, const char *field, char *out,
                            size_t n);
/* A number in lo..hi into *out; absent: *out unchanged. */
nnp_status nnp_plan_get_num(const nnp_sweep_plan *p, json_t *o, const char *where, const char *key, double lo,
                            double hi, double *out);
/* A list of 1..NNP_PLAN_MAX_LIST strings (or integers); absent: *out NULL. */
nnp_status nnp_plan_get_list(const nnp_sweep_plan *p, json_t *o, const char *where, const char *key, int strings,
                             json_t **out);
/* A list of integers in lo..hi appended to out[*n]; absent: nothing. */
nnp_status nnp_plan_get_ints(const nnp_sweep_plan *p, json_t *o, const char *where, const char *key, int lo, int hi,
                             int *out, int *n);

/* The "llm" section (plan_llm.c): every field checked, each model read as a GGUF. */
nnp_status nnp_plan_read_llm(nnp_sweep_plan *p, json_t *llm);
/* Rows per threads x prompt x concurrency point when the plan names no LLM backends. */
int nnp_plan_llm_default_backends(void);

#endif
