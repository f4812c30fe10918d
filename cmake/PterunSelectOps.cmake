# Selective build (docs/packaging.md): -DPTERUN_SELECT_OPS=<files> keeps in the
# kernel libraries only the operators the given programs call. Each file is a
# program (.pte, read by tools/select_ops.py) or a text list (one operator per
# line as select_ops.py prints it; a line's last word counts, '#' starts a
# comment, so tests/fixtures/*/ops.txt works too).
#
# How: every kernel library's table is made from rows `XX_OP("ns::op.overload",
# fn[, prepare])` in its kernels/<lib>/**/*.inc (the portable
# library's in one folder per family); pterun_select_kernels() writes filtered
# copies of those files under <build>/selected/ and puts that directory first
# on the library's include path, so lib.c includes them unchanged. The library
# is compiled with -ffunction-sections -fdata-sections: the linker's
# --gc-sections (added to shared libraries here; the firmware links with it;
# a static consumer adds it) drops every kernel no table row references.
# Rows that are not one plain line (lowbit's per-bit-width macros) stay. A
# fused operator of the load-time fusion pass is kept when its whole chain is.
include_guard(GLOBAL)

set(PTERUN_SELECT_OPS "" CACHE STRING
    "Selective build: .pte programs and/or operator lists; only their operators are kept")

# pterun_selected_ops(<out>): the selected operator names (empty: no selection).
function(pterun_selected_ops out)
  set(_ops "")
  foreach(_f IN LISTS PTERUN_SELECT_OPS)
    get_filename_component(_f "${_f}" ABSOLUTE)
    if(NOT EXISTS "${_f}")
      message(FATAL_ERROR "PTERUN_SELECT_OPS: '${_f}' does not exist")
    endif()
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_f}")
    if(_f MATCHES "\\.pte$")
      find_package(Python3 REQUIRED COMPONENTS Interpreter)
      execute_process(COMMAND "${Python3_EXECUTABLE}" "${_pt_select_root}/tools/select_ops.py" "${_f}"
                      OUTPUT_VARIABLE _text ERROR_VARIABLE _err RESULT_VARIABLE _rc)
      if(NOT _rc EQUAL 0)
        message(FATAL_ERROR "PTERUN_SELECT_OPS: ${_err}")
      endif()
    else()
      file(READ "${_f}" _text)
    endif()
    string(REGEX REPLACE "#[^\n]*" "" _text "${_text}")
    string(REPLACE "\n" ";" _lines "${_text}")
    foreach(_l IN LISTS _lines)
      string(STRIP "${_l}" _l)
      if(_l MATCHES "([^ \t]+)$")
        list(APPEND _ops "${CMAKE_MATCH_1}")
      endif()
    endforeach()
  endforeach()
  list(REMOVE_DUPLICATES _ops)
  # The load-time fusion pass (src/optimize/method_fuse_patterns.inc) replaces a
  # chain of selected operators by a fused one: keep that one too. A row
  # starts at the beginning of a line with `{.ops = {...}` (names written
  # N(ns, op, overload), or macros `#define NAME N(...)`) and names its
  # `.fused` operator; the chains'
  # feeds are not looked at (keeping a fused kernel too many is harmless).
  set(_pat "${_pt_select_root}/src/optimize/method_fuse_patterns.inc")
  if(_ops AND EXISTS "${_pat}")
    file(READ "${_pat}" _text)
    # N(namespace, operator, overload) names "namespace::operator.overload".
    string(REGEX REPLACE "([^A-Za-z0-9_])N\\(([A-Za-z0-9_]+), ([A-Za-z0-9_]+), ([A-Za-z0-9_]+)\\)"
                         "\\1\"\\2::\\3.\\4\"" _text "${_text}")
    string(REGEX MATCHALL "#define [A-Za-z_][A-Za-z0-9_]* \"[^\"]+\"" _defs "${_text}")
    foreach(_d IN LISTS _defs)
      string(REGEX REPLACE "#define ([A-Za-z0-9_]+) \"([^\"]+)\"" "\\1;\\2" _d "${_d}")
      list(GET _d 0 _k)
      list(GET _d 1 _v)
      set(_def_${_k} "${_v}")
    endforeach()
    string(REGEX MATCHALL "\n{\\.ops = {[^}]*}" _chains "${_text}")
    string(REGEX MATCHALL "\n \\.fused = \"[^\"]+\"" _fused "${_text}")
    list(LENGTH _chains _n)
    list(LENGTH _fused _nf)
    if(NOT _n EQUAL _nf)
      message(FATAL_ERROR "PTERUN_SELECT_OPS: ${_pat}: ${_n} rows but ${_nf} .fused entries")
    endif()
    if(_n GREATER 0)
      math(EXPR _last "${_n} - 1")
      foreach(_i RANGE ${_last})
        list(GET _chains ${_i} _c)
        list(GET _fused ${_i} _f)
        string(REGEX REPLACE "^\n{\\.ops = {" "" _c "${_c}")
        string(REGEX MATCHALL "\"[^\"]+\"|[A-Za-z_][A-Za-z0-9_]*" _c "${_c}")
        set(_all_in TRUE)
        foreach(_o IN LISTS _c)
          if(_o MATCHES "^\"(.*)\"$")
            set(_o "${CMAKE_MATCH_1}")
          elseif(DEFINED _def_${_o})
            set(_o "${_def_${_o}}")
          else()
            message(FATAL_ERROR "PTERUN_SELECT_OPS: ${_pat}: '${_o}' in a chain is not a known name")
          endif()
          if(NOT _o IN_LIST _ops)
            set(_all_in FALSE)
          endif()
        endforeach()
        if(_all_in)
          string(REGEX REPLACE ".*\"([^\"]+)\"" "\\1" _f "${_f}")
          list(APPEND _ops "${_f}")
        endif()
      endforeach()
    endif()
  endif()
  if(PTERUN_SELECT_OPS AND NOT _ops)
    message(FATAL_ERROR "PTERUN_SELECT_OPS: no operator in ${PTERUN_SELECT_OPS}")
  endif()
  set(${out} "${_ops}" PARENT_SCOPE)
