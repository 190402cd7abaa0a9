# Helpers shared by every module's CMakeLists.txt.

# realign_library(NAME SOURCES... DEPS ...): one static library per module, include root = src/.
function(realign_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(realign_${name} STATIC ${ARG_SOURCES})
  target_include_directories(realign_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_compile_options(realign_${name} PRIVATE ${REALIGN_WARNINGS})
  target_link_libraries(realign_${name} PUBLIC ${ARG_DEPS})
endfunction()

# realign_test(NAME SOURCES... DEPS ... [LABELS ...]): one gtest binary per module, registered with ctest.
function(realign_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_compile_options(${name} PRIVATE ${REALIGN_WARNINGS})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/tests)
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main Threads::Threads)
  target_compile_definitions(${name} PRIVATE
    REALIGN_SOURCE_DIR="${PROJECT_SOURCE_DIR}" REALIGN_BINARY_DIR="${PROJECT_BINARY_DIR}")
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 600)
  endif()
  # One ctest entry per binary: a gtest binary runs its cases in one process (fast; no per-case startup).
  add_test(NAME ${name} COMMAND ${name} --gtest_brief=1)
  set_tests_properties(${name} PROPERTIES TIMEOUT ${ARG_TIMEOUT} LABELS "${ARG_LABELS}")
endfunction()
