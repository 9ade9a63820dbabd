/* A minimal test harness: CHECK records failures and goes on; TEST_MAIN prints the
 * closing "N passed, N failed" line and returns non-zero on any failure. */
#ifndef NNP_TEST_H
#define NNP_TEST_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int test_checks_passed, test_checks_failed;

#define CHECK(cond)                                                       \
  do {                                                                    \
    if (cond) test_checks_passed++;                                       \
    else {                                                                \
      test_checks_failed++;                                               \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                     \
  } while (0)

#define CHECK_MSG(cond, ...)                                              \
  do {                                                                    \
    if (cond) test_checks_passed++;                                       \
    else {                                                                \
      test_checks_failed++;                                               \
      fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                       \
      fputc('\n', stderr);                                                \
    }                                                                     \
  } while (0)

#define CHECK_OK(expr)                                                    \
  do {                                                                    \
    nnp_status check_s_ = (expr);                                         \
    CHECK_MSG(check_s_ == NNP_OK, "%s -> %s: %s", #expr,                  \
              nnp_status_name(check_s_), nnp_last_error());               \
  } while (0)

#define CHECK_NEAR(a, b, tol)                                             \
  do {                                                                    \
    double check_a_ = (a), check_b_ = (b);                                \
    CHECK_MSG(fabs(check_a_ - check_b_) <= (tol), "%s = %g, %s = %g", #a, \
              check_a_, #b, check_b_);                                    \
  } while (0)

#define TEST_MAIN_END()                                                   \
  do {                                                                    \
    printf("%d passed, %d failed\n", test_checks_passed, test_checks_failed); \
    return test_checks_failed ? 1 : 0;                                    \
  } while (0)

#endif
