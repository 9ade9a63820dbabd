/* See progress_text.h. The time left is the mean time of a finished row times the rows
 * left: rows differ (a Python worker starts slower than native), but a sweep's rows repeat
 * the same backends, so the mean is the honest simple estimate. */
#include <stdio.h>

#include "report/progress_text.h"

void nnp_progress_text(char *buf, size_t n, const char *phase, int done, int total, double elapsed_s, int rows_done,
                       int rows_total) {
  int w = 0;
  if (total > 0 && done <= total) w = snprintf(buf, n, "%-8s %d/%d", phase, done, total);
  else if (total > 0) w = snprintf(buf, n, "%-8s %d (%d done, min time)", phase, done, total);
  else w = snprintf(buf, n, "%-8s", phase);
  if (w < 0 || (size_t)w >= n || rows_done <= 0 || rows_done >= rows_total || !(elapsed_s > 0)) return;
  double left = elapsed_s / rows_done * (rows_total - rows_done);
  long s = (long)(left + 0.5);
  if (s >= 60) snprintf(buf + w, n - (size_t)w, ", ~%ldm%02lds left", s / 60, s % 60);
  else snprintf(buf + w, n - (size_t)w, ", ~%lds left", s);
}
