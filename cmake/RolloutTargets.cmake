# Helpers shared by the folder CMakeLists.
#
# A LibTorch translation unit costs ~30 s to parse on 2 cores; the precompiled header
# (common/torch_pch.h, built once for rollout_common) brings that to a few seconds.
# Every target that includes LibTorch calls rollout_use_torch_pch().

# C++ sources only (nvcc takes other flags).
set(ROLLOUT_WARNINGS $<$<COMPILE_LANGUAGE:CXX>:-Wall;-Wextra;-Wno-unused-parameter;-Winvalid-pch>)

function(rollout_use_torch_pch target)
  if(target STREQUAL "rollout_common")
    target_precompile_headers(${target} PRIVATE ${PROJECT_SOURCE_DIR}/common/torch_pch.h)
  else()
    target_precompile_headers(${target} REUSE_FROM rollout_common)
  endif()
endfunction()

# rollout_add_test(NAME name SOURCES a.cc b.cc LIBS lib... [LABELS l...] [TIMEOUT s])
# One GoogleTest executable; its tests are discovered when ctest runs (not at build).
function(rollout_add_test)
  cmake_parse_arguments(T "" "NAME;TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBS} GTest::gmock GTest::gtest_main)
  target_compile_options(${T_NAME} PRIVATE ${ROLLOUT_WARNINGS})
  rollout_use_torch_pch(${T_NAME})
  set(_labels cpu ${T_LABELS})
  if("gpu" IN_LIST T_LABELS)
    set(_labels ${T_LABELS})
  endif()
  gtest_discover_tests(${T_NAME}
    DISCOVERY_MODE PRE_TEST
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    PROPERTIES LABELS "${_labels}" TIMEOUT ${T_TIMEOUT})
endfunction()
