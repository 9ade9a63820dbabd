/* Ownership and phase helpers of the result document's load and coldstart sections
 * (nnperf/result.h, nnperf/result_sections.h). */
#include "nnperf/result_sections.h"

#include <stdlib.h>
#include <string.h>

#include "load/tracker.h"
#include "nnperf/alloc.h"

const char *const nnp_coldstart_phase_names[NNP_COLDSTART_PHASES] = {"spawn_to_ready", "load", "first_inference",
                                                                     "cold_start"};

double nnp_coldstart_phase(const nnp_coldstart_sample *s, int phase) {
  switch (phase) {
  case 0: return s->spawn_to_ready_s;
  case 1: return s->load_s;
  case 2: return s->first_s;
  default: return s->cold_start_s;
  }
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

double nnp_coldstart_quantile(const nnp_coldstart_series *s, int phase, double q) {
  if (s->n <= 0 || !s->s) return -1;
  double *v = nnp_malloc(sizeof(double) * (size_t)s->n);
  if (!v) return -1;
  int m = 0;
  for (int i = 0; i < s->n; i++) {
    double x = nnp_coldstart_phase(&s->s[i], phase);
    if (x >= 0) v[m++] = x;
  }
  qsort(v, (size_t)m, sizeof *v, cmp_double);
  double r = nnp_quantile_sorted(v, m, q);
  nnp_free(v);
  return r;
}

void nnp_load_section_free(nnp_load_section *l) {
  if (!l) return;
  for (int i = 0; l->runs && i < l->n_runs; i++) nnp_free(l->runs[i].samples_s);
  nnp_free(l->runs);
  l->runs = NULL;
  l->n_runs = 0;
}

void nnp_coldstart_section_free(nnp_coldstart_section *c) {
  if (!c) return;
  nnp_coldstart_series *all[] = {&c->plain, &c->cold, &c->warm};
  for (int i = 0; i < 3; i++) {
    nnp_free(all[i]->s);
    all[i]->s = NULL;
    all[i]->n = 0;
  }
}
