/* INT8 calibration: activation ranges from running the FP32 model on calibration data.
 *
 * For every Conv / Gemm / MatMul, the activation input (input 0) and the output are
 * observed over all calibration samples: min, max and a histogram of |x|. A calibrator
 * turns the statistics into a range [lo, hi] per tensor:
 *   minmax      the observed [min, max]
 *   percentile  |x| clipped at the given percentile of |x| (e.g. 99.99)
 *   entropy     |x| clipped at the threshold whose 128-level quantized distribution is
 *               closest (Kullback-Leibler) to the observed one: TensorRT's entropy
 *               calibrator (Migacz, "8-bit inference with TensorRT", GTC 2017), 2048 bins
 * Weights need no data: per output channel, symmetric, scale = max|w| / 127.
 *
 * Calibration tables are text, one tensor a line, so they diff and can be edited:
 *   nnperf-calibration-table 1
 *   calibrator entropy
 *   samples 16
 *   range <lo> <hi> <tensor name to end of line>
 * Floats are written with %.9g, so a reloaded table gives bit-identical ranges. */
#ifndef NNP_QUANT_CALIBRATE_H
#define NNP_QUANT_CALIBRATE_H

#include <stdint.h>

#include "nnperf/ir.h"
#include "nnperf/status.h"
#include "nnperf/tensor.h"
#include "quant/calib_data.h"

#define NNP_CALIB_TABLE_VERSION 1
#define NNP_HIST_BINS 2048
#define NNP_ENTROPY_LEVELS 128 /* int8's positive levels: the |x| histogram maps onto them */

typedef enum nnp_calibrator {
  NNP_CALIBRATOR_MINMAX = 0,
  NNP_CALIBRATOR_PERCENTILE = 1,
  NNP_CALIBRATOR_ENTROPY = 2
} nnp_calibrator;

const char *nnp_calibrator_name(nnp_calibrator c);
/* "minmax", "percentile", "entropy". */
nnp_status nnp_calibrator_parse(const char *s, nnp_calibrator *out);

/* Statistics of one tensor. The histogram covers |x| in [0, range) with NNP_HIST_BINS
 * equal bins; when a larger |x| arrives, range doubles (adjacent bins merge) until it
 * fits, so one pass over the data suffices and no count is ever lost. Non-finite
 * values are counted in `nonfinite` and otherwise ignored. */
typedef struct nnp_hist {
  double min, max, range;
  uint64_t count, nonfinite;
  uint64_t bins[NNP_HIST_BINS];
} nnp_hist;

void nnp_hist_init(nnp_hist *h);
void nnp_hist_add(nnp_hist *h, const float *x, int64_t n);
/* |x| below which pct percent of the values lie (upper edge of that bin). */
double nnp_hist_percentile(const nnp_hist *h, double pct);
/* The entropy calibrator's |x| threshold for `levels` quantization levels. */
double nnp_hist_entropy_threshold(const nnp_hist *h, int levels);

typedef struct nnp_calib_entry {
  char *name;
  float lo, hi;
} nnp_calib_entry;

typedef struct nnp_calib_table {
  nnp_calibrator calibrator;
  int samples;
  int n;
  nnp_calib_entry *entries;
} nnp_calib_table;

void nnp_calib_table_free(nnp_calib_table *t);
const nnp_calib_entry *nnp_calib_table_find(const nnp_calib_table *t, const char *name);
nnp_status nnp_calib_table_save(const nnp_calib_table *t, const char *path);
nnp_status nnp_calib_table_load(const char *path, nnp_calib_table *out);

/* The range a calibrator gives for one tensor's statistics. */
void nnp_calib_range(const nnp_hist *h, nnp_calibrator c, double percentile, float *lo, float *hi);

/* Runs g (FP32, single input) on every item of set and fills out with the range of
 * every Conv/Gemm/MatMul activation input and output. percentile is used by
 * NNP_CALIBRATOR_PERCENTILE (e.g. 99.99). */
nnp_status nnp_calibrate(const nnp_graph *g, const nnp_calib_set *set, nnp_calibrator c, double percentile,
                         nnp_calib_table *out);

/* Per-channel symmetric int8 scales of weight w along axis (0 for Conv's output
 * channels): scales[i] = max|w| over channel i / 127 (a channel of zeros gets 1, any
 * positive scale represents it exactly). scales holds w->dims[axis] floats. */
nnp_status nnp_weight_scales(const nnp_tensor *w, int axis, float *scales);

#endif
