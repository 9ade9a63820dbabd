/* Output of `nnperf llm bench`: the result document of kind "llm" (JSON, schema in
 * docs/result-schema.md), the human tables, CSV and the HTML report. */
#ifndef NNP_LLM_REPORT_H
#define NNP_LLM_REPORT_H

#include <stdio.h>

#include "nnperf/llm_bench.h"

void nnp_llm_report_json(FILE *f, const nnp_llm_result *r);
/* One request's record ({"id", "warmup", "ok", "prompt_tokens", "t_due", "t_sent",
 * "t_done", "error", "token_t", "tokens"}), as both LLM documents write it. */
void nnp_llm_write_request(FILE *f, const nnp_llm_request *q);
nnp_status nnp_llm_write_json(const nnp_llm_result *r, const char *path);
nnp_status nnp_llm_write_csv(const nnp_llm_result *r, const char *path);
nnp_status nnp_llm_write_html(const nnp_llm_result *r, const char *path);
void nnp_llm_report_table(FILE *f, const nnp_llm_result *r);


#endif
