/* Numeric precision of a run: shared by the engine's backends (nnperf/backend.h) and the
 * benchmark tool (nnperf/bench.h), so the backend interface needs nothing of the tool. */
#ifndef NNPERF_PRECISION_H
#define NNPERF_PRECISION_H

#ifdef __cplusplus
extern "C" {
#endif

/* NNP_PREC_BF16 last: stored results name precisions, and code that reads >= NNP_INT8 as
 * "reduced precision, judged by cosine" takes bf16 in with it. */
typedef enum nnp_precision { NNP_FP32 = 0, NNP_FP16, NNP_INT8, NNP_MIXED, NNP_PREC_BF16 } nnp_precision;
const char *nnp_precision_name(nnp_precision p);
/* Parses "fp32" etc.; returns 0 on an unknown name. */
int nnp_precision_parse(const char *s, nnp_precision *out);

#ifdef __cplusplus
}
#endif
#endif
