#include "models/linear.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include <cmath>

#include "models/grouped_linear.h"

namespace rollout::models {

at::Tensor Linear::Forward(const at::Tensor& x, bool use_adapter, bool training) const {
  if (const at::Tensor* weight = PlainWeight(use_adapter)) return Product(x, *weight);
  return Product(x, weight_) + AdapterTerm(x, training);
}

const at::Tensor* Linear::PlainWeight(bool use_adapter) const {
  if (merged_) return use_adapter ? &weight_ : &unmerged_weight_;
  if (has_adapter() && use_adapter) return nullptr;
  return &weight_;
}

const at::Tensor& Linear::ProductWeight(bool use_adapter) const {
  const at::Tensor* plain = PlainWeight(use_adapter);
  return plain != nullptr ? *plain : weight_;
}

at::Tensor Linear::AdapterTerm(const at::Tensor& x, bool training) const {
  const at::Tensor input = training && lora_dropout_ > 0 ? at::dropout(x, lora_dropout_, true) : x;
  return at::linear(at::linear(input, lora_a_), lora_b_) * lora_scale_;
}

at::Tensor Linear::Product(const at::Tensor& x, const at::Tensor& weight) const {
  LinearGroup group{weight, bias_, {weight}, {}};
  if (bias_.defined()) group.layer_biases.push_back(bias_);
  return GroupedLinear(x, group).front();
}

void Linear::AddAdapter(const LoraOptions& options, at::Generator generator) {
  const int64_t in = weight_.size(1);
  const int64_t out = weight_.size(0);
  // kaiming_uniform_(a = sqrt(5)) on [r, in]: bound = sqrt(6 / ((1 + a^2) fan_in)) = 1/sqrt(in).
  const double bound = 1.0 / std::sqrt(static_cast<double>(in));
  at::Tensor a = at::empty({options.rank, in}, at::TensorOptions().dtype(at::kFloat));
  a.uniform_(-bound, bound, generator);
  lora_a_ = a.to(weight_.options()).set_requires_grad(true);
  lora_b_ = at::zeros({out, options.rank}, weight_.options()).set_requires_grad(true);
  lora_scale_ = options.alpha / static_cast<double>(options.rank);
  lora_dropout_ = options.dropout;
}

at::Tensor Linear::Delta() const { return at::matmul(lora_b_, lora_a_) * lora_scale_; }

void Linear::Merge() {
  if (!has_adapter() || merged_) return;
  c10::NoGradGuard no_grad;
  unmerged_weight_ = weight_;
  weight_ = weight_ + Delta();
  merged_ = true;
}

void Linear::Unmerge() {
  if (!has_adapter() || !merged_) return;
  weight_ = unmerged_weight_;
  unmerged_weight_ = at::Tensor();
  merged_ = false;
}

}  // namespace rollout::models
