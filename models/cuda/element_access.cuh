// Device-side conversions between the kernels' element types (models/cuda/element_type.h)
// and float32, and the dispatch from an ElementType to a kernel instantiation. For .cu
// files only (nvcc): arithmetic happens in float32, one rounding per stored value.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <initializer_list>

#include "models/cuda/element_type.h"

namespace rollout::models::cuda {

__device__ __forceinline__ float ToFloat(float v) { return v; }
__device__ __forceinline__ float ToFloat(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float ToFloat(__half v) { return __half2float(v); }

template <typename T> __device__ __forceinline__ T FromFloat(float v);
template <> __device__ __forceinline__ float FromFloat<float>(float v) { return v; }
template <> __device__ __forceinline__ __nv_bfloat16 FromFloat<__nv_bfloat16>(float v) {
  return __float2bfloat16(v);
}
template <> __device__ __forceinline__ __half FromFloat<__half>(float v) { return __float2half(v); }

// N consecutive elements, loaded and stored with one instruction (16 bytes at most).
template <typename T, int N>
struct alignas(sizeof(T) * N) Pack {
  T v[N];
};

// Whether rows of `width` elements of T at these addresses split into 16-byte packs
// (host side: picks a kernel's pack size).
template <typename T>
bool Packs16(int64_t width, std::initializer_list<const void*> pointers) {
  if (width % (16 / sizeof(T)) != 0) return false;
  for (const void* p : pointers) {
    if (p != nullptr && reinterpret_cast<uintptr_t>(p) % 16 != 0) return false;
  }
  return true;
}

// Calls fn(T{}) with T the C++ type of `dtype` (float, __nv_bfloat16 or __half).
template <typename Fn>
void DispatchElementType(ElementType dtype, Fn&& fn) {
  switch (dtype) {
    case ElementType::kFloat32: return fn(float{});
    case ElementType::kBFloat16: return fn(__nv_bfloat16{});
    case ElementType::kFloat16: return fn(__half{});
  }
}

}  // namespace rollout::models::cuda
