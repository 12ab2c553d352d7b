// A linear layer in HF nn.Linear layout (weight [out, in], optional bias [out]) with an
// optional LoRA adapter (PEFT semantics):
//   y = x W^T + b + (alpha / r) * dropout(x) A^T B^T,   A [r, in], B [out, r]
// PEFT's initialisation: A Kaiming-uniform (a = sqrt(5)), B zeros, so a fresh adapter
// changes nothing. Merge() uses W + (alpha / r) B A as the weight (for fast rollout)
// and Unmerge() restores the original W bit for bit (it is kept aside while merged,
// never recomputed by subtraction); while merged, Forward() does not add the adapter
// a second time.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace rollout::models {

struct LoraOptions {
  int64_t rank = 0;  // 0: no adapters
  double alpha = 16;
  double dropout = 0;
};

class Linear {
 public:
  Linear() = default;
  Linear(at::Tensor weight, at::Tensor bias) : weight_(std::move(weight)), bias_(std::move(bias)) {}

  // x [..., in] -> [..., out]. `use_adapter` false gives the base layer (the reference
  // policy with LoRA); dropout applies only when `training`.
  at::Tensor Forward(const at::Tensor& x, bool use_adapter, bool training) const;

  // The weight W with Forward(x, use_adapter, training) = x W^T + b, or nullptr when
  // Forward adds an adapter term (an unmerged adapter in use).
  const at::Tensor* PlainWeight(bool use_adapter) const;
  // The weight of Forward's x W^T + b: PlainWeight(use_adapter), or the (unmerged) W
  // that Forward adds the adapter term to.
  const at::Tensor& ProductWeight(bool use_adapter) const;
  // Forward's adapter term (alpha / r) dropout(x) A^T B^T [..., out], dropout only when
  // `training`. Needs an adapter.
  at::Tensor AdapterTerm(const at::Tensor& x, bool training) const;

  // Adds an adapter (A drawn from `generator`); the base weights are left untouched.
  void AddAdapter(const LoraOptions& options, at::Generator generator);
  bool has_adapter() const { return lora_a_.defined(); }
  void Merge();
  void Unmerge();
  bool merged() const { return merged_; }

  // The weight Forward() uses (merged while merged()).
  at::Tensor& weight() { return weight_; }
  const at::Tensor& weight() const { return weight_; }
  // The weight without the adapter, whether merged or not.
  const at::Tensor& base_weight() const { return merged_ ? unmerged_weight_ : weight_; }
  at::Tensor& bias() { return bias_; }
  const at::Tensor& bias() const { return bias_; }
  at::Tensor& lora_a() { return lora_a_; }
  at::Tensor& lora_b() { return lora_b_; }
  const at::Tensor& lora_a() const { return lora_a_; }
  const at::Tensor& lora_b() const { return lora_b_; }
  double lora_scale() const { return lora_scale_; }

 private:
  at::Tensor Delta() const;  // (alpha / r) B A, [out, in] in the weight's dtype
  // x weight^T + b as one autograd node (models/grouped_linear.h).
  at::Tensor Product(const at::Tensor& x, const at::Tensor& weight) const;

  at::Tensor weight_;
  at::Tensor unmerged_weight_;  // the base weight while merged
  at::Tensor bias_;  // undefined: no bias
  at::Tensor lora_a_;
  at::Tensor lora_b_;
  double lora_scale_ = 0;
  double lora_dropout_ = 0;
  bool merged_ = false;
};

}  // namespace rollout::models
