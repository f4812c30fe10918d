# PTERUN_SANITIZE="address;undefined" or "thread": applied to every target.
if(PTERUN_SANITIZE)
  string(REPLACE ";" "," _pt_san "${PTERUN_SANITIZE}")
  add_compile_options(-fsanitize=${_pt_san} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${_pt_san})
endif()
