# pterun_component_library(): declares one component library of
# packaging/components.json (the manifest names its target and what it needs;
# cmake/PterunPackaging.cmake later adds the version script, SONAME, install
# rules and .pc file from the same entry).
#
#   pterun_component_library(<component>
#     [GLOB <patterns>...]          sources, relative to the source root
#     [GLOB_RECURSE <patterns>...]  same, searching sub-directories
#     [SOURCES <files>...]          sources listed by the caller
#     [PUBLIC_NEEDS <components>...] needs whose headers are part of this
#                                   library's interface (default: runtime)
#     [DEFINITIONS <defs>...] [OPTIONS <flags>...] [LIBS <system libraries>...])
#
# Every component: headers from include/ (PUBLIC), the source root and the
# generated directory (PRIVATE); the manifest's "needs" linked, PUBLIC for
# PUBLIC_NEEDS and PRIVATE otherwise; DEFINITIONS, OPTIONS, LIBS private; the
# shared warning and link flags (pterun_target_defaults).
include_guard(GLOBAL)
include(${CMAKE_CURRENT_LIST_DIR}/PterunManifest.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/PterunWarnings.cmake)

function(pterun_component_library component)
  cmake_parse_arguments(PARSE_ARGV 1 _a ""  ""
                        "GLOB;GLOB_RECURSE;SOURCES;PUBLIC_NEEDS;DEFINITIONS;OPTIONS;LIBS")
  if(_a_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "pterun_component_library(${component}): unknown arguments ${_a_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT component IN_LIST PTERUN_COMPONENTS)
    message(FATAL_ERROR "pterun_component_library: '${component}' is not a component of ${PTERUN_MANIFEST}")
  endif()
  set(_root "${PROJECT_SOURCE_DIR}")
  set(_srcs ${_a_SOURCES})
  foreach(_p IN LISTS _a_GLOB)
    file(GLOB _found CONFIGURE_DEPENDS "${_root}/${_p}")
    list(APPEND _srcs ${_found})
  endforeach()
  foreach(_p IN LISTS _a_GLOB_RECURSE)
    file(GLOB_RECURSE _found CONFIGURE_DEPENDS "${_root}/${_p}")
    list(APPEND _srcs ${_found})
  endforeach()
  if(NOT _srcs)
    message(FATAL_ERROR "pterun_component_library(${component}): no sources")
  endif()
  set(_t "${PTERUN_COMPONENT_${component}_target}")
  add_library(${_t} ${_srcs})
  target_include_directories(${_t}
    PUBLIC $<BUILD_INTERFACE:${_root}/include> $<INSTALL_INTERFACE:include>
    PRIVATE ${_root} ${PTERUN_GENERATED_DIR})
  if(NOT DEFINED _a_PUBLIC_NEEDS)
    set(_a_PUBLIC_NEEDS runtime)
  endif()
  foreach(_n IN LISTS PTERUN_COMPONENT_${component}_needs)
    set(_scope PRIVATE)
    if(_n IN_LIST _a_PUBLIC_NEEDS)
      set(_scope PUBLIC)
    endif()
    target_link_libraries(${_t} ${_scope} ${PTERUN_COMPONENT_${_n}_target})
  endforeach()
  if(_a_LIBS)
    target_link_libraries(${_t} PRIVATE ${_a_LIBS})
  endif()
  if(_a_DEFINITIONS)
    target_compile_definitions(${_t} PRIVATE ${_a_DEFINITIONS})
  endif()
  if(_a_OPTIONS)
    target_compile_options(${_t} PRIVATE ${_a_OPTIONS})
  endif()
  pterun_target_defaults(${_t})
endfunction()
