# Warning flags, link hygiene and code generation shared by every pterun target.
include(CheckCCompilerFlag)
include(CheckLinkerFlag)
check_c_compiler_flag(-fvect-cost-model=dynamic PTERUN_HAS_VECT_COST_MODEL)
# Shared libraries: calls between a library's own exported functions bind
# inside it (no PLT slot, relocation or symbol lookup each): pterun's exports
# are an API, not hooks to interpose.
check_linker_flag(C "LINKER:-Bsymbolic-functions" PTERUN_HAS_BSYMBOLIC_FUNCTIONS)
# MinSizeRel, the size build (tools/release_check.py --sizes): one executable
# segment for headers, code and read-only data instead of three page-aligned
# ones (-z separate-code, binutils' x86-64 default, costs up to a page of
# padding between each: less mapped-executable surface, kept in every other
# build), and relative relocations packed as DT_RELR (glibc 2.36's loader; an
# older one refuses the library by its GLIBC_ABI_DT_RELR version need instead
# of misloading it). ld adds that need whatever the libc, so the target's
# glibc headers must say 2.36 or later too (not musl: it has no version
# macro). The wheels are Release builds: neither applies to them.
include(CheckCSourceCompiles)
check_linker_flag(C "LINKER:-z,noseparate-code" PTERUN_HAS_NOSEPARATE_CODE)
check_linker_flag(C "LINKER:-z,pack-relative-relocs" PTERUN_HAS_PACK_RELATIVE_RELOCS_LD)
check_c_source_compiles("#include <stdlib.h>
#if !defined(__GLIBC__) || __GLIBC__ < 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ < 36)
#error no DT_RELR in this libc's loader
#endif
int main(void) { return 0; }" PTERUN_LIBC_HAS_DT_RELR)
set(PTERUN_HAS_PACK_RELATIVE_RELOCS OFF)
if(PTERUN_HAS_PACK_RELATIVE_RELOCS_LD AND PTERUN_LIBC_HAS_DT_RELR)
  set(PTERUN_HAS_PACK_RELATIVE_RELOCS ON)
endif()
set(PTERUN_MINSIZE_LINK_OPTIONS "")
if(PTERUN_HAS_NOSEPARATE_CODE)
  list(APPEND PTERUN_MINSIZE_LINK_OPTIONS "LINKER:-z,noseparate-code")
endif()
if(PTERUN_HAS_PACK_RELATIVE_RELOCS)
  list(APPEND PTERUN_MINSIZE_LINK_OPTIONS "LINKER:-z,pack-relative-relocs")
endif()

function(pterun_target_defaults target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wshadow -Wstrict-prototypes
                                           -Wno-unused-parameter)
  if(PTERUN_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  # GCC's -O2 (RelWithDebInfo, the default build) vectorises only loops that
  # need neither a run-time alias check nor a remainder loop ("very-cheap"
  # cost model), which leaves most kernel inner loops scalar. Use -O3's cost
  # model without the rest of -O3. Results do not change: no reassociation
  # or contraction is enabled (ISO C keeps a*b + c unfused).
  if(PTERUN_HAS_VECT_COST_MODEL)
    target_compile_options(${target} PRIVATE -fvect-cost-model=dynamic)
  endif()
  # No contraction of a*b + c into a fused multiply-add anywhere: GCC's ISO
  # mode already keeps them apart, Clang fuses within an expression by
  # default (-ffp-contract=on), which made its -mfma variants give other bits
  # than the portable ones. Kernels that want an FMA say so (intrinsics,
  # fmaf); the bit-exactness policy is in docs/kernel-authors.md.
  target_compile_options(${target} PRIVATE -ffp-contract=off)
  get_target_property(_type ${target} TYPE)
  # MinSizeRel, the build whose sizes the release check measures: no unwind
  # tables in the C libraries (a tenth of each). C has no exceptions; the
  # tables serve debuggers and profilers, which use the other builds. A C++
  # exception thrown through pterun from a callback is unsupported anyway.
  if(_type MATCHES "LIBRARY$")
    target_compile_options(${target} PRIVATE
      $<$<AND:$<CONFIG:MinSizeRel>,$<COMPILE_LANGUAGE:C>>:-fno-asynchronous-unwind-tables -fno-unwind-tables>)
  endif()
  if(_type STREQUAL "SHARED_LIBRARY")
    if(PTERUN_HAS_BSYMBOLIC_FUNCTIONS)
      target_link_options(${target} PRIVATE "LINKER:-Bsymbolic-functions")
    endif()
    foreach(_o IN LISTS PTERUN_MINSIZE_LINK_OPTIONS)
      target_link_options(${target} PRIVATE "$<$<CONFIG:MinSizeRel>:${_o}>")
    endforeach()
  endif()
  if(_type STREQUAL "SHARED_LIBRARY" AND NOT PTERUN_SANITIZE)
    # Every undefined symbol must come from a declared dependency.
    target_link_options(${target} PRIVATE -Wl,--no-undefined)
  endif()
endfunction()
