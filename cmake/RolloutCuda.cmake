# Decides whether the CUDA/NCCL paths are built (ROLLOUT_CUDA=AUTO|ON|OFF) and defines
# ROLLOUT_WITH_CUDA / ROLLOUT_WITH_NCCL for the targets that link rollout::cuda.
set(_torch_has_cuda OFF)
if(TARGET torch_cuda OR TORCH_CUDA_LIBRARIES)
  set(_torch_has_cuda ON)
endif()

if(ROLLOUT_CUDA STREQUAL "ON" AND NOT _torch_has_cuda)
  message(FATAL_ERROR "ROLLOUT_CUDA=ON but the LibTorch found at ${Torch_DIR} has no CUDA; "
                      "point CMAKE_PREFIX_PATH at a CUDA build of PyTorch or use ROLLOUT_CUDA=AUTO")
endif()
if(ROLLOUT_CUDA STREQUAL "OFF")
  set(ROLLOUT_WITH_CUDA OFF)
else()
  set(ROLLOUT_WITH_CUDA ${_torch_has_cuda})
endif()

add_library(rollout_cuda_flags INTERFACE)
add_library(rollout::cuda ALIAS rollout_cuda_flags)
if(ROLLOUT_WITH_CUDA)
  # Kernels of our own (models/cuda/*.cu) are built for TORCH_CUDA_ARCH_LIST ("9.0a"
  # -> 90a) when set, else for the GPUs of this machine.
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    if(DEFINED ENV{TORCH_CUDA_ARCH_LIST})
      string(REPLACE "+PTX" "" _archs "$ENV{TORCH_CUDA_ARCH_LIST}")
      string(REPLACE "." "" _archs "${_archs}")
      string(REPLACE " " ";" _archs "${_archs}")
      set(CMAKE_CUDA_ARCHITECTURES ${_archs})
    else()
      set(CMAKE_CUDA_ARCHITECTURES native)
    endif()
  endif()
  set(CMAKE_CUDA_STANDARD 17)
  enable_language(CUDA)
  find_package(CUDAToolkit REQUIRED)
  find_path(NCCL_INCLUDE_DIR nccl.h
            HINTS ENV NCCL_HOME ${CUDAToolkit_INCLUDE_DIRS} PATH_SUFFIXES include)
  find_library(NCCL_LIBRARY nccl
               HINTS ENV NCCL_HOME ${CUDAToolkit_LIBRARY_DIR} PATH_SUFFIXES lib lib64)
  if(NOT NCCL_INCLUDE_DIR OR NOT NCCL_LIBRARY)
    message(FATAL_ERROR "LibTorch has CUDA but NCCL was not found; set NCCL_HOME or ROLLOUT_CUDA=OFF")
  endif()
  target_compile_definitions(rollout_cuda_flags INTERFACE ROLLOUT_WITH_CUDA=1 ROLLOUT_WITH_NCCL=1)
  target_include_directories(rollout_cuda_flags INTERFACE ${NCCL_INCLUDE_DIR})
  target_link_libraries(rollout_cuda_flags INTERFACE CUDA::cudart ${NCCL_LIBRARY})
  message(STATUS "rollout: CUDA on (NCCL ${NCCL_LIBRARY})")
else()
  message(STATUS "rollout: CUDA off (CPU-only LibTorch or ROLLOUT_CUDA=OFF)")
endif()
# Recorded in the cache so scripts/test.sh and scripts/demo.sh can tell.
set(ROLLOUT_WITH_CUDA ${ROLLOUT_WITH_CUDA} CACHE INTERNAL "Whether the CUDA/NCCL paths are built")
