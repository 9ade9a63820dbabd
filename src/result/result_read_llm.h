/* Reading the LLM kinds of document, "llm" (result_read_llm.c) and "llm-load"
 * (result_read_llm_load.c), called by the result reader once the header common to every
 * kind is read. */
#ifndef NNP_RESULT_READ_LLM_H
#define NNP_RESULT_READ_LLM_H

#include "nnperf/llm.h"
#include "result/read_fields.h"

/* The llm section and the rows' bench mirrors of root into r (header already read). */
nnp_status nnp_result_read_llm(nnp_reader *rd, json_t *root, nnp_bench_result *r);
/* One request record as src/llm/llm_json.c writes it (nnp_llm_write_request); both LLM
 * kinds use it. On failure q may hold token times: the caller frees q. */
nnp_status nnp_rd_read_llm_request(nnp_reader *rd, json_t *o, nnp_llm_request *q);
/* A kind "llm-load" document (result_read_llm_load.c), header already read. */
nnp_status nnp_result_read_llm_load(nnp_reader *rd, json_t *root, nnp_bench_result *r);

#endif
