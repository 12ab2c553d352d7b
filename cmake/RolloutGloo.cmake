# Gloo, the CPU collectives behind data-parallel training on CPU pools
# (workers/gloo_communicator.cc). Required by CPU-only builds (scripts/setup.sh
# installs libgloo-dev); optional with CUDA, where NCCL serves GPU pools and a CPU pool
# of several workers is then refused at start.
find_package(Gloo CONFIG QUIET)
if(TARGET gloo)
  set(ROLLOUT_WITH_GLOO ON)
  message(STATUS "rollout: Gloo on")
elseif(ROLLOUT_WITH_CUDA)
  set(ROLLOUT_WITH_GLOO OFF)
  message(STATUS "rollout: Gloo off (not found): CPU pools train on one worker only")
else()
  message(FATAL_ERROR "Gloo not found (Debian/Ubuntu: libgloo-dev; scripts/setup.sh installs it)")
endif()
