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
                                ${_pt_isa_dir}/conv/conv_avx2.c ${_pt_isa_dir}/qgemm/qdwconv_avx2.c
                                ${_pt_isa_dir}/minmax/minmax_avx2.c
                                PROPERTIES
      COMPILE_OPTIONS "${PTERUN_GEMM_AVX2_FLAGS}")
  endif()
  if(PTERUN_GEMM_ISA_DEFS MATCHES "PTERUN_GEMM_AVX512")
    set_source_files_properties(${_pt_isa_dir}/gemm/f32_avx512.c ${_pt_isa_dir}/vmath/vmath_avx512.c
                                ${_pt_isa_dir}/dwconv/dwconv_avx512.c ${_pt_isa_dir}/conv/conv_avx512.c
                                ${_pt_isa_dir}/qgemm/qdwconv_avx512.c ${_pt_isa_dir}/qgemm/qs8_epi_avx512.c
                                ${_pt_isa_dir}/minmax/minmax_avx512.c
                                PROPERTIES
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
  # the 4-bit blockwise linear (qb4w/): the same ISA split as low-bit
  set_source_files_properties(${_pt_isa_dir}/qb4w/qb4w_avx2.c PROPERTIES COMPILE_OPTIONS "-mavx;-mavx2")
endif()
if(PTERUN_GEMM_ISA_DEFS MATCHES "PTERUN_GEMM_AVX512VNNI")
  set_source_files_properties(${_pt_isa_dir}/lowbit/lowbit_avx512bw.c PROPERTIES
    COMPILE_OPTIONS "-mavx2;-mfma;-mavx512f;-mavx512bw")
  # the int8 depthwise variant with 32-channel NHWC blocks (qdwconv_avx512bw.c)
  set_source_files_properties(${_pt_isa_dir}/qgemm/qdwconv_avx512bw.c PROPERTIES
    COMPILE_OPTIONS "-mavx;-mavx2;-mfma;-mavx512f;-mavx512bw")
  set_source_files_properties(${_pt_isa_dir}/lowbit/lowbit_avx512vnni.c PROPERTIES
    COMPILE_OPTIONS "${PTERUN_GEMM_AVX512VNNI_FLAGS};-mfma")
  set_source_files_properties(${_pt_isa_dir}/qb4w/qb4w_avx512vnni.c PROPERTIES
    COMPILE_OPTIONS "${PTERUN_GEMM_AVX512VNNI_FLAGS}")
endif()
# GCC inserts vzeroupper (which clears the upper halves of the vector
# registers before code that may use legacy SSE encodings: libm, the
# baseline-compiled libraries) only when it optimises for speed (-O2 and up;
# not at -Os, -Oz or -O1). Without it every SSE instruction after an AVX
# kernel pays for the dirty upper state: a MinSizeRel build ran the XNNPACK
# MLP fixture 5x slower (5.6 against 1.1 us). So in MinSizeRel the x86 SIMD
# sources are compiled for speed; they are a small part of the library and
# the hot part. tests/compute/vzeroupper.cmake checks every optimised build.
if(CMAKE_C_COMPILER_ID STREQUAL "GNU" AND CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  file(GLOB _pt_x86_simd_srcs ${_pt_isa_dir}/*/*_avx*.c)
  set_property(SOURCE ${_pt_x86_simd_srcs} APPEND PROPERTY COMPILE_OPTIONS "$<$<CONFIG:MinSizeRel>:-O2>")
endif()

# AArch64: the NEON dot-product variant (sdot), when the compiler takes it.
# `zig cc` (the manylinux wheels, tools/build_wheels.sh) reads -march as a CPU
# name and rejects armv8.2-a; it takes the feature as -mcpu=generic+dotprod.
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64|ARM64)$")
  check_c_compiler_flag("-march=armv8.2-a+dotprod" PTERUN_CC_HAS_DOTPROD)
  set(_pt_dotprod_flag "-march=armv8.2-a+dotprod")
  if(NOT PTERUN_CC_HAS_DOTPROD)
    check_c_compiler_flag("-mcpu=generic+dotprod" PTERUN_CC_HAS_DOTPROD_MCPU)
    set(_pt_dotprod_flag "-mcpu=generic+dotprod")
  endif()
  if(PTERUN_CC_HAS_DOTPROD OR PTERUN_CC_HAS_DOTPROD_MCPU)
    set_source_files_properties(${_pt_isa_dir}/lowbit/lowbit_neondot.c
                                ${_pt_isa_dir}/qb4w/qb4w_neondot.c PROPERTIES
      COMPILE_OPTIONS "${_pt_dotprod_flag}")
    target_compile_definitions(pterun_compute PRIVATE PTERUN_LOWBIT_NEONDOT=1)
  endif()
endif()

# ---- emulated ISAs (test builds only; docs/robustness.md) ----------------------
# PTERUN_EMULATE_ISA=avx512f;avx512bw;avx512vnni (or comma separated) compiles
# every AVX-512 microkernel source that needs one of the listed ISAs again
# without its -mavx512* flags, against SIMDe's portable intrinsics
# (tests/emulate/simde_isa.h, force-included), and makes
# pterun_cpu_detected_features() report the listed ISAs (src/core/cpu.c), so
# the dispatcher selects those variants on a CPU without AVX-512 and the kernel
# tests execute them. AVX2 and FMA stay native: SIMDe builds the 512-bit
# operations from them (and only native FMA fuses). Never for a release.
set(PTERUN_EMULATE_ISA "" CACHE STRING
  "Test builds only: ISAs (avx512f, avx512bw, avx512vnni) whose microkernels run emulated (SIMDe)")
string(REPLACE "," ";" _pt_emu_isas "${PTERUN_EMULATE_ISA}")
if(_pt_emu_isas)
  if(NOT CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$" OR NOT CMAKE_C_COMPILER_ID STREQUAL "GNU")
    message(FATAL_ERROR "PTERUN_EMULATE_ISA: x86-64 with GCC only")
  endif()
  # A library that reports ISAs the CPU may lack is for tests, never installed.
  if(NOT DEFINED PTERUN_INSTALL OR PTERUN_INSTALL)
    message(FATAL_ERROR "PTERUN_EMULATE_ISA is for test builds: add -DPTERUN_INSTALL=OFF")
  endif()
  find_path(PTERUN_SIMDE_INCLUDE_DIR simde/x86/avx512.h)
  if(NOT PTERUN_SIMDE_INCLUDE_DIR)
    message(FATAL_ERROR "PTERUN_EMULATE_ISA needs SIMDe's headers (Debian: libsimde-dev)")
  endif()
  set(_pt_emu_bits 0)
  set(_pt_emu_bit_avx512f 5)
  set(_pt_emu_bit_avx512bw 6)
  set(_pt_emu_bit_avx512vnni 9)
  foreach(_isa IN LISTS _pt_emu_isas)
    if(NOT DEFINED _pt_emu_bit_${_isa})
      message(FATAL_ERROR "PTERUN_EMULATE_ISA: '${_isa}' is not one of avx512f, avx512bw, avx512vnni")
    endif()
    math(EXPR _pt_emu_bits "${_pt_emu_bits} | (1 << ${_pt_emu_bit_${_isa}})" OUTPUT_FORMAT HEXADECIMAL)
  endforeach()
  if(NOT PTERUN_GEMM_ISA_DEFS MATCHES "PTERUN_GEMM_AVX512VNNI" OR NOT PTERUN_GEMM_ISA_DEFS MATCHES "PTERUN_GEMM_AVX2")
    message(FATAL_ERROR "PTERUN_EMULATE_ISA: the AVX2 and AVX-512 microkernels must be enabled")
  endif()
  # Each AVX-512 source and the AVX-512 features its flags ask for.
  set(_pt_emu_srcs
    gemm/f32_avx512.c=avx512f vmath/vmath_avx512.c=avx512f dwconv/dwconv_avx512.c=avx512f
    conv/conv_avx512.c=avx512f qgemm/qs8_avx512vnni.c=avx512f,avx512bw,avx512vnni
    qgemm/qdwconv_avx512.c=avx512f qgemm/qs8_epi_avx512.c=avx512f minmax/minmax_avx512.c=avx512f
    lowbit/lowbit_avx512bw.c=avx512f,avx512bw lowbit/lowbit_avx512vnni.c=avx512f,avx512bw,avx512vnni
    qgemm/qdwconv_avx512bw.c=avx512f,avx512bw qb4w/qb4w_avx512vnni.c=avx512f,avx512bw,avx512vnni)
  set(PTERUN_EMULATED_SOURCES "")
  foreach(_entry IN LISTS _pt_emu_srcs)
    string(REPLACE "=" ";" _entry "${_entry}")
    list(GET _entry 0 _src)
    list(GET _entry 1 _needs)
    string(REPLACE "," ";" _needs "${_needs}")
    set(_hit OFF)
    foreach(_isa IN LISTS _needs)
      if(_isa IN_LIST _pt_emu_isas)
        set(_hit ON)
      endif()
    endforeach()
    if(NOT _hit)
      continue()
    endif()
    get_source_file_property(_opts ${_pt_isa_dir}/${_src} COMPILE_OPTIONS)
    list(FILTER _opts EXCLUDE REGEX "^-mavx512")
    # -Wno-psabi: 64-byte vectors passed between the file's own functions
    # without -mavx512f (an ABI note, not a defect: one file, one ABI).
    list(APPEND _opts -mavx2 -mfma -Wno-psabi -include "${PROJECT_SOURCE_DIR}/tests/emulate/simde_isa.h")
    set(_defs "")
    foreach(_isa IN LISTS _needs)
      string(TOUPPER "${_isa}" _u)
      list(APPEND _defs PTERUN_EMULATE_${_u}=1)
    endforeach()
    set_source_files_properties(${_pt_isa_dir}/${_src} PROPERTIES COMPILE_OPTIONS "${_opts}"
                                COMPILE_DEFINITIONS "${_defs}" INCLUDE_DIRECTORIES "${PTERUN_SIMDE_INCLUDE_DIR}")
    list(APPEND PTERUN_EMULATED_SOURCES ${_src})
  endforeach()
  set_source_files_properties(${PROJECT_SOURCE_DIR}/src/core/cpu.c PROPERTIES
    COMPILE_DEFINITIONS "PTERUN_EMULATED_FEATURES=((uint64_t)${_pt_emu_bits})")
  # What tools/variant_table.py reads to tell emulated from native runs.
  file(WRITE ${CMAKE_BINARY_DIR}/emulated_isa.txt "${_pt_emu_isas}\n")
  message(STATUS "pterun: emulated ISAs (SIMDe) ${_pt_emu_isas}: ${PTERUN_EMULATED_SOURCES}")
else()
  file(REMOVE ${CMAKE_BINARY_DIR}/emulated_isa.txt)
endif()
