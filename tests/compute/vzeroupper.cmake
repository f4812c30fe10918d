# Every function of a library that writes the upper halves of the vector
# registers (ymm/zmm) must clear them (vzeroupper) before it returns, or the
# legacy-SSE code that runs next (libm, the baseline-compiled libraries) is
# slowed down on every instruction. Compilers insert it only when optimising
# for speed; src/compute/isa.cmake makes sure they do.
#   cmake -DOBJDUMP=objdump -DLIB=libpterun_compute.so -P vzeroupper.cmake
cmake_minimum_required(VERSION 3.22)
if(NOT OBJDUMP OR NOT EXISTS "${LIB}")
  message(FATAL_ERROR "usage: -DOBJDUMP=<objdump> -DLIB=<library> (objdump '${OBJDUMP}', library '${LIB}')")
endif()
execute_process(COMMAND "${OBJDUMP}" -d --no-show-raw-insn "${LIB}" RESULT_VARIABLE rc
                OUTPUT_VARIABLE dis ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${OBJDUMP} failed (${rc}): ${err}")
endif()
# One function per piece: objdump starts each with "<addr> <name>:".
string(REGEX REPLACE "\n[0-9a-f]+ <" "\n@@<" dis "${dis}")
string(REPLACE ";" "," dis "${dis}")
string(REPLACE "\n@@" ";" pieces "${dis}")
set(bad "")
set(wide 0)
foreach(p IN LISTS pieces)
  if(p MATCHES "%[yz]mm[0-9]")
    math(EXPR wide "${wide} + 1")
    if(NOT p MATCHES "vzeroupper")
      string(REGEX MATCH "^<[^>]*>" name "${p}")
      list(APPEND bad "${name}")
    endif()
  endif()
endforeach()
list(LENGTH bad nbad)
if(nbad GREATER 0)
  list(JOIN bad " " names)
  message(FATAL_ERROR "${nbad} of ${wide} functions using ymm/zmm registers have no vzeroupper: ${names}")
endif()
message(STATUS "${wide} functions use ymm/zmm registers; each has a vzeroupper")
