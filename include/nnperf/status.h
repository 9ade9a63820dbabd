/* Status codes and the error message that travels with them.
 *
 * Every public function returns an nnp_status. On failure the function records a
 * human-readable message (naming the file, node or field at fault) in a thread-local
 * buffer that nnp_last_error() returns until the next error is recorded. */
#ifndef NNPERF_STATUS_H
#define NNPERF_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum nnp_status {
  NNP_OK = 0,
  NNP_ERR_INVALID = 1,     /* bad argument or API misuse */
  NNP_ERR_IO = 2,          /* file could not be opened / read / written */
  NNP_ERR_FORMAT = 3,      /* malformed input file (model, tensor, npy) */
  NNP_ERR_UNSUPPORTED = 4, /* valid input that nnperf does not implement */
  NNP_ERR_SHAPE = 5,       /* shapes or types that do not fit the op */
  NNP_ERR_NOMEM = 6,       /* allocation failed */
  NNP_ERR_LIMIT = 7,       /* a configured or arithmetic limit was exceeded */
  NNP_ERR_INTERNAL = 8
} nnp_status;

const char *nnp_status_name(nnp_status s);

/* Records a printf-style message and returns s, so callers can write
 * `return nnp_error(NNP_ERR_SHAPE, "input '%s' has rank %d", name, r);` */
nnp_status nnp_error_record(nnp_status s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prepends "context: " to the message already recorded and returns s. Used while an
 * error travels outwards, e.g. to add "node 'conv1' (Conv)". */
nnp_status nnp_error_context_record(nnp_status s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The macros make the returned status visible to the compiler at the call site, so it
 * knows an error path never returns NNP_OK (no false "may be used uninitialized").
 * s is evaluated twice: pass a constant or a variable. */
static inline nnp_status nnp_status_after_(nnp_status recorded, nnp_status s) {
  (void)recorded;
  return s;
}
#define nnp_error(s, ...) nnp_status_after_(nnp_error_record((s), __VA_ARGS__), (s))
#define nnp_error_context(s, ...) nnp_status_after_(nnp_error_context_record((s), __VA_ARGS__), (s))

const char *nnp_last_error(void);
void nnp_clear_error(void);

#define NNP_TRY(expr)                 \
  do {                                \
    nnp_status nnp_try_s_ = (expr);   \
    if (nnp_try_s_ != NNP_OK)         \
      return nnp_try_s_;              \
  } while (0)

#ifdef __cplusplus
}
#endif
#endif
