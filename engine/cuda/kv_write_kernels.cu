#include "engine/cuda/kv_write_kernels.h"

#include "models/cuda/element_access.cuh"

namespace rollout::engine::cuda {
namespace {

constexpr int kThreads = 256;

// One thread per element of the 2 x tokens x row copies (keys, then values).
template <typename T>
__global__ void WriteKv(const T* __restrict__ k, int64_t k_stride, const T* __restrict__ v,
                        int64_t v_stride, const int64_t* __restrict__ slot_mapping,
                        int64_t tokens, int64_t row, T* __restrict__ k_cache,
                        T* __restrict__ v_cache) {
  const int64_t per_tensor = tokens * row;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < 2 * per_tensor;
       i += int64_t(gridDim.x) * blockDim.x) {
    const bool value = i >= per_tensor;
    const int64_t j = value ? i - per_tensor : i;
    const int64_t token = j / row, e = j % row;
    const int64_t slot = slot_mapping[token];
    if (value) {
      v_cache[slot * row + e] = v[token * v_stride + e];
    } else {
      k_cache[slot * row + e] = k[token * k_stride + e];
    }
  }
}

}  // namespace

void LaunchWriteKv(models::cuda::ElementType dtype, const void* k, int64_t k_stride,
                   const void* v, int64_t v_stride, const int64_t* slot_mapping, int64_t tokens,
                   int64_t row, void* k_cache, void* v_cache, cudaStream_t stream) {
  const int64_t count = 2 * tokens * row;
  if (count == 0) return;
  const int64_t blocks64 = (count + kThreads - 1) / kThreads;
  const unsigned blocks = static_cast<unsigned>(blocks64 < 65535 * 16 ? blocks64 : 65535 * 16);
  auto launch = [&](auto zero) {
    using T = decltype(zero);
    WriteKv<T><<<blocks, kThreads, 0, stream>>>(
        static_cast<const T*>(k), k_stride, static_cast<const T*>(v), v_stride, slot_mapping,
        tokens, row, static_cast<T*>(k_cache), static_cast<T*>(v_cache));
  };
  models::cuda::DispatchElementType(dtype, launch);
}

}  // namespace rollout::engine::cuda
