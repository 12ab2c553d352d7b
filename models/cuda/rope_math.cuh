// Rotate-half RoPE of one element, for .cu files (nvcc). Every kernel that rotates
// (models/cuda/decode_kernels.cu's RopeQk, engine/cuda/paged_attention_mma.cu's decode
// variant) goes through this, so they round identically: one product, one fused
// multiply-add, one rounding to T.
#pragma once

#include "models/cuda/element_access.cuh"

namespace rollout::models::cuda {

// x[j] cos[j] + rotate_half(x)[j] sin[j], with rotate_half(x)[j] = -x[j + D/2] in the
// first half (`first_half`) and x[j - D/2] in the second; `partner` is that other element.
template <typename T>
__device__ __forceinline__ T RotateHalfElement(float x, float partner, bool first_half, float c,
                                               float s) {
  const float rotated = first_half ? -partner : partner;
  return FromFloat<T>(__fmaf_rn(rotated, s, __fmul_rn(x, c)));
}

}  // namespace rollout::models::cuda
