/* Per-layer INT8 sensitivity and the mixed-precision search built on it.
 *
 * Sensitivity: for every layer the QDQ rewrite quantizes (nnp_qdq_layers), two variants
 * are evaluated on held-out data against FP32 (quant_eval.h):
 *   alone    only this layer INT8, every other one FP32: the accuracy this layer costs
 *   except   every layer INT8 but this one: the accuracy keeping it FP32 wins back
 * Layers are ranked most sensitive first by the accuracy they cost alone: lowest mean
 * output cosine with FP32, then fewest top-1 agreements, then (ties) most cosine won back
 * by `except`. Cosine first, because with a few dozen validation images top-1 agreement
 * is a count of a few borderline images: on EfficientNet-Lite0 four layers alone flip
 * the same near-tied photo, while the layer that costs 3x more cosine than any other
 * flips none. The quantization noise of the layers adds up roughly independently (1 -
 * cosine of all-INT8 is close to the sum over layers alone), which is why the one-layer
 * cost ranks well; the `except` column shows what keeping each layer wins back.
 *
 * Mixed precision: from all-INT8, the next most sensitive layer is kept in FP32, one at a
 * time, until the top-1 agreement loss against FP32 (percentage points) is within the
 * budget. A layer whose return to FP32 lowers the agreement is put back to INT8 (the step
 * is recorded as rejected), so agreement never gets worse as layers return (issue 25:
 * keeping `fc` in FP32 lowered 37/39 to 33/39). Every kept step is evaluated and timed
 * (its native P50 interleaved with FP32's). */
#ifndef NNP_QUANT_SENSITIVITY_H
#define NNP_QUANT_SENSITIVITY_H

#include "quant/quant_eval.h"

typedef struct nnp_layer_sens {
  char *name;
  char op[16];
  int node; /* index in the FP32 graph */
  nnp_eval_result alone, except;
} nnp_layer_sens;

typedef struct nnp_sensitivity {
  int n;
  nnp_layer_sens *layers; /* ranked, most sensitive first */
  nnp_eval_result all_int8;
  double seconds;
} nnp_sensitivity;

/* Called after each evaluated variant (done of total), e.g. to print progress. */
typedef void (*nnp_sens_progress)(void *ctx, int done, int total);

/* fp32 must already have its BatchNormalization folded (nnp_qdq_fold_batchnorm), as the
 * table was calibrated on; unnamed quantizable layers get names (nnp_qdq_layers). */
nnp_status nnp_sensitivity_run(nnp_graph *fp32, const nnp_calib_table *t, const nnp_plan_options *po,
                               const nnp_eval_set *e, nnp_sens_progress progress, void *ctx, nnp_sensitivity *out);
void nnp_sensitivity_free(nnp_sensitivity *s);

typedef struct nnp_budget_step {
  int n_kept;           /* layers kept in FP32 after this step (rejected layers not counted) */
  int layer;            /* ranking index of the layer this step returned to FP32; -1 at step 0 */
  bool rejected;        /* returning it lowered agreement: it stays INT8, the step is not kept */
  nnp_eval_result r;
  double p50_ms, fp32_p50_ms; /* this variant's and FP32's median latency, interleaved */
} nnp_budget_step;

typedef struct nnp_budget_result {
  double budget_pct;
  int n_steps;
  nnp_budget_step *steps; /* step 0: all INT8 */
  bool met;               /* the chosen step is within the budget */
  int chosen_step;        /* the last kept (not rejected) step: the variant handed over */
} nnp_budget_result;

/* Top-1 agreement loss against FP32 in percentage points. */
double nnp_agreement_loss_pct(const nnp_eval_result *r);

/* Runs the search over the ranking in sens; reps timed runs per step (0: no timing).
 * The chosen variant's QDQ graph is handed over in *chosen (nnp_graph_destroy).
 * on_step, if given, is called after every step. */
nnp_status nnp_budget_search(const nnp_graph *fp32, const nnp_calib_table *t, const nnp_plan_options *po,
                             const nnp_eval_set *e, const nnp_sensitivity *sens, double budget_pct, int reps,
                             void (*on_step)(void *ctx, const nnp_budget_step *st, const nnp_sensitivity *sens),
                             void *ctx, nnp_budget_result *out, nnp_graph **chosen);
void nnp_budget_result_free(nnp_budget_result *b);

#endif
