/* Output agreement between a row and the reference row, for the same seeded inputs. */
#ifndef NNP_BENCH_ACCURACY_H
#define NNP_BENCH_ACCURACY_H

#include "nnperf/bench.h"

/* Compares outputs got[0..n) with ref[0..n) (same order). max_rel is the largest absolute
 * error divided by the largest |ref| of that output (error relative to the output's
 * scale: per-element relative error is meaningless for values near zero). top1/top5 are
 * computed for [N, C] float outputs with C >= 5, else set to -1. within_tol when every
 * output's max_rel <= rtol and shapes match. */
void nnp_accuracy_compare(const nnp_tensor *got, const nnp_tensor *ref, int n, double rtol, nnp_accuracy *acc);

/* Default tolerance for a precision (fp32 1e-4, fp16 1e-2, int8 and mixed 5e-2). */
double nnp_accuracy_default_rtol(nnp_precision p);

#endif
