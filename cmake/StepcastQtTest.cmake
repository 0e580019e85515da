# stepcast_add_qtest(<name> SOURCES <files> LIBS <targets> [LABELS <labels>])
#
# A QTest executable whose test functions each become a CTest test named <name>.<function>, run
# with QT_QPA_PLATFORM=offscreen (no display needed) and the source tree as working directory.
# The functions are listed after each build by running the executable with `-functions` (as
# doctest_discover_tests does for doctest), so adding a test slot needs no CMake change.
function(stepcast_add_qtest name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  set_target_properties(${name} PROPERTIES AUTOMOC ON)
  target_link_libraries(${name} PRIVATE Qt6::Test stepcast_warnings ${ARG_LIBS})
  target_compile_definitions(${name} PRIVATE STEPCAST_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  set(listed ${CMAKE_CURRENT_BINARY_DIR}/${name}_tests.cmake)
  set(stub ${CMAKE_CURRENT_BINARY_DIR}/${name}_include.cmake)
  add_custom_command(TARGET ${name} POST_BUILD
    COMMAND ${CMAKE_COMMAND} -DEXECUTABLE=$<TARGET_FILE:${name}> -DPREFIX=${name} -DOUTPUT=${listed}
            -DWORKING_DIRECTORY=${PROJECT_SOURCE_DIR} "-DLABELS=${ARG_LABELS}"
            -P ${PROJECT_SOURCE_DIR}/cmake/qtest_discover.cmake
    BYPRODUCTS ${listed}
    VERBATIM)
  file(WRITE ${stub}
    "if(EXISTS \"${listed}\")\n  include(\"${listed}\")\nelse()\n  add_test(${name}_NOT_BUILT ${name}_NOT_BUILT)\nendif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${stub})
endfunction()
