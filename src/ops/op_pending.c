/* TEMPORARY during bring-up: weak descriptors for ops whose family file is not written
 * yet, so the table links. An op with a NULL infer is reported as unsupported by
 * nnp_op_lookup. This file is deleted once every op in op_list.h is implemented. */
#include "ops/op.h"

#define NNP_OP_WEAK_(E, s, nm) __attribute__((weak)) const nnp_op_info nnp_op_##s = {.name = nm};
NNP_OP_LIST(NNP_OP_WEAK_)
