# Packaging: reads the component manifest (packaging/components.json) and, for
# every component library it lists, sets the file naming (SONAME policy), the
# RUNPATH, the linker version script, the install rules, the CMake package
# (pterun-config.cmake) and one pkg-config file. Include it after every
# component target is defined. docs/packaging.md describes the variables.
#
# Two layouts:
#   default              lib/libpterun.so -> libpterun.so.<SOVERSION> -> libpterun.so.<VERSION>,
#                        include/, lib/cmake/pterun/, lib/pkgconfig/ (GNUInstallDirs)
#   PTERUN_WHEEL_LAYOUT  pterun/lib/libpterun.so (SONAME = file name), pterun/include/,
#                        pterun/lib/cmake/pterun/, pterun/lib/pkgconfig/, pterun/bin/
# Both: RUNPATH "$ORIGIN" written at link time (BUILD_WITH_INSTALL_RPATH), so
# installing copies the libraries byte for byte.
include_guard(GLOBAL)

option(PTERUN_INSTALL "Generate install rules (libraries, headers, CMake package, .pc files)" ON)
option(PTERUN_WHEEL_LAYOUT "Install for a Python wheel: unversioned libraries under <pkg>/lib" OFF)
option(PTERUN_INSTALL_CLI "Install the pterun command-line tool" ON)

if(PTERUN_WHEEL_LAYOUT)
  set(PTERUN_WHEEL_PACKAGE_DIR "pterun" CACHE STRING
      "Wheel layout: the Python package directory, relative to the install prefix (empty: the prefix)")
  set(_pt_pkg "")
  if(NOT PTERUN_WHEEL_PACKAGE_DIR STREQUAL "")
    set(_pt_pkg "${PTERUN_WHEEL_PACKAGE_DIR}/")
  endif()
  set(CMAKE_INSTALL_LIBDIR "${_pt_pkg}lib" CACHE PATH "Libraries (wheel layout)")
  set(CMAKE_INSTALL_INCLUDEDIR "${_pt_pkg}include" CACHE PATH "Headers (wheel layout)")
  set(CMAKE_INSTALL_BINDIR "${_pt_pkg}bin" CACHE PATH "Programs (wheel layout)")
endif()
include(GNUInstallDirs)
set(PTERUN_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/pterun" CACHE PATH
    "Where pterun-config.cmake goes, relative to the prefix")
set(PTERUN_INSTALL_PKGCONFIGDIR "${CMAKE_INSTALL_LIBDIR}/pkgconfig" CACHE PATH
    "Where the .pc files go, relative to the prefix")
foreach(_pt_dir CMAKE_INSTALL_LIBDIR CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_BINDIR
                PTERUN_INSTALL_CMAKEDIR PTERUN_INSTALL_PKGCONFIGDIR)
  if(IS_ABSOLUTE "${${_pt_dir}}")
    message(FATAL_ERROR "${_pt_dir}='${${_pt_dir}}' must be relative to the install prefix: "
                        "pterun's package is relocatable")
  endif()
endforeach()

# The manifest: PTERUN_COMPONENTS and PTERUN_COMPONENT_<c>_<field>.
include(${CMAKE_CURRENT_LIST_DIR}/PterunManifest.cmake)

