/* See ladder.h. Only the nearest measured rung counts: each rung adds one optimisation to
 * the one before it, so that is the comparison that says what the optimisation did. */
#include "report/ladder.h"

int nnp_ladder_backwards(const double *p50, int n, double tol, int *prev) {
  int count = 0, last = -1;
  for (int k = 0; k < n; k++) {
    prev[k] = -1;
    if (!(p50[k] > 0)) continue;
    if (last >= 0 && p50[k] > p50[last] * (1 + tol)) {
      prev[k] = last;
      count++;
    }
    last = k;
  }
  return count;
}
