# Per-source ISA flags for the SIMD microkernels of libpterun_compute
# (src/compute/gemm/f32_<isa>.c, src/compute/qgemm/qs8_<isa>.c). Included from the top-level CMakeLists.txt
# right after the pterun_compute target. Only these files get ISA
# flags; the library as a whole stays baseline, and pterun_cpu_features()
# decides at run time which microkernel runs (docs/performance.md).
#
# Each ISA has an option, on by default, that a toolchain lacking the ISA can
# switch off; it is also off when the compiler rejects the flags or the
# target is not x86-64. An enabled ISA defines PTERUN_GEMM_<ISA>=1, which
# switches on its rows in src/compute/gemm/f32_ukernels.inc.
include(CheckCCompilerFlag)

option(PTERUN_ENABLE_AVX2 "Build the AVX2+FMA microkernels" ON)
option(PTERUN_ENABLE_AVX512 "Build the AVX-512 microkernels" ON)
option(PTERUN_ENABLE_AVX512VNNI "Build the AVX-512 VNNI int8 microkernels" ON)

set(_pt_isa_dir ${CMAKE_CURRENT_LIST_DIR})
set(PTERUN_GEMM_ISA_DEFS "")
set(PTERUN_GEMM_AVX2_FLAGS "-mavx;-mavx2;-mfma")
set(PTERUN_GEMM_AVX512_FLAGS "-mavx;-mavx2;-mfma;-mavx512f")
set(PTERUN_GEMM_AVX512VNNI_FLAGS "-mavx;-mavx2;-mavx512f;-mavx512bw;-mavx512vnni")

if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  if(PTERUN_ENABLE_AVX2)
    check_c_compiler_flag("-mavx2 -mfma" PTERUN_CC_HAS_AVX2)
    if(PTERUN_CC_HAS_AVX2)
      list(APPEND PTERUN_GEMM_ISA_DEFS PTERUN_GEMM_AVX2=1)
    endif()
  endif()
  if(PTERUN_ENABLE_AVX512)
    check_c_compiler_flag("-mavx512f -mfma" PTERUN_CC_HAS_AVX512F)
    if(PTERUN_CC_HAS_AVX512F)
      list(APPEND PTERUN_GEMM_ISA_DEFS PTERUN_GEMM_AVX512=1)
    endif()
  endif()
  if(PTERUN_ENABLE_AVX512VNNI)
    check_c_compiler_flag("-mavx512f -mavx512bw -mavx512vnni" PTERUN_CC_HAS_AVX512VNNI)
    if(PTERUN_CC_HAS_AVX512VNNI)
      list(APPEND PTERUN_GEMM_ISA_DEFS PTERUN_GEMM_AVX512VNNI=1)
    endif()
  endif()
endif()

# Attaches the ISA flags to gemm/f32_<isa>.c in the calling directory (source
# properties are per directory) and the PTERUN_GEMM_<ISA> definitions to
# `target`.
function(pterun_gemm_isa_setup target)
  if(PTERUN_GEMM_ISA_DEFS MATCHES "PTERUN_GEMM_AVX2")
    set_source_files_properties(${_pt_isa_dir}/gemm/f32_avx2.c ${_pt_isa_dir}/vmath/vmath_avx2.c
                                ${_pt_isa_dir}/qgemm/qs8_avx2.c ${_pt_isa_dir}/dwconv/dwconv_avx2.c
                                ${_pt_isa_dir}/conv/conv_avx2.c
                                PROPERTIES
      COMPILE_OPTIONS "${PTERUN_GEMM_AVX2_FLAGS}")
  endif()
  if(PTERUN_GEMM_ISA_DEFS MATCHES "PTERUN_GEMM_AVX512")
    set_source_files_properties(${_pt_isa_dir}/gemm/f32_avx512.c ${_pt_isa_dir}/vmath/vmath_avx512.c
                                ${_pt_isa_dir}/dwconv/dwconv_avx512.c ${_pt_isa_dir}/conv/conv_avx512.c PROPERTIES
      COMPILE_OPTIONS "${PTERUN_GEMM_AVX512_FLAGS}")
  endif()
  if(PTERUN_GEMM_ISA_DEFS MATCHES "PTERUN_GEMM_AVX512VNNI")
    set_source_files_properties(${_pt_isa_dir}/qgemm/qs8_avx512vnni.c PROPERTIES
      COMPILE_OPTIONS "${PTERUN_GEMM_AVX512VNNI_FLAGS}")
  endif()
  if(PTERUN_GEMM_ISA_DEFS)
    target_compile_definitions(${target} PRIVATE ${PTERUN_GEMM_ISA_DEFS})
  endif()
endfunction()

pterun_gemm_isa_setup(pterun_compute)

# Vector math: GCC does not schedule instructions before register allocation
# on x86 by default, so the two vectors of each unrolled step (vmath_tmpl.h)
# would run one long polynomial chain after the other; with pressure-aware
# scheduling they interleave (GELU ~20 % faster on AVX2, same bits).
if(CMAKE_C_COMPILER_ID STREQUAL "GNU")
  set_property(SOURCE ${_pt_isa_dir}/vmath/vmath_avx2.c ${_pt_isa_dir}/vmath/vmath_avx512.c
               ${_pt_isa_dir}/vmath/vmath_portable.c
               APPEND PROPERTY COMPILE_OPTIONS "-fschedule-insns;-fsched-pressure")
endif()

# Low-bit linear microkernels (src/compute/lowbit/lowbit_<isa>.c): AVX2 rides
# on PTERUN_GEMM_AVX2, both AVX-512 variants (BW, and VNNI's vpdpbusd) on
# PTERUN_GEMM_AVX512VNNI (its probe covers -mavx512bw). The driver, the
# activation quantization and the microkernels' tile epilogues keep
# torchao's float operations: no contraction into fused multiply-adds (as
# everywhere: pterun_target_defaults passes -ffp-contract=off).
if(PTERUN_GEMM_ISA_DEFS MATCHES "PTERUN_GEMM_AVX2")
  set_source_files_properties(${_pt_isa_dir}/lowbit/lowbit_avx2.c PROPERTIES COMPILE_OPTIONS "-mavx2;-mfma")
endif()
if(PTERUN_GEMM_ISA_DEFS MATCHES "PTERUN_GEMM_AVX512VNNI")
  set_source_files_properties(${_pt_isa_dir}/lowbit/lowbit_avx512bw.c PROPERTIES
    COMPILE_OPTIONS "-mavx2;-mfma;-mavx512f;-mavx512bw")
  set_source_files_properties(${_pt_isa_dir}/lowbit/lowbit_avx512vnni.c PROPERTIES
    COMPILE_OPTIONS "${PTERUN_GEMM_AVX512VNNI_FLAGS};-mfma")
endif()
# AArch64: the NEON dot-product variant (sdot), when the compiler takes it.
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64|ARM64)$")
  check_c_compiler_flag("-march=armv8.2-a+dotprod" PTERUN_CC_HAS_DOTPROD)
  if(PTERUN_CC_HAS_DOTPROD)
    set_source_files_properties(${_pt_isa_dir}/lowbit/lowbit_neondot.c PROPERTIES
      COMPILE_OPTIONS "-march=armv8.2-a+dotprod")
    target_compile_definitions(pterun_compute PRIVATE PTERUN_LOWBIT_NEONDOT=1)
  endif()
endif()
