# Writes add_test() lines for every function of a QTest executable (see StepcastQtTest.cmake).
# In: EXECUTABLE, PREFIX, OUTPUT, WORKING_DIRECTORY, LABELS.
execute_process(COMMAND ${CMAKE_COMMAND} -E env QT_QPA_PLATFORM=offscreen ${EXECUTABLE} -functions
                OUTPUT_VARIABLE listing RESULT_VARIABLE code ERROR_VARIABLE errors
                WORKING_DIRECTORY ${WORKING_DIRECTORY})
if(NOT code EQUAL 0)
  message(FATAL_ERROR "${EXECUTABLE} -functions failed (${code}): ${errors}")
endif()
string(REPLACE "\n" ";" lines "${listing}")
set(content "")
foreach(line IN LISTS lines)
  if(line MATCHES "^([A-Za-z_][A-Za-z0-9_]*)\\(\\)$")
    set(fn ${CMAKE_MATCH_1})
    string(APPEND content
      "add_test([=[${PREFIX}.${fn}]=] [==[${EXECUTABLE}]==] ${fn})\n"
      "set_tests_properties([=[${PREFIX}.${fn}]=] PROPERTIES WORKING_DIRECTORY [==[${WORKING_DIRECTORY}]==] "
      "ENVIRONMENT QT_QPA_PLATFORM=offscreen LABELS [=[${LABELS}]=])\n")
  endif()
endforeach()
file(WRITE ${OUTPUT} "${content}")
