/* Shape inference on the IR: the dtype and shape of every value of a graph, for given
 * input shapes, from each op's own `infer` (ops/op.h), and the data of the values known
 * at load time.
 *
 * Shapes are a property of the graph: the graph passes (ir/passes) read them here, the
 * plan compiler (engine/plan.c) builds its plan from them, and the XNNPACK translation
 * reads them without compiling a plan.
 *
 * Values known at load time are initializers, inputs frozen to a value, and the outputs
 * of nodes evaluated here with the reference kernel: nodes of shape-only ops (Shape,
 * Size, ...) and nodes whose inputs are all known and whose outputs hold at most
 * NNP_LOAD_EVAL_MAX_ELEMS elements, so shape arithmetic (Shape -> Gather -> Concat ->
 * Reshape) makes the shapes behind it static. */
#ifndef NNP_IR_SHAPE_INFER_H
#define NNP_IR_SHAPE_INFER_H

#include <stdbool.h>
#include <stddef.h>

#include "nnperf/ir.h"
#include "nnperf/status.h"
#include "nnperf/tensor.h"

/* Enough for any shape computation, small enough that load-time evaluation never hides
 * real compute from the timed run. */
#define NNP_LOAD_EVAL_MAX_ELEMS 4096

typedef struct nnp_value_shape {
  nnp_tensor t; /* dtype, rank, dims; data only when known (NULL otherwise) */
  bool used;    /* an initializer, a graph input, or read or written by a node */
  bool known;   /* data known at load time */
  bool owns;    /* t.data belongs to the shapes (evaluated here, or a frozen input's copy) */
} nnp_value_shape;

typedef struct nnp_graph_shapes {
  int n_values;
  nnp_value_shape *values; /* by value index of the graph */
  int n_nodes;
  bool *evaluated;         /* by node: evaluated at load time (no step at run time) */
  size_t *scratch;         /* by node: scratch bytes its reference kernel needs */
} nnp_graph_shapes;

/* Lists every node whose op nnperf lacks, in one message (NNP_ERR_UNSUPPORTED). */
nnp_status nnp_graph_check_ops(const nnp_graph *g);

/* Infers the shapes of g for inputs[i], the dtype and shape of graph input i (index into
 * g->inputs); an input whose data is non-NULL is frozen to that value (copied). Every op
 * must be known (nnp_graph_check_ops first). Errors name the node. */
nnp_status nnp_graph_shapes_infer(const nnp_graph *g, const nnp_tensor *inputs, nnp_graph_shapes **out);
void nnp_graph_shapes_destroy(nnp_graph_shapes *s);

/* The inferred tensor of value v (dtype, rank, dims; data when known), or NULL for a
 * value no node reads or writes, or one added to the graph after the inference. */
const nnp_tensor *nnp_graph_shape(const nnp_graph_shapes *s, int v);
bool nnp_graph_shape_known(const nnp_graph_shapes *s, int v);

/* Writes the inferred dtype, rank and dims into g's values (the graph's own record of
 * its shapes; graph inputs keep their declared, possibly symbolic, dims). */
void nnp_graph_shapes_apply(nnp_graph *g, const nnp_graph_shapes *s);

#endif
