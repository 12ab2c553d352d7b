#include "models/cuda/elementwise_kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "models/cuda/element_access.cuh"
#include "models/cuda/swiglu_math.cuh"

namespace rollout::models::cuda {
namespace {

constexpr int kThreads = 256;

__device__ __forceinline__ float Load(const float* p, int64_t i) { return p[i]; }
__device__ __forceinline__ float Load(const __nv_bfloat16* p, int64_t i) {
  return __bfloat162float(p[i]);
}
__device__ __forceinline__ float Load(const __half* p, int64_t i) { return __half2float(p[i]); }
__device__ __forceinline__ void Store(float* p, int64_t i, float v) { p[i] = v; }
__device__ __forceinline__ void Store(__nv_bfloat16* p, int64_t i, float v) {
  p[i] = __float2bfloat16(v);
}
__device__ __forceinline__ void Store(__half* p, int64_t i, float v) { p[i] = __float2half(v); }

template <typename T>
__global__ void SwigluForward(const T* gate, const T* up, int64_t count, T* out) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count;
       i += int64_t(gridDim.x) * blockDim.x) {
    const float g = Load(gate, i);
    Store(out, i, SiluTimes(g, Load(up, i)));
  }
}

template <typename T>
__global__ void SwigluBackward(const T* gate, const T* up, const T* grad_out, int64_t count,
                               T* grad_gate, T* grad_up) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count;
       i += int64_t(gridDim.x) * blockDim.x) {
    const float g = Load(gate, i);
    const float go = Load(grad_out, i);
    const float s = Sigmoid(g);
    Store(grad_up, i, go * g * s);
    // silu'(g) = s * (1 + g * (1 - s))
    Store(grad_gate, i, go * Load(up, i) * s * (1.f + g * (1.f - s)));
  }
}

template <typename T>
__global__ void Rope(const T* x, const T* cos, const T* sin, int64_t tokens, int64_t heads,
                     int64_t dim, bool backward, T* out) {
  const int64_t half = dim / 2;
  const int64_t count = tokens * heads * dim;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t j = i % dim;
    const int64_t token = i / (heads * dim);
    const int64_t row = token * dim;
    const bool first = j < half;
    const int64_t partner = first ? i + half : i - half;  // same token and head
    float v = Load(x, i) * Load(cos, row + j);
    if (!backward) {
      // rotate_half(x)[j] = -x[j + half] (first half), x[j - half] (second half)
      const float rotated = first ? -Load(x, partner) : Load(x, partner);
      v += rotated * Load(sin, row + j);
    } else {
      // Transpose of the rotation: the partner's sine, opposite sign.
      const int64_t k = first ? j + half : j - half;
      const float term = Load(x, partner) * Load(sin, row + k);
      v += first ? term : -term;
    }
    Store(out, i, v);
  }
}

int Blocks(int64_t count) {
  const int64_t blocks = (count + kThreads - 1) / kThreads;
  return static_cast<int>(blocks < 65535 * 16 ? blocks : 65535 * 16);
}

}  // namespace

void LaunchSwigluForward(ElementType dtype, const void* gate, const void* up, int64_t count,
                         void* out, cudaStream_t stream) {
  if (count == 0) return;
  DispatchElementType(dtype, [&](auto zero) {
    using T = decltype(zero);
    SwigluForward<T><<<Blocks(count), kThreads, 0, stream>>>(
        static_cast<const T*>(gate), static_cast<const T*>(up), count, static_cast<T*>(out));
  });
}

void LaunchSwigluBackward(ElementType dtype, const void* gate, const void* up,
                          const void* grad_out, int64_t count, void* grad_gate, void* grad_up,
                          cudaStream_t stream) {
  if (count == 0) return;
  DispatchElementType(dtype, [&](auto zero) {
    using T = decltype(zero);
    SwigluBackward<T><<<Blocks(count), kThreads, 0, stream>>>(
        static_cast<const T*>(gate), static_cast<const T*>(up), static_cast<const T*>(grad_out),
        count, static_cast<T*>(grad_gate), static_cast<T*>(grad_up));
  });
}

void LaunchRope(ElementType dtype, const void* x, const void* cos, const void* sin,
                int64_t tokens, int64_t heads, int64_t dim, bool backward, void* out,
                cudaStream_t stream) {
  const int64_t count = tokens * heads * dim;
  if (count == 0) return;
  DispatchElementType(dtype, [&](auto zero) {
    using T = decltype(zero);
    Rope<T><<<Blocks(count), kThreads, 0, stream>>>(
        static_cast<const T*>(x), static_cast<const T*>(cos), static_cast<const T*>(sin), tokens,
        heads, dim, backward, static_cast<T*>(out));
  });
}

}  // namespace rollout::models::cuda
