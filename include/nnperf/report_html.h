/* The HTML report: one self-contained file (no network, no scripts needed to read it)
 * with inline SVG charts of a bench result. docs/report.md describes what it shows. */
#ifndef NNPERF_REPORT_HTML_H
#define NNPERF_REPORT_HTML_H

#include <stdio.h>

#include "nnperf/bench.h"
#include "nnperf/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Writes the whole page to f: summary table (P50/P99 with CIs, throughput, memory, load,
 * cold start, accuracy), per row a latency CDF and a box plot, bar charts of P50/P99
 * (CI whiskers), peak memory, load and cold start, the environment, and the full result
 * JSON (raw samples included) embedded in the page and as a download link (data: URI).
 * Responsive for phones; print CSS hides the download links. */
void nnp_report_html(FILE *f, const nnp_bench_result *r);

/* Writes the page to path atomically. */
nnp_status nnp_report_write_html(const nnp_bench_result *r, const char *path);

#ifdef __cplusplus
}
#endif
#endif
