# Generates the runtime's operator-prefix -> component table (and the
# delegate backend id -> component table) from the
# component manifest (read by PterunManifest.cmake), so that the
# missing-operator message names the right component without a second
# hand-kept list.
include_guard(GLOBAL)
include(${CMAKE_CURRENT_LIST_DIR}/PterunManifest.cmake)
set(_ct_rows "")
foreach(_name IN LISTS PTERUN_COMPONENTS)
  foreach(_p IN LISTS PTERUN_COMPONENT_${_name}_operator_prefixes)
    string(LENGTH "${_p}" _len)
    # Sort key: longest prefix first (zero-padded length, inverted).
    math(EXPR _key "10000 - ${_len}")
    list(APPEND _ct_rows "${_key}|${_p}|${_name}")
  endforeach()
endforeach()
list(SORT _ct_rows)
set(_ct_text "/* Generated from packaging/components.json by cmake/PterunComponentTable.cmake; do not edit. */\n")
foreach(_r IN LISTS _ct_rows)
  string(REPLACE "|" ";" _f "${_r}")
  list(GET _f 1 _p)
  list(GET _f 2 _c)
  string(APPEND _ct_text "PT_COMPONENT_PREFIX(\"${_p}\", \"${_c}\")\n")
endforeach()
# Delegate backend id -> component ("backend_ids" in the manifest).
set(_cb_text "/* Generated from packaging/components.json by cmake/PterunComponentTable.cmake; do not edit. */\n")
foreach(_name IN LISTS PTERUN_COMPONENTS)
  foreach(_b IN LISTS PTERUN_COMPONENT_${_name}_backend_ids)
    string(APPEND _cb_text "PT_COMPONENT_BACKEND(\"${_b}\", \"${_name}\")\n")
  endforeach()
endforeach()
set(PTERUN_GENERATED_DIR ${CMAKE_BINARY_DIR}/generated)
file(CONFIGURE OUTPUT ${PTERUN_GENERATED_DIR}/pterun_component_prefixes.inc CONTENT "${_ct_text}")
file(CONFIGURE OUTPUT ${PTERUN_GENERATED_DIR}/pterun_component_backends.inc CONTENT "${_cb_text}")
