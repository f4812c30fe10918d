/* pterun: run ExecuTorch programs (.pte) on a CPU, from C.
 *
 * Overview
 *   program  a verified .pte file (pterun_program_load_file)
 *   registry operator name -> kernel; kernel libraries are added explicitly
 *   method   one entry point of a program, loaded against a registry
 *
 * Example
 *   pterun_registry* reg = pterun_registry_default();
 *   pterun_registry_add(reg, pterun_kernels_portable());
 *   pterun_program* prog;
 *   if (pterun_program_load_file("model.pte", PTERUN_FILE_MMAP, NULL, &prog)) ...;
 *   pterun_method* m;
 *   if (pterun_method_load(prog, "forward", NULL, &m)) ...;
 *   int64_t sizes[2] = {2, 3}; float x[6] = {0};
 *   pterun_tensor_view in = {PTERUN_DTYPE_F32, 2, sizes, NULL, x, sizeof x};
 *   pterun_method_set_input(m, 0, &in);
 *   pterun_method_execute(m);
 *   const pterun_value* out; pterun_method_output(m, 0, &out);
 *   ... out->u.tensor->data ...
 *   pterun_method_destroy(m); pterun_program_destroy(prog);
 *
 * Every fallible call returns a pterun_status; pterun_status_str() describes
 * it and the logger (see log.h) receives the details.
 */
#ifndef PTERUN_INCLUDE_PTERUN_PTERUN_H_
#define PTERUN_INCLUDE_PTERUN_PTERUN_H_

#include "pterun/allocator.h"
#include "pterun/backend.h"
#include "pterun/bundled.h"
#include "pterun/cpu.h"
#include "pterun/data.h"
#include "pterun/etdump.h"
#include "pterun/event_tracer.h"
#include "pterun/export.h"
#include "pterun/file.h"
#include "pterun/kernel.h"
#include "pterun/log.h"
#include "pterun/method.h"
#include "pterun/options.h"
#include "pterun/profile.h"
#include "pterun/program.h"
#include "pterun/registry.h"
#include "pterun/status.h"
#include "pterun/tensor.h"
#include "pterun/value.h"
#include "pterun/version.h"

#endif /* PTERUN_INCLUDE_PTERUN_PTERUN_H_ */
