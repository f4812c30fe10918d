/* pterun: bundled programs (.bpte, identifier BP08).
 *
 * A bundled program is an ExecuTorch program plus test suites: per method,
 * test cases of inputs and expected outputs (made by
 * executorch.devtools.bundled_program). Like a .pte it is untrusted input:
 * every table, vector, union, tensor shape and size is verified at load, and
 * the embedded program is then verified as any .pte. The embedded program is
 * used in place (zero copy): the format aligns it to 32 bytes in the file.
 */
#ifndef PTERUN_INCLUDE_PTERUN_BUNDLED_H_
#define PTERUN_INCLUDE_PTERUN_BUNDLED_H_

#include <stddef.h>
#include <stdint.h>

#include "pterun/data.h"
#include "pterun/export.h"
#include "pterun/method.h"
#include "pterun/program.h"
#include "pterun/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pterun_bundle pterun_bundle;

/** ExecuTorch's defaults for verify_method_outputs. */
#define PTERUN_BUNDLE_DEFAULT_RTOL 1e-5
#define PTERUN_BUNDLE_DEFAULT_ATOL 1e-8

/** 1 if the buffer carries the BP08 identifier (says nothing about validity). */
PTERUN_API int pterun_is_bundled_program(const void* data, size_t size);

/** Verifies a bundle held by the caller (zero copy unless options->copy;
 *  data must be 32-byte aligned then, and outlive the bundle).
 *  @retval PTERUN_STATUS_INVALID_PROGRAM malformed (the log names what) */
PTERUN_API pterun_status pterun_bundle_load_buffer(const void* data, size_t size,
                                                   const pterun_load_options* options,
                                                   pterun_bundle** bundle_out);
PTERUN_API pterun_status pterun_bundle_load_file(const char* path, pterun_file_mode mode,
                                                 const pterun_load_options* options,
                                                 pterun_bundle** bundle_out);
/** NULL is a no-op. Programs made from the bundle must be destroyed first. */
PTERUN_API void pterun_bundle_destroy(pterun_bundle* bundle);

/** The embedded program, verified, borrowing the bundle's bytes (the bundle
 *  must outlive it). `options` as for pterun_program_load_buffer (copy = 1
 *  gives an independent copy). */
PTERUN_API pterun_status pterun_bundle_program(const pterun_bundle* bundle,
                                               const pterun_load_options* options,
                                               pterun_program** program_out);
/** The embedded program's bytes (inside the bundle). */
PTERUN_API void pterun_bundle_program_bytes(const pterun_bundle* bundle, const void** data_out,
                                            size_t* size_out);

/** Schema version written by the exporter (BundledProgram.version). */
PTERUN_API uint32_t pterun_bundle_version(const pterun_bundle* bundle);
/** Test suites, one per method that has test cases. */
PTERUN_API size_t pterun_bundle_suite_count(const pterun_bundle* bundle);
/** Suite i: its method's name (owned by the bundle) and case count. */
PTERUN_API pterun_status pterun_bundle_suite(const pterun_bundle* bundle, size_t suite,
                                             const char** method_name_out, size_t* case_count_out);
/** @retval PTERUN_STATUS_NOT_FOUND no suite for that method */
PTERUN_API pterun_status pterun_bundle_find_suite(const pterun_bundle* bundle,
                                                  const char* method_name, size_t* suite_out);
/** Inputs and expected outputs of one test case. */
PTERUN_API pterun_status pterun_bundle_case(const pterun_bundle* bundle, size_t suite,
                                            size_t test_case, size_t* input_count_out,
                                            size_t* expected_output_count_out);

/** One bundled value: a tensor (data borrowed from the bundle) or a scalar. */
typedef struct pterun_bundle_value {
  int32_t tag; /* PTERUN_VALUE_TENSOR, _INT, _BOOL or _DOUBLE */
  int32_t dtype;
  uint32_t rank;
  int64_t sizes[PTERUN_MAX_RANK];
  uint8_t dim_order[PTERUN_MAX_RANK];
  const void* data;
  size_t nbytes;
  int64_t i;
  double d;
  int b;
} pterun_bundle_value;

/** Input (is_output 0) or expected output (1) k of a test case. */
PTERUN_API pterun_status pterun_bundle_value_get(const pterun_bundle* bundle, size_t suite,
                                                 size_t test_case, int is_output, size_t k,
                                                 pterun_bundle_value* out);

/**
 * Binds every input of test case `test_case` of `suite` to `method` (a
 * method of the bundle's program with that suite's name). Tensor inputs are
 * bound with pterun_method_set_input (planned ones copied; unplanned ones
 * point into the bundle, which must then outlive the executes).
 * @retval PTERUN_STATUS_INPUT_MISMATCH a case input does not fit the method
 */
PTERUN_API pterun_status pterun_bundle_set_inputs(const pterun_bundle* bundle, size_t suite,
                                                  size_t test_case, pterun_method* method);

/** What pterun_bundle_verify_outputs found. */
typedef struct pterun_bundle_check {
  int passed;
  size_t outputs_compared;
  size_t failed_output; /* first output that did not match (when !passed) */
  uint64_t mismatched;  /* its elements outside the tolerance */
  double max_abs_error; /* over all compared floating elements */
  double max_rel_error; /* |a-e| / |e|, elements with e != 0 */
  char message[192];    /* why it failed, "" when it passed */
} pterun_bundle_check;

/**
 * Compares the method's outputs (after execute) with the case's expected
 * outputs by ExecuTorch's rule: same dtype, sizes and layout; float32,
 * float64 and float16 elements close when both are NaN, both infinite with
 * one sign, or |out - expected| <= atol + rtol * |out|; every other dtype
 * (bfloat16 included) byte for byte. Returns OK when the comparison ran,
 * whether or not it passed (see check_out->passed).
 * @retval PTERUN_STATUS_NOT_SUPPORTED the case has no expected outputs, or a
 *         non-tensor expected output (ExecuTorch verifies tensors only)
 */
PTERUN_API pterun_status pterun_bundle_verify_outputs(const pterun_bundle* bundle, size_t suite,
                                                      size_t test_case, const pterun_method* method,
                                                      double rtol, double atol,
                                                      pterun_bundle_check* check_out);

#ifdef __cplusplus
}
#endif
#endif /* PTERUN_INCLUDE_PTERUN_BUNDLED_H_ */
