# The portable kernel library's sources, collected by folder: the helpers at
# kernels/portable/*.c and every family folder's kernels/portable/<family>/*.c.
# A family folder has an operator list, <family>/ops.inc, which
# kernels/portable/ops.inc must include (lib.c builds the table from it): a
# folder without one, or a list ops.inc does not include, fails the configure
# step, so a new family cannot be half added.
include_guard(GLOBAL)

# pterun_portable_sources(<out var> <source root>)
function(pterun_portable_sources out root)
  set(_dir "${root}/kernels/portable")
  file(GLOB _srcs CONFIGURE_DEPENDS "${_dir}/*.c")
  file(GLOB _entries LIST_DIRECTORIES true RELATIVE "${_dir}" CONFIGURE_DEPENDS "${_dir}/*")
  file(READ "${_dir}/ops.inc" _top)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_dir}/ops.inc")
  set(_families "")
  foreach(_f IN LISTS _entries)
    if(NOT IS_DIRECTORY "${_dir}/${_f}")
      continue()
    endif()
    if(NOT EXISTS "${_dir}/${_f}/ops.inc")
      message(FATAL_ERROR "kernels/portable/${_f}/ has no operator list (ops.inc)")
    endif()
    string(FIND "${_top}" "#include \"kernels/portable/${_f}/ops.inc\"" _at)
    if(_at LESS 0)
      message(FATAL_ERROR "kernels/portable/ops.inc does not include ${_f}/ops.inc")
    endif()
    file(GLOB _fsrcs CONFIGURE_DEPENDS "${_dir}/${_f}/*.c")
    list(APPEND _srcs ${_fsrcs})
    list(APPEND _families ${_f})
  endforeach()
  string(REGEX MATCHALL "#include \"kernels/portable/[^/\"]+/ops.inc\"" _listed "${_top}")
  list(LENGTH _listed _nl)
  list(LENGTH _families _nf)
  if(NOT _nl EQUAL _nf)
    message(FATAL_ERROR "kernels/portable/ops.inc includes ${_nl} family lists; there are ${_nf} family folders (${_families})")
  endif()
  set(${out} ${_srcs} PARENT_SCOPE)
endfunction()
