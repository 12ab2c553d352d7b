// The attention of a forward over packed segments of tokens, without padding
// (CausalLM::ForwardStep with this as its KvCache): segment s's queries are the
// forward's tokens [query_offsets[s], query_offsets[s + 1]); its keys are tokens of the
// same forward, listed by index, the last of them the segment's own queries. Each query
// sees the keys up to itself (causal, its last query aligned with its last key), so the
// keys before a segment's own tokens act as a prefix every query of it sees: a prompt
// computed once as its own segment and listed ahead of each response that continues
// it (models/shared_prompt_packing.h).
//
// Keys and values are gathered per layer (their gradients summed back over every
// segment that lists them; on CUDA in an order that may vary between runs, as in
// FlashAttention's own backward). Half precision on CUDA runs FlashAttention's
// variable-length kernel (UsesFlashKernel); elsewhere each segment is attended on its own
// (compat::ScaledDotProductAttention), which suits tests and small batches.
// Not thread-safe; one forward at a time.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "models/kv_cache.h"

namespace rollout::models {

// `values` as a [size] tensor of `dtype` (int64 or int32) on `device`. A CUDA copy is
// queued on the current stream from pinned memory, without waiting for the work queued
// before it (a copy from pageable memory would drain the stream first).
at::Tensor UploadIndices(const std::vector<int64_t>& values, c10::ScalarType dtype,
                         c10::Device device);

class PackedSegmentAttention final : public KvCache {
 public:
  // query_offsets, key_offsets: [S + 1] non-decreasing from 0, every segment with at least
  // one query and at least as many keys as queries; key_index: [key_offsets.back()] int64
  // token indices below query_offsets.back() (the forward's N), kept on the host and
  // copied to `device`.
  PackedSegmentAttention(std::vector<int64_t> query_offsets, std::vector<int64_t> key_offsets,
                         const std::vector<int64_t>& key_index, c10::Device device);

  // Whether tensors of `dtype` on `device` with this head_dim take the flash kernel.
  static bool UsesFlashKernel(c10::Device device, c10::ScalarType dtype, int64_t head_dim);

  int64_t tokens() const { return query_offsets_.back(); }
  int64_t segments() const { return static_cast<int64_t>(query_offsets_.size()) - 1; }

  // q [N, Hq, D], k/v [N, Hkv, D] for all N tokens; nothing is stored.
  at::Tensor AppendAndAttend(int64_t layer, const at::Tensor& q, const at::Tensor& k,
                             const at::Tensor& v, double scale) override;
  // Stores nothing: a copy sharing the segment tensors.
  std::shared_ptr<KvCache> RecomputationCopy() const override {
    return std::make_shared<PackedSegmentAttention>(*this);
  }

 private:
  std::vector<int64_t> query_offsets_, key_offsets_;
  at::Tensor key_index_;                              // [Nk] int64 on the device
  at::Tensor query_offsets_device_, key_offsets_device_;  // [S + 1] int32
  int64_t longest_query_ = 0, longest_key_ = 0;
};

}  // namespace rollout::models
