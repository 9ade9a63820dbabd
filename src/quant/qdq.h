/* QDQ rewrite: turns an FP32 graph plus a calibration table into the QDQ form that ONNX
 * Runtime, OpenVINO and TensorRT read as "run this layer in INT8".
 *
 * For every Conv, Gemm and MatMul whose activation input has a calibrated range and
 * whose weight is a float32 initializer:
 *   activation  X -> QuantizeLinear -> DequantizeLinear -> node   (uint8, per tensor;
 *               range widened to include 0; a post-ReLU range [0, hi] gets zero point 0,
 *               which lets ORT drop the Relu in front of the Q)
 *   weight      int8 initializer, symmetric per output channel (zero point 0, values
 *               in [-127, 127]) -> DequantizeLinear(axis) -> node
 *   bias        int32 initializer with scale x_scale * w_scale[c] -> DequantizeLinear
 * One Q/DQ pair serves every consumer of an activation. Everything else stays FP32.
 * BatchNormalization after a Conv is folded into it first (nnp_qdq_fold_batchnorm).
 * Needs opset >= 13 (per-axis DequantizeLinear). */
#ifndef NNP_QUANT_QDQ_H
#define NNP_QUANT_QDQ_H

#include "nnperf/ir.h"
#include "nnperf/status.h"
#include "quant/calibrate.h"

typedef struct nnp_qdq_report {
  int quantized; /* nodes given Q/DQ inputs */
  int skipped;   /* Conv/Gemm/MatMul nodes left in FP32 (no range, weight not constant, ...) */
  int folded_bn; /* BatchNormalization nodes folded into the Conv before them */
} nnp_qdq_report;

/* Folds every BatchNormalization whose input is a Conv's only use into that Conv's
 * weights and bias (all float32 initializers), removing the BN node. The rewrite below
 * calls it first. */
nnp_status nnp_qdq_fold_batchnorm(nnp_graph *g, int *folded);

/* Rewrites g in place (nodes appended, then re-sorted). A node named in keep_fp32
 * (n_keep names) stays FP32: the mixed-precision hook. */
nnp_status nnp_qdq_rewrite(nnp_graph *g, const nnp_calib_table *t, const char *const *keep_fp32, int n_keep,
                           nnp_qdq_report *rep);

/* The nodes (indices into g->nodes, in graph order; *nodes allocated, free with
 * nnp_free) that nnp_qdq_rewrite would quantize with table t: the layers a sensitivity
 * analysis or a mixed-precision search chooses among. Gives every such node without a
 * name one ("<op>_node<index>"), since keep_fp32 names layers. */
nnp_status nnp_qdq_layers(nnp_graph *g, const nnp_calib_table *t, int **nodes, int *n);

/* uint8 activation parameters for the range [lo, hi] (widened to include 0). */
void nnp_qdq_act_params(float lo, float hi, float *scale, uint8_t *zero_point);

#endif
