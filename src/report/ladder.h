/* An ablation ladder's rungs that went backwards (issue 25: explain's '+threads' rung at
 * 7.4 ms after 6.0 ms passed without a word). */
#ifndef NNP_REPORT_LADDER_H
#define NNP_REPORT_LADDER_H

/* For each rung k, prev[k] is the index of the nearest earlier measured rung whose P50 was
 * lower by more than tol (a fraction, e.g. 0.05), or -1. p50[k] <= 0 means not measured.
 * Returns how many rungs went backwards. */
int nnp_ladder_backwards(const double *p50, int n, double tol, int *prev);

#endif