endfunction()
set(_pt_select_root "${CMAKE_CURRENT_LIST_DIR}/..")

# pterun_select_kernels(<target> <kernel dir relative to the source root>):
# no-op without a selection.
function(pterun_select_kernels target dir)
  if(NOT PTERUN_SELECT_OPS)
    return()
  endif()
  pterun_selected_ops(_ops)
  set(_gen "${CMAKE_BINARY_DIR}/selected")
  file(GLOB_RECURSE _incs RELATIVE "${_pt_select_root}/${dir}" "${_pt_select_root}/${dir}/*.inc")
  set(_kept 0)
  set(_all 0)
  foreach(_rel IN LISTS _incs)
    # Normalised: the portable library's build names its ops.inc as a
    # configure dependency too, and two spellings of one path break Ninja.
    get_filename_component(_inc "${_pt_select_root}/${dir}/${_rel}" ABSOLUTE)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_inc}")
    # One list element per line: ';', '[' and ']' (which would split or join
    # list elements) travel as placeholders.
    file(READ "${_inc}" _text)
    # A row the formatter wrapped after an argument joins its line again.
    string(REGEX REPLACE ",\n[ \t]+" ", " _text "${_text}")
    string(REPLACE ";" "<pt:semi>" _text "${_text}")
    string(REPLACE "[" "<pt:lb>" _text "${_text}")
    string(REPLACE "]" "<pt:rb>" _text "${_text}")
    string(REPLACE "\n" ";" _rows "${_text}")
    set(_out "/* Selective build (PTERUN_SELECT_OPS): generated from ${dir}; do not edit. */\n")
    foreach(_r IN LISTS _rows)
      if(_r MATCHES "^[A-Z][A-Z_]*\\(\"([^\"]+)\"(, *[A-Za-z0-9_]+)+\\) *$")
        math(EXPR _all "${_all} + 1")
        if(NOT CMAKE_MATCH_1 IN_LIST _ops)
          continue()
        endif()
        math(EXPR _kept "${_kept} + 1")
      endif()
      string(APPEND _out "${_r}\n")
    endforeach()
    string(REPLACE "<pt:semi>" ";" _out "${_out}")
    string(REPLACE "<pt:lb>" "[" _out "${_out}")
    string(REPLACE "<pt:rb>" "]" _out "${_out}")
    file(CONFIGURE OUTPUT "${_gen}/${dir}/${_rel}" CONTENT "${_out}" @ONLY)
  endforeach()
  if(_all EQUAL 0)
    message(STATUS "pterun selective build: ${target} has no one-line table rows: kept whole")
  else()
    message(STATUS "pterun selective build: ${target} keeps ${_kept} of ${_all} operators")
  endif()
  target_include_directories(${target} BEFORE PRIVATE "${_gen}")
  target_compile_options(${target} PRIVATE -ffunction-sections -fdata-sections)
  get_target_property(_type ${target} TYPE)
  if(_type STREQUAL "SHARED_LIBRARY")
    target_link_options(${target} PRIVATE "LINKER:--gc-sections")
  endif()
endfunction()
