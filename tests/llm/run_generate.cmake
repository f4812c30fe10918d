# `pterun generate` alone on an LLM-flow fixture: greedy tokens (stdout, comma
# separated) must equal ExecuTorch's runtime's (et_tokens.txt, written by
# tools/export_llama.py) for the fixture's prompt (prompt.txt).
# -DPTERUN=cli -DDIR=fixture dir [-DTHREADS=n]
# PTERUN is a command: an emulator prefix may come first, '|'-separated.
string(REPLACE "|" ";" PTERUN "${PTERUN}")
foreach(f prompt.txt et_tokens.txt model.pte)
  if(NOT EXISTS "${DIR}/${f}")
    message(FATAL_ERROR "missing ${DIR}/${f}")
  endif()
endforeach()
file(READ "${DIR}/prompt.txt" prompt)
string(STRIP "${prompt}" prompt)
file(STRINGS "${DIR}/et_tokens.txt" want)
list(LENGTH want steps)
if(steps LESS 32)
  message(FATAL_ERROR "et_tokens.txt has ${steps} tokens, want >= 32")
endif()
string(REPLACE ";" "," want "${want}")
set(extra)
if(DEFINED THREADS)
  set(extra --threads ${THREADS})
endif()
execute_process(
  COMMAND ${PTERUN} generate "${DIR}/model.pte" --prompt-tokens "${prompt}" --steps ${steps}
    --ignore-eos ${extra}
  RESULT_VARIABLE rc OUTPUT_VARIABLE got ERROR_VARIABLE err)
string(STRIP "${got}" got)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pterun generate failed (${rc}): ${err}")
endif()
if(NOT got STREQUAL want)
  message(FATAL_ERROR "tokens differ from ExecuTorch's\n  got:  ${got}\n  want: ${want}")
endif()
message(STATUS "${steps} tokens identical to ExecuTorch's; ${err}")
