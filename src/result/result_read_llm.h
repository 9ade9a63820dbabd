/* Reading a kind "llm" document (result_read_llm.c), called by the result reader once
 * the header common to every kind is read. */
#ifndef NNP_RESULT_READ_LLM_H
#define NNP_RESULT_READ_LLM_H

#include "result/read_fields.h"

/* The llm section and the rows' bench mirrors of root into r (header already read). */
nnp_status nnp_result_read_llm(nnp_reader *rd, json_t *root, nnp_bench_result *r);

#endif
