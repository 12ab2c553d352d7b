// Programmatic dependent launch (PDL, compute capability 9.0 and later) for the decode
// step's kernels.
//
// Why: a decode step is a chain of ~170 kernels of a few microseconds each, and every
// boundary costs the next kernel's launch, block dispatch and first loads after the
// previous one has drained. A kernel started with LaunchDependent may be dispatched
// while the kernel before it on the stream (or in the captured CUDA graph) still runs,
// once every block of that kernel has called LetDependentsStart or exited; its blocks
// then do what does not depend on that kernel (set up shared memory, read weights and
// index tables) and block in WaitForPriorKernels until it has finished and its writes
// are visible.
//
// Contract of a kernel launched with LaunchDependent:
//   * every block calls WaitForPriorKernels on every path, before it reads anything the
//     kernel before it writes and before it writes anything that kernel reads;
//   * it calls LetDependentsStart only after WaitForPriorKernels. Then, when a kernel's
//     early part runs, the kernel before it has passed its own wait, so every kernel
//     further back has finished: the early part may read anything the immediately
//     preceding kernel does not write (weights, block tables, seeds).
// Kernels launched the plain way are unaffected: they start after the previous kernel
// finished, as always. On older GPUs both device calls compile to nothing and the
// launch attribute is ignored.
#pragma once

#include <cuda_runtime.h>

namespace rollout::models::cuda {

__device__ __forceinline__ void WaitForPriorKernels() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

__device__ __forceinline__ void LetDependentsStart() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}

// kernel<<<grid, block, shared_bytes, stream>>>(args...) with programmatic stream
// serialization allowed; errors surface through cudaGetLastError as with <<<>>>.
template <typename... Params, typename... Args>
void LaunchDependent(void (*kernel)(Params...), dim3 grid, dim3 block, size_t shared_bytes,
                     cudaStream_t stream, Args&&... args) {
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = shared_bytes;
  config.stream = stream;
  config.attrs = &attribute;
  config.numAttrs = 1;
  cudaLaunchKernelEx(&config, kernel, static_cast<Params>(args)...);
}

}  // namespace rollout::models::cuda
