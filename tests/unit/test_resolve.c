/* Validation-set resolution (issue 25): Wilson intervals against published values, and
 * which budgets a set of n images can resolve. */
#include <string.h>

#include "quant/resolve.h"
#include "test.h"

int main(void) {
  double lo, hi;
  /* 37/39: statsmodels proportion_confint(37, 39, method="wilson") = (0.8314, 0.9858) */
  nnp_wilson95(37, 39, &lo, &hi);
  CHECK_NEAR(lo, 0.8314, 5e-4);
  CHECK_NEAR(hi, 0.9858, 5e-4);
  /* 39/39: the upper end is 1, the lower n / (n + z^2) = 0.9101 */
  nnp_wilson95(39, 39, &lo, &hi);
  CHECK_NEAR(lo, 39 / (39 + 1.959963984540054 * 1.959963984540054), 1e-9);
  CHECK(hi == 1);
  nnp_wilson95(0, 10, &lo, &hi);
  CHECK(lo == 0 && hi > 0.2 && hi < 0.35);
  /* the case: 1% on 39 images is refused, with what would work */
  CHECK(nnp_budget_resolvable(1, 39) == NNP_ERR_INVALID);
  CHECK(strstr(nnp_last_error(), "2.56 points") && strstr(nnp_last_error(), "at least 100 images"));
  CHECK_OK(nnp_budget_resolvable(0, 39));   /* asked for explicitly */
  CHECK_OK(nnp_budget_resolvable(2.6, 39)); /* one image's worth */
  CHECK_OK(nnp_budget_resolvable(1, 100));
  CHECK(nnp_budget_resolvable(1, 0) == NNP_ERR_INVALID);
  TEST_MAIN_END();
}
