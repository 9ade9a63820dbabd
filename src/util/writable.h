/* Checking, before a long measurement, that its result file can be written at the end:
 * a sweep of many rows that fails only at its last step has wasted all of them. */
#ifndef NNP_UTIL_WRITABLE_H
#define NNP_UTIL_WRITABLE_H

#include "nnperf/status.h"

/* NNP_OK when path could be written by nnp_atomic_open/commit now: its folder exists, is
 * a folder we may create files in, and path itself is not a folder. Otherwise
 * NNP_ERR_IO with a message naming path and the cause. Writes nothing. */
nnp_status nnp_check_writable(const char *path);

#endif
