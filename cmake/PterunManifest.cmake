# Reads the component manifest (packaging/components.json) once, for every
# CMake file that needs it (the component-prefix table, packaging, the Python
# extension). Sets, in the including (top-level) scope:
#   PTERUN_SOVERSION, PTERUN_SYMBOL_VERSION, PTERUN_COMPONENTS (names, in order),
#   PTERUN_COMPONENT_<c>_<field> for the string fields library, target,
#     cmake_variable, pkg_config, description, header, entry, backend_entry
#     ("" when null or absent), python_links (TRUE/FALSE) and the lists needs,
#     exports, platforms, operator_prefixes, backend_ids;
#   PTERUN_COMPONENT_<c>_built  TRUE when the component is built on this platform.
include_guard(GLOBAL)

set(PTERUN_MANIFEST "${PROJECT_SOURCE_DIR}/packaging/components.json" CACHE FILEPATH
    "The component manifest")
set_property(DIRECTORY "${PROJECT_SOURCE_DIR}" APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
             "${PTERUN_MANIFEST}")
file(READ "${PTERUN_MANIFEST}" _pt_json)
string(JSON PTERUN_SOVERSION GET "${_pt_json}" soversion)
string(JSON PTERUN_SYMBOL_VERSION GET "${_pt_json}" symbol_version)
string(JSON _pt_n LENGTH "${_pt_json}" components)

# _pt_list(<out> <json path...>): a JSON array of strings as a CMake list
# (empty when absent).
function(_pt_list out)
  string(JSON _type ERROR_VARIABLE _err TYPE "${_pt_json}" ${ARGN})
  set(_items "")
  if(_type STREQUAL "ARRAY")
    string(JSON _len LENGTH "${_pt_json}" ${ARGN})
    if(_len GREATER 0)
      math(EXPR _last "${_len} - 1")
      foreach(_i RANGE ${_last})
        string(JSON _v GET "${_pt_json}" ${ARGN} ${_i})
        list(APPEND _items "${_v}")
      endforeach()
    endif()
  endif()
  set(${out} "${_items}" PARENT_SCOPE)
endfunction()

if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
  set(_pt_platform linux)
elseif(APPLE)
  set(_pt_platform macos)
elseif(WIN32)
  set(_pt_platform windows)
else()
  string(TOLOWER "${CMAKE_SYSTEM_NAME}" _pt_platform)
endif()

set(PTERUN_COMPONENTS "")
math(EXPR _pt_last "${_pt_n} - 1")
foreach(_pt_i RANGE ${_pt_last})
  string(JSON _c GET "${_pt_json}" components ${_pt_i} name)
  list(APPEND PTERUN_COMPONENTS ${_c})
  foreach(_k library target cmake_variable pkg_config description)
    string(JSON PTERUN_COMPONENT_${_c}_${_k} GET "${_pt_json}" components ${_pt_i} ${_k})
  endforeach()
  foreach(_k header entry backend_entry)
    string(JSON _type ERROR_VARIABLE _err TYPE "${_pt_json}" components ${_pt_i} ${_k})
    set(PTERUN_COMPONENT_${_c}_${_k} "")
    if(_type STREQUAL "STRING")
      string(JSON PTERUN_COMPONENT_${_c}_${_k} GET "${_pt_json}" components ${_pt_i} ${_k})
    endif()
  endforeach()
  string(JSON _links ERROR_VARIABLE _err GET "${_pt_json}" components ${_pt_i} python_links)
  if(_links STREQUAL "ON")
    set(PTERUN_COMPONENT_${_c}_python_links TRUE)
  else()
    set(PTERUN_COMPONENT_${_c}_python_links FALSE)
  endif()
  foreach(_k needs exports platforms operator_prefixes backend_ids)
    _pt_list(PTERUN_COMPONENT_${_c}_${_k} components ${_pt_i} ${_k})
  endforeach()
  set(PTERUN_COMPONENT_${_c}_built FALSE)
  if(_pt_platform IN_LIST PTERUN_COMPONENT_${_c}_platforms)
    set(PTERUN_COMPONENT_${_c}_built TRUE)
  endif()
endforeach()
unset(_pt_json)
