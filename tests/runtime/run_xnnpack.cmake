# One XNNPACK fixture: the CLI runs model.pte (XNNPACK-lowered) and plain.pte
# (no partitioner); the first must match ExecuTorch+XNNPACK (forward_et_*)
# and the second run, and give the same bits on 1 and on 3 threads. Invoked
# by ctest with -D variables:
#   PTERUN NPYCMP DIR N_INPUTS N_OUTPUTS RTOL ATOL DATA OUT
# PTERUN and NPYCMP are commands: an emulator prefix may come first, '|'-separated.
string(REPLACE "|" ";" PTERUN "${PTERUN}")
string(REPLACE "|" ";" NPYCMP "${NPYCMP}")
set(inputs "")
math(EXPR last_in "${N_INPUTS} - 1")
foreach(k RANGE ${last_in})
  list(APPEND inputs --input "${DIR}/forward_input_${k}.npy")
endforeach()
set(data_args "")
if(NOT DATA STREQUAL "-")
  string(REPLACE "," ";" data_files "${DATA}")
  foreach(f IN LISTS data_files)
    list(APPEND data_args --data "${DIR}/${f}")
  endforeach()
endif()
file(REMOVE_RECURSE "${OUT}")
# model1/model3: model.pte on 1 and on 3 threads, which must give the same
# bits (the backend's loops and compute's kernels split work without changing
# any element's operations).
foreach(prog model plain model1 model3)
  set(extra "")
  set(file ${prog})
  if(NOT prog STREQUAL "plain")
    set(extra ${data_args})
    set(file model)
  endif()
  if(prog STREQUAL "model1")
    list(APPEND extra --threads 1)
  elseif(prog STREQUAL "model3")
    list(APPEND extra --threads 3)
  endif()
  execute_process(COMMAND ${PTERUN} run "${DIR}/${file}.pte" ${extra} ${inputs}
                          --output-dir "${OUT}/${prog}" --quiet RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "pterun run of ${prog}.pte failed (${rc})")
  endif()
endforeach()
math(EXPR last_out "${N_OUTPUTS} - 1")
foreach(k RANGE ${last_out})
  execute_process(COMMAND ${NPYCMP} "${OUT}/model/output_${k}.npy" "${DIR}/forward_et_${k}.npy"
                          --rtol "${RTOL}" --atol "${ATOL}" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "output ${k} differs from ExecuTorch+XNNPACK")
  endif()
  execute_process(COMMAND ${NPYCMP} "${OUT}/model3/output_${k}.npy"
                          "${OUT}/model1/output_${k}.npy" --rtol 0 --atol 0 RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "output ${k} differs between 1 and 3 threads")
  endif()
  execute_process(COMMAND ${NPYCMP} "${OUT}/model/output_${k}.npy" "${OUT}/plain/output_${k}.npy"
                          --rtol "${RTOL}" --atol "${ATOL}" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "output ${k} differs from pterun's run of the non-delegated export")
  endif()
endforeach()
