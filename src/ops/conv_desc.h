/* The 2-D window of a Conv-family node (Conv, FusedConv, QLinearConv) for the fast
 * kernels: strides, dilations and beginning pads (from 'pads' or 'auto_pad') read once
 * here for the float and the INT8 prepare hooks. */
#ifndef NNP_OPS_CONV_DESC_H
#define NNP_OPS_CONV_DESC_H

#include <stdbool.h>

#include "kernels/conv.h"
#include "nnperf/ir.h"

/* d's sizes (h, w, oh, ow, kh, kw) must be set; fills sh, sw, dh, dw, ph, pw. *ok is
 * false when the attributes are outside what the fast kernels take (not 2-D, negative
 * pads or strides/dilations below 1): the caller then leaves the node to the reference
 * kernel. An unknown auto_pad is an error. Absent attributes take their defaults
 * (nnp_attr_ints answers -1 for them). */
nnp_status nnp_conv2d_read_window(const nnp_node *node, nnp_conv2d_desc *d, bool *ok);

#endif
