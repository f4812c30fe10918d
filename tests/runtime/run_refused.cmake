# Loading PTE must fail (non-zero exit) with a message containing EXPECT.
#   PTERUN PTE EXPECT
# PTERUN and NPYCMP are commands: an emulator prefix may come first, '|'-separated.
string(REPLACE "|" ";" PTERUN "${PTERUN}")
execute_process(COMMAND ${PTERUN} bench "${PTE}" --iterations 1 --warmup 0
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(FATAL_ERROR "${PTE} loaded and ran; it must be refused")
endif()
string(FIND "${err}" "${EXPECT}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "the refusal does not say '${EXPECT}':\n${err}")
endif()
