/* Output agreement between a row and the reference row, for the same seeded inputs. */
#ifndef NNP_BENCH_ACCURACY_H
#define NNP_BENCH_ACCURACY_H

#include <stddef.h>

#include "nnperf/bench.h"

/* What makes a row "within tolerance" of the reference. Each precision gets the measure
 * that fits its error: fp32 and fp16 round, so every element stays close and the largest
 * error bounds them all (max_rel); int8 and mixed rows carry quantization noise, whose
 * worst element on seeded inputs routinely exceeds 5% of the output's scale in a correctly
 * quantized model, so they are judged as quantization is judged elsewhere (nnperf quantize
 * --compare, docs/quantization.md): output cosine, and top-1 agreement for classifiers. */
typedef struct nnp_accuracy_criterion {
  double rtol;           /* max_rel <= rtol; INFINITY: max_rel is reported, not judged */
  double min_cosine;     /* cosine (min over outputs) >= this; -INFINITY: not judged */
  double min_top1;       /* top-1 agreement >= this, judged when the classifier output has */
  int64_t top1_min_rows; /* ... at least this many rows (a fraction of fewer is not one) */
} nnp_accuracy_criterion;

/* The criterion for a precision: fp32 max_rel <= 1e-4, fp16 max_rel <= 1e-2, int8 and
 * mixed cosine >= 0.99 and, over 10 or more classifier rows, top-1 agreement >= 0.9. */
nnp_accuracy_criterion nnp_accuracy_default_criterion(nnp_precision p);

/* The criterion in words for tables and the JSON, e.g. "max_rel <= 1e-04" or
 * "cosine >= 0.99, top-1 >= 90% over 10+ rows". */
void nnp_accuracy_criterion_text(const nnp_accuracy_criterion *c, char *buf, size_t n);

/* Compares outputs got[0..n) with ref[0..n) (same order). max_rel is the largest absolute
 * error divided by the largest |ref| of that output (error relative to the output's
 * scale: per-element relative error is meaningless for values near zero); cosine is the
 * smallest over the outputs. top1/top5 are computed for [N, C] float outputs with C >= 5,
 * else set to -1. within_tol when shapes match and the criterion holds; acc->criterion
 * says which one was applied. */
void nnp_accuracy_compare(const nnp_tensor *got, const nnp_tensor *ref, int n, const nnp_accuracy_criterion *crit,
                          nnp_accuracy *acc);

#endif
