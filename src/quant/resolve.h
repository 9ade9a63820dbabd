/* What a validation set can resolve (issue 25: a 1% budget on 39 images, where one image
 * is 2.6 points, silently meant "no disagreement at all"). */
#ifndef NNP_QUANT_RESOLVE_H
#define NNP_QUANT_RESOLVE_H

#include "nnperf/status.h"

/* 95% Wilson score interval of a proportion k/n (n > 0), as fractions. */
void nnp_wilson95(int k, int n, double *lo, double *hi);

/* NNP_OK when a top-1 agreement-loss budget (percentage points) means what it says on n
 * images: 0 (no disagreement) or at least one image's worth (100/n points); otherwise an
 * error naming the size of one image and the images that budget needs. */
nnp_status nnp_budget_resolvable(double budget_pct, int n);

#endif
