# stepcast_embed_files(OUTPUT <cpp> BASE_DIR <dir> FILES <file>...)
# Generates a C++ source defining stepcast::builtin_files() (declared in simulator/builtin_files.h)
# holding each file's path relative to BASE_DIR and its text. The catalog and example scenarios are
# compiled in this way so that `stepcast` works from any directory without an install step.
function(stepcast_embed_files)
  cmake_parse_arguments(ARG "" "OUTPUT;BASE_DIR" "FILES" ${ARGN})
  add_custom_command(
    OUTPUT ${ARG_OUTPUT}
    COMMAND ${CMAKE_COMMAND} -DOUTPUT=${ARG_OUTPUT} -DBASE_DIR=${ARG_BASE_DIR} "-DFILES=${ARG_FILES}"
            -P ${PROJECT_SOURCE_DIR}/cmake/embed_files.cmake
    DEPENDS ${ARG_FILES} ${PROJECT_SOURCE_DIR}/cmake/embed_files.cmake
    COMMENT "Embedding ${CMAKE_CURRENT_LIST_DIR} data files"
    VERBATIM)
endfunction()
