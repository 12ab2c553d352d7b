// CUDA kernel behind engine/paged_kv_cache.h: stores a step's keys and values into
// their cache slots, both in one launch (the ATen formulation takes an index_copy per
// tensor). Plain C++ interface: the .cu never includes ATen.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "models/cuda/element_type.h"

namespace rollout::engine::cuda {

// Token t's key row k + t * k_stride and value row v + t * v_stride (`row` contiguous
// elements each: kv_heads * head_dim) go to slot slot_mapping[t] of k_cache / v_cache
// ([slots, row], contiguous), for t < tokens. Slots must be distinct and in range.
void LaunchWriteKv(models::cuda::ElementType dtype, const void* k, int64_t k_stride,
                   const void* v, int64_t v_stride, const int64_t* slot_mapping, int64_t tokens,
                   int64_t row, void* k_cache, void* v_cache, cudaStream_t stream);

}  // namespace rollout::engine::cuda
