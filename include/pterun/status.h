/* pterun: status codes. Every fallible call returns one of these. */
#ifndef PTERUN_INCLUDE_PTERUN_STATUS_H_
#define PTERUN_INCLUDE_PTERUN_STATUS_H_

#include "pterun/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* X(NAME, value, description). Values are pinned: never renumber or reuse one.
 * New codes are appended. */
#define PTERUN_STATUS_LIST(X)                                                                      \
  X(OK, 0, "ok")                                                                                   \
  X(INTERNAL, 1, "internal error")                                                                 \
  X(INVALID_STATE, 2, "call made in the wrong state")                                              \
  X(INVALID_ARGUMENT, 3, "invalid argument")                                                       \
  X(INVALID_TYPE, 4, "value has the wrong type")                                                   \
  X(NOT_SUPPORTED, 5, "not supported")                                                             \
  X(NOT_FOUND, 6, "not found")                                                                     \
  X(OUT_OF_MEMORY, 7, "memory allocation failed")                                                  \
  X(IO_ERROR, 8, "file access failed")                                                             \
  X(INVALID_PROGRAM, 9, "program is malformed")                                                    \
  X(INCOMPATIBLE_VERSION, 10, "program format version is not supported")                           \
  X(OPERATOR_MISSING, 11, "no kernel registered for an operator")                                  \
  X(ALREADY_REGISTERED, 12, "a different kernel is already registered")                            \
  X(ABI_MISMATCH, 13, "kernel library ABI version mismatch")                                       \
  X(BACKEND_UNAVAILABLE, 14, "delegate backend is not available")                                  \
  X(INVALID_EXTERNAL_DATA, 15, "external data is missing or does not match")                       \
  X(MEMORY_PLAN, 16, "planned memory is too small or out of range")                                \
  X(INSTRUCTION_BUDGET, 17, "instruction budget exhausted")                                        \
  X(KERNEL_FAILED, 18, "kernel reported an error")                                                 \
  X(INPUT_MISMATCH, 19, "input does not match the method's signature")                             \
  X(INVALID_DATA, 20, "input file is malformed")

typedef enum pterun_status {
#define PTERUN_STATUS_ENUM_(name, value, text) PTERUN_STATUS_##name = value,
  PTERUN_STATUS_LIST(PTERUN_STATUS_ENUM_)
#undef PTERUN_STATUS_ENUM_
      PTERUN_STATUS_COUNT_ /* not a status; one past the largest */
} pterun_status;

/** Evaluates `expr` (a pterun_status) once and returns it from the calling
 *  function unless it is PTERUN_STATUS_OK:
 *  `PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &self));`
 *  The runtime and every kernel library propagate statuses with it. */
#define PTERUN_TRY(expr)                                                                           \
  do {                                                                                             \
    pterun_status pterun_try_s_ = (expr);                                                          \
    if (pterun_try_s_ != PTERUN_STATUS_OK) return pterun_try_s_;                                   \
  } while (0)

/** Short human-readable description of a status ("program is malformed").
 *  Never NULL; unknown values give "unknown status". Static storage. */
PTERUN_API const char* pterun_status_str(pterun_status status);

/** The status's symbolic name without prefix ("INVALID_PROGRAM").
 *  Never NULL; unknown values give "UNKNOWN". Static storage. */
PTERUN_API const char* pterun_status_name(pterun_status status);

#ifdef __cplusplus
}
#endif
#endif /* PTERUN_INCLUDE_PTERUN_STATUS_H_ */
