// The SwiGLU activation's arithmetic, shared so that the inference kernel
// (decode_kernels.cu) and the training kernels (elementwise_kernels.cu) give the same
// bits. For .cu files only (nvcc).
#pragma once

namespace rollout::models::cuda {

// In float32, with the fast exponential.
__device__ __forceinline__ float Sigmoid(float x) { return 1.f / (1.f + __expf(-x)); }

// silu(gate) * up = gate * sigmoid(gate) * up.
__device__ __forceinline__ float SiluTimes(float gate, float up) { return gate * Sigmoid(gate) * up; }

}  // namespace rollout::models::cuda
