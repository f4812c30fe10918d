# Every kernel call finds the scratch it asks for (the method's arena is
# sized from the prepares' and backends' reservations, not a fixed 4 MiB):
# `pterun bench --profile` of each program must name no "no scratch" slow
# path. Invoked as cmake -DPTERUN=cli|prefix -DMODELS=a.pte|b.pte [-DARGS=x|y] -P run_scratch.cmake
cmake_minimum_required(VERSION 3.22)
string(REPLACE "|" ";" _pt "${PTERUN}")
string(REPLACE "|" ";" _models "${MODELS}")
string(REPLACE "|" ";" _args "${ARGS}")
set(_bad "")
list(LENGTH _models _n)
foreach(_m IN LISTS _models)
  execute_process(COMMAND ${_pt} bench ${_m} --iterations 1 --warmup 0 --profile ${_args}
                  RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
  if(NOT _rc EQUAL 0)
    string(APPEND _bad "${_m}: exit ${_rc}: ${_err}\n")
  elseif(_out MATCHES "no scratch[^\n]*")
    string(APPEND _bad "${_m}: ${CMAKE_MATCH_0}\n")
  endif()
endforeach()
if(_bad)
  message(FATAL_ERROR "kernel calls without the scratch they asked for:\n${_bad}")
endif()
message(STATUS "${_n} programs: every kernel call had its scratch")
