/* Validation-set resolution: see resolve.h. Wilson, not the normal approximation: the
 * agreement of a mixed model is near 100%, where the normal interval collapses to a point
 * (37/39 would read [87%, 103%]; 39/39 [100%, 100%]). */
#include <math.h>

#include "quant/resolve.h"

void nnp_wilson95(int k, int n, double *lo, double *hi) {
  const double z = 1.959963984540054;
  double p = (double)k / n, z2n = z * z / n;
  double centre = (p + z2n / 2) / (1 + z2n);
  double half = z / (1 + z2n) * sqrt(p * (1 - p) / n + z2n / (4.0 * n));
  *lo = centre - half < 0 ? 0 : centre - half;
  *hi = centre + half > 1 ? 1 : centre + half;
}

nnp_status nnp_budget_resolvable(double budget_pct, int n) {
  if (n <= 0) return nnp_error(NNP_ERR_INVALID, "no validation images: an accuracy budget needs --val images");
  double one = 100.0 / n;
  if (budget_pct == 0 || budget_pct >= one - 1e-9) return NNP_OK;
  return nnp_error(NNP_ERR_INVALID,
                   "a %.3g%% budget cannot be resolved by %d validation images: one image is %.2f points, so it "
                   "would mean no disagreement at all; give --accuracy-budget 0 for that, a budget of at least "
                   "%.2f%%, or at least %d images",
                   budget_pct, n, one, one, (int)ceil(100.0 / budget_pct));
}