# ---- per-library properties ----------------------------------------------------------
set(_pt_gen "${PROJECT_BINARY_DIR}/packaging")
foreach(_c IN LISTS PTERUN_COMPONENTS)
  if(NOT PTERUN_COMPONENT_${_c}_built)
    continue()
  endif()
  set(_t "${PTERUN_COMPONENT_${_c}_target}")
  set(_lib "${PTERUN_COMPONENT_${_c}_library}")
  if(NOT TARGET ${_t})
    message(FATAL_ERROR "packaging/components.json: component '${_c}' names target '${_t}', "
                        "which this build does not define")
  endif()
  get_target_property(_type ${_t} TYPE)
  get_target_property(_out ${_t} OUTPUT_NAME)
  if(NOT _out)
    set(_out ${_t})
  endif()
  set(_want_type SHARED_LIBRARY)
  if(NOT BUILD_SHARED_LIBS)
    set(_want_type STATIC_LIBRARY)
  endif()
  if(NOT _type STREQUAL _want_type OR NOT _out STREQUAL _lib)
    message(FATAL_ERROR "packaging/components.json: component '${_c}' expects a ${_want_type} "
                        "'${_lib}', target '${_t}' is a ${_type} named '${_out}'")
  endif()
  # What the library links besides pterun components (Threads, libm, libdl):
  # the static link items of its .pc file (Libs.private) and, for a static
  # build, of its imported target.
  get_target_property(_links ${_t} LINK_LIBRARIES)
  set(_sys "")
  foreach(_l IN LISTS _links)
    if(_l STREQUAL "Threads::Threads")
      list(APPEND _sys "-pthread")
    elseif(NOT TARGET ${_l} AND NOT _l STREQUAL "")
      list(APPEND _sys "${_l}")
    endif()
  endforeach()
  list(REMOVE_DUPLICATES _sys)
  set(PTERUN_COMPONENT_${_c}_system_libs "${_sys}")
  if(_type STREQUAL "STATIC_LIBRARY")
    # Static archives: registration is the same explicit call as in the shared
    # build (no constructors, so no --whole-archive); no version script, no
    # SONAME, no RUNPATH.
    set(PTERUN_COMPONENT_${_c}_file "lib${_lib}.a")
    set(PTERUN_COMPONENT_${_c}_soname "")
    if(PTERUN_INSTALL)
      install(TARGETS ${_t} ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT ${_c})
    endif()
    continue()
  endif()
  # Version script: the component's export patterns under one version node.
  set(VS_LIBRARY ${_lib})
  set(VS_COMPONENT ${_c})
  set(VS_NODE ${PTERUN_SYMBOL_VERSION})
  set(VS_GLOBALS "")
  foreach(_p IN LISTS PTERUN_COMPONENT_${_c}_exports)
    string(APPEND VS_GLOBALS "    ${_p};\n")
  endforeach()
  configure_file("${PROJECT_SOURCE_DIR}/packaging/version-script.map.in" "${_pt_gen}/${_lib}.map" @ONLY)
  # --no-as-needed: NEEDED is exactly the declared dependencies, whatever the
  # toolchain's default (the manifest's "needs" are checked against it).
  target_link_options(${_t} PRIVATE "LINKER:--version-script=${_pt_gen}/${_lib}.map"
                                    "LINKER:--enable-new-dtags" "LINKER:--no-as-needed")
  set_property(TARGET ${_t} APPEND PROPERTY LINK_DEPENDS "${_pt_gen}/${_lib}.map")
  # Every library finds its siblings through $ORIGIN only, from the link on:
  # the build tree keeps every library in one lib/ directory too.
  set_target_properties(${_t} PROPERTIES INSTALL_RPATH "$ORIGIN" BUILD_WITH_INSTALL_RPATH ON)
  if(PTERUN_WHEEL_LAYOUT)
    # Unversioned file, SONAME = file name (a zip has no symlinks).
    set(PTERUN_COMPONENT_${_c}_file "lib${_lib}.so")
    set(PTERUN_COMPONENT_${_c}_soname "lib${_lib}.so")
  else()
    set_target_properties(${_t} PROPERTIES VERSION ${PROJECT_VERSION} SOVERSION ${PTERUN_SOVERSION})
    set(PTERUN_COMPONENT_${_c}_file "lib${_lib}.so.${PROJECT_VERSION}")
    set(PTERUN_COMPONENT_${_c}_soname "lib${_lib}.so.${PTERUN_SOVERSION}")
  endif()
  if(PTERUN_INSTALL)
    install(TARGETS ${_t} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT ${_c})
  endif()
endforeach()

if(NOT PTERUN_INSTALL)
  return()
endif()

# ---- headers, CLI ------------------------------------------------------------------------
install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/pterun" DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        COMPONENT runtime FILES_MATCHING PATTERN "*.h")
if(PTERUN_INSTALL_CLI AND TARGET pterun_cli)
  file(RELATIVE_PATH _pt_rel "/_/${CMAKE_INSTALL_BINDIR}" "/_/${CMAKE_INSTALL_LIBDIR}")
  set_target_properties(pterun_cli PROPERTIES INSTALL_RPATH "$ORIGIN/${_pt_rel}")
  target_link_options(pterun_cli PRIVATE "LINKER:--enable-new-dtags")
  install(TARGETS pterun_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT cli)
