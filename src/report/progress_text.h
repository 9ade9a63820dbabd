/* The one-line TTY progress of a sweep (issue 25: the counter ran past its target,
 * "measure 246/200", and nothing said how long the sweep had left). */
#ifndef NNP_REPORT_PROGRESS_TEXT_H
#define NNP_REPORT_PROGRESS_TEXT_H

#include <stddef.h>

/* "measure 120/200" while below the iteration target; "measure 246 (200 done, min time)"
 * past it (the steady state runs on until --min-time); then ", ~1m20s left" from the
 * elapsed time of the finished rows (rows_done of rows_total), when any finished. */
void nnp_progress_text(char *buf, size_t n, const char *phase, int done, int total, double elapsed_s, int rows_done,
                       int rows_total);

#endif
