// Element types the project's CUDA kernels are instantiated for. Kept free of LibTorch
// so .cu files never include ATen; models/fused_kernel_support.h maps ATen dtypes to it.
#pragma once

namespace rollout::models::cuda {

enum class ElementType { kFloat32, kBFloat16, kFloat16 };

}  // namespace rollout::models::cuda