endif()

# ---- CMake package ---------------------------------------------------------------------
file(RELATIVE_PATH PTERUN_CONFIG_REL_PREFIX "/_/${PTERUN_INSTALL_CMAKEDIR}" "/_")
set(_pt_static OFF)
if(NOT BUILD_SHARED_LIBS)
  set(_pt_static ON)
endif()
set(PTERUN_CONFIG_TABLE "set(_pterun_components ${PTERUN_COMPONENTS})\nset(_pterun_static ${_pt_static})\n")
foreach(_c IN LISTS PTERUN_COMPONENTS)
  string(APPEND PTERUN_CONFIG_TABLE
    "set(_pterun_${_c}_built ${PTERUN_COMPONENT_${_c}_built})\n"
    "set(_pterun_${_c}_file \"${PTERUN_COMPONENT_${_c}_file}\")\n"
    "set(_pterun_${_c}_soname \"${PTERUN_COMPONENT_${_c}_soname}\")\n"
    "set(_pterun_${_c}_needs \"${PTERUN_COMPONENT_${_c}_needs}\")\n"
    "set(_pterun_${_c}_system_libs \"${PTERUN_COMPONENT_${_c}_system_libs}\")\n"
    "set(_pterun_${_c}_variable \"${PTERUN_COMPONENT_${_c}_cmake_variable}\")\n"
    "set(_pterun_${_c}_platforms \"${PTERUN_COMPONENT_${_c}_platforms}\")\n")
endforeach()
configure_file("${PROJECT_SOURCE_DIR}/packaging/pterun-config.cmake.in"
               "${_pt_gen}/pterun-config.cmake" @ONLY)
include(CMakePackageConfigHelpers)
write_basic_package_version_file("${_pt_gen}/pterun-config-version.cmake"
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES "${_pt_gen}/pterun-config.cmake" "${_pt_gen}/pterun-config-version.cmake"
        DESTINATION ${PTERUN_INSTALL_CMAKEDIR} COMPONENT runtime)

# ---- pkg-config: one .pc per component ---------------------------------------------
file(RELATIVE_PATH PC_REL_PREFIX "/_/${PTERUN_INSTALL_PKGCONFIGDIR}" "/_")
string(REGEX REPLACE "/$" "" PC_REL_PREFIX "${PC_REL_PREFIX}")
foreach(_c IN LISTS PTERUN_COMPONENTS)
  if(NOT PTERUN_COMPONENT_${_c}_built)
    continue()
  endif()
  set(PC_COMPONENT ${_c})
  set(PC_NAME ${PTERUN_COMPONENT_${_c}_pkg_config})
  set(PC_DESCRIPTION "${PTERUN_COMPONENT_${_c}_description}")
  set(PC_LIBRARY ${PTERUN_COMPONENT_${_c}_library})
  set(PC_REQUIRES "")
  foreach(_d IN LISTS PTERUN_COMPONENT_${_c}_needs)
    list(APPEND PC_REQUIRES "${PTERUN_COMPONENT_${_d}_pkg_config} = ${PROJECT_VERSION}")
  endforeach()
  string(REPLACE ";" ", " PC_REQUIRES "${PC_REQUIRES}")
  # Libs.private: the system libraries it links (what `pkg-config --static`
  # adds); Requires already names every pterun component it needs.
  set(PC_LIBS_PRIVATE "")
  foreach(_l IN LISTS PTERUN_COMPONENT_${_c}_system_libs)
    if(_l MATCHES "^-")
      list(APPEND PC_LIBS_PRIVATE "${_l}")
    else()
      list(APPEND PC_LIBS_PRIVATE "-l${_l}")
    endif()
  endforeach()
  string(REPLACE ";" " " PC_LIBS_PRIVATE "${PC_LIBS_PRIVATE}")
  configure_file("${PROJECT_SOURCE_DIR}/packaging/pterun.pc.in" "${_pt_gen}/${PC_NAME}.pc" @ONLY)
  install(FILES "${_pt_gen}/${PC_NAME}.pc" DESTINATION ${PTERUN_INSTALL_PKGCONFIGDIR}
          COMPONENT ${_c})
endforeach()
