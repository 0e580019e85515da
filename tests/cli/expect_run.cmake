# Script mode (cmake -P): runs COMMAND (a ;-list) and checks its exit code and output.
#   -DCOMMAND=...  -DEXPECT_CODE=N  [-DEXPECT_STDOUT=regex]  [-DEXPECT_STDERR=regex]
# Used by tests/CMakeLists.txt to pin the command line's exit codes (0 ok, 1 bad input, 2 usage).
execute_process(COMMAND ${COMMAND} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code STREQUAL EXPECT_CODE)
  message(FATAL_ERROR "exit code ${code}, expected ${EXPECT_CODE}\nstdout:\n${out}\nstderr:\n${err}")
endif()
if(DEFINED EXPECT_STDOUT AND NOT out MATCHES "${EXPECT_STDOUT}")
  message(FATAL_ERROR "stdout does not match '${EXPECT_STDOUT}':\n${out}")
endif()
if(DEFINED EXPECT_STDERR AND NOT err MATCHES "${EXPECT_STDERR}")
  message(FATAL_ERROR "stderr does not match '${EXPECT_STDERR}':\n${err}")
endif()
