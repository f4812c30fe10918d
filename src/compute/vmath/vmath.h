/* f32 vector math of libpterun_compute: the per-width variants (internal). */
#ifndef PTERUN_SRC_COMPUTE_VMATH_VMATH_H_
#define PTERUN_SRC_COMPUTE_VMATH_VMATH_H_

#include <stddef.h>

#include "src/compute/internal.h"

typedef void (*pc_vm_fn)(const float* x, float* y, size_t n);

#define PC_VM_DECLARE(suffix)                                                                      \
  void pc_f32_exp__##suffix(const float* x, float* y, size_t n);                                   \
  void pc_f32_sigmoid__##suffix(const float* x, float* y, size_t n);                               \
  void pc_f32_silu__##suffix(const float* x, float* y, size_t n);                                  \
  void pc_f32_tanh__##suffix(const float* x, float* y, size_t n);                                  \
  void pc_f32_erf__##suffix(const float* x, float* y, size_t n);                                   \
  void pc_f32_gelu__##suffix(const float* x, float* y, size_t n);                                  \
  void pc_f32_gelu_tanh__##suffix(const float* x, float* y, size_t n);                             \
  float pc_f32_dot__##suffix(const float* a, const float* b, size_t n);                            \
  void pc_f32_axpby__##suffix(float* y, float beta, float alpha, const float* x, size_t n);        \
  void pc_f32_scale__##suffix(float* y, float s, size_t n);                                        \
  float pc_f32_exp_sum__##suffix(float* y, const float* x, float m, size_t n);                     \
  float pc_f32_sum__##suffix(const float* x, size_t n);                                            \
  float pc_f32_dev_sq_sum__##suffix(float* y, const float* x, float m, size_t n);                  \
  float pc_f32_max__##suffix(const float* x, size_t n);
PC_VM_DECLARE(v4)
PC_VM_DECLARE(avx2)
PC_VM_DECLARE(avx512f)
#undef PC_VM_DECLARE

#endif
