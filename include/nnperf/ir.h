/* The intermediate representation: a graph of nodes over named values.
 *
 * Ownership: the graph owns every string, array and initializer tensor reachable from
 * it; nnp_graph_destroy frees them all. Values are addressed by index. */
#ifndef NNPERF_IR_H
#define NNPERF_IR_H

#include <stdbool.h>
#include <stdint.h>

#include "nnperf/status.h"
#include "nnperf/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* AttributeProto.AttributeType numbers. */
typedef enum nnp_attr_type {
  NNP_ATTR_UNDEFINED = 0,
  NNP_ATTR_FLOAT = 1,
  NNP_ATTR_INT = 2,
  NNP_ATTR_STRING = 3,
  NNP_ATTR_TENSOR = 4,
  NNP_ATTR_GRAPH = 5,
  NNP_ATTR_FLOATS = 6,
  NNP_ATTR_INTS = 7,
  NNP_ATTR_STRINGS = 8,
  NNP_ATTR_TENSORS = 9,
  NNP_ATTR_GRAPHS = 10,
  NNP_ATTR_SPARSE_TENSOR = 11,
  NNP_ATTR_SPARSE_TENSORS = 12,
  NNP_ATTR_TYPE_PROTO = 13,
  NNP_ATTR_TYPE_PROTOS = 14
} nnp_attr_type;

typedef struct nnp_attr {
  char *name;
  nnp_attr_type type;
  float f;              /* FLOAT */
  int64_t i;            /* INT */
  char *s;              /* STRING (NUL-terminated copy; s_len excludes the NUL) */
  size_t s_len;
  size_t count;         /* number of elements of FLOATS / INTS / STRINGS / TENSORS */
  float *floats;
  int64_t *ints;
  char **strings;
  nnp_tensor *tensor;   /* TENSOR: one; TENSORS: count of them */
} nnp_attr;

/* A dimension: value >= 0 when known; -1 with symbol (e.g. "N", "batch") or without. */
typedef struct nnp_dim {
  int64_t value;
  char *symbol;
} nnp_dim;

typedef enum nnp_value_kind {
  NNP_VALUE_INTERMEDIATE = 0,
  NNP_VALUE_INPUT = 1,       /* graph input fed by the caller */
  NNP_VALUE_INITIALIZER = 2  /* constant data stored in the model */
} nnp_value_kind;

typedef struct nnp_value {
  char *name;
  nnp_value_kind kind;
  nnp_dtype dtype;       /* NNP_UNDEFINED when not declared */
  int rank;              /* -1 when not declared */
  nnp_dim dims[NNP_MAX_RANK];
  nnp_tensor *init;      /* initializer data (owned), NULL otherwise */
  int producer;          /* index of the node producing it, -1 if none */
  bool is_output;
} nnp_value;

typedef struct nnp_node {
  char *name;
  char *op_type;
  char *domain;          /* "" for the default ONNX domain */
  int op;                /* nnp_op_id from the op table; 0 (unknown) if not found */
  int n_inputs;
  int *inputs;           /* value indices; -1 for an omitted optional input */
  int n_outputs;
  int *outputs;          /* value indices; -1 for an omitted optional output */
  int n_attrs;
  nnp_attr *attrs;
} nnp_node;

typedef struct nnp_strmap nnp_strmap;

typedef struct nnp_graph {
  char *name;
  int64_t ir_version;
  int64_t opset;         /* opset version of the default domain */
  char *producer;
  int n_values, cap_values;
  nnp_value *values;
  int n_nodes, cap_nodes;
  nnp_node *nodes;       /* topological order after nnp_graph_toposort */
  int n_inputs, cap_inputs;
  int *inputs;           /* graph inputs that are not initializers */
  int n_outputs, cap_outputs;
  int *outputs;
  nnp_strmap *names;     /* value name -> index */
} nnp_graph;

nnp_status nnp_graph_create(nnp_graph **out);
void nnp_graph_destroy(nnp_graph *g);

/* Index of value `name`, creating it if absent. */
nnp_status nnp_graph_value(nnp_graph *g, const char *name, int *index);
/* Index of value `name`, or -1. */
int nnp_graph_find_value(const nnp_graph *g, const char *name);
nnp_status nnp_graph_add_input(nnp_graph *g, int value);
nnp_status nnp_graph_add_output(nnp_graph *g, int value);
/* Appends a node (copies strings; inputs/outputs are value indices). The node's attrs
 * start empty: add them with nnp_node_add_attr. *index receives the node index. */
nnp_status nnp_graph_add_node(nnp_graph *g, const char *name, const char *op_type,
                              const char *domain, int n_inputs, const int *inputs,
                              int n_outputs, const int *outputs, int *index);
/* Appends a zeroed attribute with a copy of name; the caller fills the rest with
 * memory from nnp_malloc (the graph then owns it). */
nnp_status nnp_node_add_attr(nnp_node *n, const char *name, nnp_attr **out);
void nnp_attr_clear(nnp_attr *a);

/* Sets producers, checks that every input is defined (graph input, initializer or node
 * output), that no value has two producers, and orders nodes topologically.
 * Reports a cycle or an undefined input by node and value name. */
nnp_status nnp_graph_toposort(nnp_graph *g);

/* Attribute access, with defaults for absent attributes. */
const nnp_attr *nnp_node_attr(const nnp_node *n, const char *name);
int64_t nnp_attr_int(const nnp_node *n, const char *name, int64_t def);
float nnp_attr_float(const nnp_node *n, const char *name, float def);
const char *nnp_attr_string(const nnp_node *n, const char *name, const char *def);
/* Number of ints (and *out points at them), or -1 if the attribute is absent. */
int nnp_attr_ints(const nnp_node *n, const char *name, const int64_t **out);
int nnp_attr_floats(const nnp_node *n, const char *name, const float **out);

#ifdef __cplusplus
}
#endif
#endif
