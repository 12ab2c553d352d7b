# Compiler caching. CCACHE_BASEDIR is set to the source root by scripts/test.sh and
# scripts/demo.sh so a fresh clone in another folder hits the same cache entries; the
# sloppiness lets ccache cache translation units that use the precompiled header.
find_program(ROLLOUT_CCACHE ccache)
if(ROLLOUT_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  set(CMAKE_CXX_COMPILER_LAUNCHER
      ${CMAKE_COMMAND} -E env CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
      ${ROLLOUT_CCACHE})
  set(CMAKE_C_COMPILER_LAUNCHER ${ROLLOUT_CCACHE})
  message(STATUS "rollout: compiling through ccache (${ROLLOUT_CCACHE})")
endif()
