/* Accuracy of a quantized variant against its FP32 model, on held-out data, in-process.
 *
 * An evaluation set is loaded once: the validation inputs (images or .npy, through
 * calib_data), their hand labels where a labels file names them, and the FP32 model's
 * outputs on each (the reference). A variant (the QDQ rewrite with some layers kept in
 * FP32) is then compiled into a plan and run on the same inputs; the result counts
 *   agree    top-1 (argmax of the flattened output) equal to FP32's
 *   cosine   of the output with FP32's output, mean and min over the inputs
 *   correct  top-1 equal to the hand label (labelled inputs only)
 * so a sensitivity analysis or a mixed-precision search compares variants on exactly the
 * same inputs and reference.
 *
 * Labels file: one photo a line, "FILE CLASS [name ...]": FILE is the file's base name,
 * CLASS the 0-based class index (line number - 1 in the label list the model was trained
 * on); '#' starts a comment line. */
#ifndef NNP_QUANT_QUANT_EVAL_H
#define NNP_QUANT_QUANT_EVAL_H

#include "nnperf/engine.h"
#include "nnperf/ir.h"
#include "nnperf/status.h"
#include "quant/calib_data.h"
#include "quant/calibrate.h"

typedef struct nnp_labels {
  int n;
  char **files;
  int *cls;
} nnp_labels;

nnp_status nnp_labels_load(const char *path, nnp_labels *out);
/* Class of the file with this base name, -1 when not labelled. */
int nnp_labels_find(const nnp_labels *l, const char *file);
void nnp_labels_free(nnp_labels *l);

typedef struct nnp_eval_set {
  int n;
  nnp_tensor *inputs;
  int *label;        /* class per input, -1 when unlabelled */
  int n_labelled;
  int64_t numel;     /* elements of the (first) output */
  float *ref;        /* n x numel: the FP32 outputs */
  int *ref_top1;
  int ref_correct;   /* FP32 top-1 equal to the label, over the labelled inputs */
} nnp_eval_set;

/* Loads every item of val (labels may be NULL) and runs fp32 on them with po. */
nnp_status nnp_eval_set_load(const nnp_graph *fp32, const nnp_plan_options *po, const nnp_calib_set *val,
                             const nnp_labels *labels, nnp_eval_set *out);
void nnp_eval_set_free(nnp_eval_set *e);

typedef struct nnp_eval_result {
  int n, agree;
  int labelled, correct;
  double cos_mean, cos_min;
} nnp_eval_result;

/* Runs plan p on every input of e. */
nnp_status nnp_eval_plan(nnp_plan *p, const nnp_eval_set *e, nnp_eval_result *r);

/* QDQ rewrite of a copy of fp32 with table t, keeping the n_keep named layers in FP32,
 * compiled with po and evaluated on e. With qdq_out, the rewritten graph is handed to
 * the caller (nnp_graph_destroy); otherwise it is freed. */
nnp_status nnp_eval_qdq(const nnp_graph *fp32, const nnp_calib_table *t, const char *const *keep, int n_keep,
                        const nnp_plan_options *po, const nnp_eval_set *e, nnp_eval_result *r, nnp_graph **qdq_out);

/* Median latency (ms) of plans a and b on input x, reps runs each, alternating a and b
 * (after one warm-up run each), so both see the same machine load. */
nnp_status nnp_time_interleaved(nnp_plan *a, nnp_plan *b, const nnp_tensor *x, int reps, double *p50_a,
                                double *p50_b);

#endif
