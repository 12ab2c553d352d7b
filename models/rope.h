// Rotary position embedding as HF transformers computes it for Qwen2 and Llama (the
// "rotate half" layout), with Llama 3's frequency scaling.
#pragma once

#include <ATen/core/Tensor.h>

#include <utility>

#include "models/hf_config.h"

namespace rollout::models {

class Rope {
 public:
  // The frequencies live on `device` (the model's), so CosSin never copies them from
  // the host — a copy that would also break CUDA graph capture.
  Rope(int64_t head_dim, double theta, const RopeScaling& scaling,
       c10::Device device = c10::Device(c10::kCPU));

  // cos and sin for `positions` (int64, any shape S): each S + [head_dim], computed in
  // float32 and cast to `dtype` (the activations' dtype, as HF does), on the
  // positions' device.
  std::pair<at::Tensor, at::Tensor> CosSin(const at::Tensor& positions, c10::ScalarType dtype) const;

  // x [S..., heads, head_dim] rotated by cos/sin of shape S + [head_dim] (broadcast
  // over heads), all in one dtype. CUDA tensors take the fused kernel
  // (models/fused_elementwise.h).
  static at::Tensor Apply(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin);

  const at::Tensor& inv_freq() const { return inv_freq_; }

 private:
  at::Tensor inv_freq_;  // [head_dim / 2] float32, on the model's device
};

}  // namespace rollout::models
