# Warning flags and link hygiene shared by every pterun target.
function(pterun_target_defaults target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wshadow -Wstrict-prototypes
                                           -Wno-unused-parameter)
  if(PTERUN_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  get_target_property(_type ${target} TYPE)
  if(_type STREQUAL "SHARED_LIBRARY" AND NOT PTERUN_SANITIZE)
    # Every undefined symbol must come from a declared dependency.
    target_link_options(${target} PRIVATE -Wl,--no-undefined)
  endif()
endfunction()
