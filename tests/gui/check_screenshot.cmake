# Runs `stepcast-gui SCENARIO --screenshot OUTPUT` and checks that a real PNG was written: exit 0,
# the PNG signature, and a size no blank window compresses to (a blank 1600x1000 PNG is ~10 KB).
# In: GUI, SCENARIO, OUTPUT, MIN_BYTES.
file(REMOVE ${OUTPUT})
execute_process(COMMAND ${GUI} ${SCENARIO} --screenshot ${OUTPUT} RESULT_VARIABLE code OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "stepcast-gui exited with ${code}: ${out} ${err}")
endif()
if(NOT EXISTS ${OUTPUT})
  message(FATAL_ERROR "no screenshot written to ${OUTPUT}")
endif()
file(READ ${OUTPUT} signature LIMIT 8 HEX)
if(NOT signature STREQUAL "89504e470d0a1a0a")
  message(FATAL_ERROR "${OUTPUT} is not a PNG (starts with ${signature})")
endif()
file(SIZE ${OUTPUT} bytes)
if(bytes LESS ${MIN_BYTES})
  message(FATAL_ERROR "${OUTPUT} has ${bytes} bytes: the window looks empty (expected at least ${MIN_BYTES})")
endif()
message(STATUS "${OUTPUT}: ${bytes} bytes")
