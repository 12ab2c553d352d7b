// What the autograd wrappers of the project's CUDA kernels share (CUDA builds only).
#pragma once

#include <c10/core/ScalarType.h>
#include <c10/util/Exception.h>

#include "models/cuda/element_type.h"

namespace rollout::models {

// The kernel instantiation for a tensor dtype; float32, bfloat16 and float16 only.
inline cuda::ElementType KernelElementType(c10::ScalarType type) {
  switch (type) {
    case c10::ScalarType::BFloat16: return cuda::ElementType::kBFloat16;
    case c10::ScalarType::Half: return cuda::ElementType::kFloat16;
    case c10::ScalarType::Float: return cuda::ElementType::kFloat32;
    default: TORCH_CHECK(false, "the fused CUDA kernels take float32, bfloat16 or float16, not ", type);
  }
}

}  // namespace rollout::models
