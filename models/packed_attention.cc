#include "models/packed_attention.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <utility>

#include "common/check.h"
#include "common/torch_compat.h"

namespace rollout::models {
at::Tensor UploadIndices(const std::vector<int64_t>& values, c10::ScalarType dtype,
                         c10::Device device) {
  at::Tensor host = at::tensor(values, at::kLong).to(dtype);
  if (!device.is_cuda()) return host.to(device);
  // The caching host allocator keeps the pinned block until the copy has run.
  return host.pin_memory().to(device, /*non_blocking=*/true);
}

PackedSegmentAttention::PackedSegmentAttention(std::vector<int64_t> query_offsets,
                                               std::vector<int64_t> key_offsets,
                                               const std::vector<int64_t>& key_index,
                                               c10::Device device)
    : query_offsets_(std::move(query_offsets)), key_offsets_(std::move(key_offsets)) {
  ROLLOUT_CHECK(query_offsets_.size() >= 2 && query_offsets_.size() == key_offsets_.size() &&
                query_offsets_.front() == 0 && key_offsets_.front() == 0 &&
                key_offsets_.back() == static_cast<int64_t>(key_index.size()))
      << "segment offsets do not fit: " << query_offsets_.size() << " query and "
      << key_offsets_.size() << " key offsets for " << key_index.size() << " keys";
  for (size_t s = 0; s + 1 < query_offsets_.size(); ++s) {
    const int64_t queries = query_offsets_[s + 1] - query_offsets_[s];
    const int64_t keys = key_offsets_[s + 1] - key_offsets_[s];
    ROLLOUT_CHECK(queries >= 1 && keys >= queries)
        << "segment " << s << " has " << queries << " queries and " << keys << " keys";
    longest_query_ = std::max(longest_query_, queries);
    longest_key_ = std::max(longest_key_, keys);
  }
  key_index_ = UploadIndices(key_index, at::kLong, device);
  query_offsets_device_ = UploadIndices(query_offsets_, at::kInt, device);
  key_offsets_device_ = UploadIndices(key_offsets_, at::kInt, device);
}

bool PackedSegmentAttention::UsesFlashKernel(c10::Device device, c10::ScalarType dtype,
                                             int64_t head_dim) {
  return device.is_cuda() && (dtype == at::kBFloat16 || dtype == at::kHalf) &&
         head_dim % 8 == 0 && head_dim <= 256 && compat::VariableLengthAttentionAvailable();
}

at::Tensor PackedSegmentAttention::AppendAndAttend(int64_t /*layer*/, const at::Tensor& q,
                                                   const at::Tensor& k, const at::Tensor& v,
                                                   double scale) {
  ROLLOUT_CHECK(q.size(0) == tokens() && k.size(0) == tokens() && v.size(0) == tokens())
      << "packed attention over " << tokens() << " tokens got q/k/v of " << q.size(0) << "/"
      << k.size(0) << "/" << v.size(0);
  const at::Tensor keys = k.index_select(0, key_index_);
  const at::Tensor values = v.index_select(0, key_index_);
  if (UsesFlashKernel(q.device(), q.scalar_type(), q.size(2))) {
    return compat::VariableLengthCausalAttention(q.contiguous(), keys, values,
                                                 query_offsets_device_, key_offsets_device_,
                                                 longest_query_, longest_key_, scale);
  }
  // [L, H, D] -> [1, H, L, D]
  auto heads_first = [](const at::Tensor& x) { return x.transpose(0, 1).unsqueeze(0); };
  std::vector<at::Tensor> outputs;
  outputs.reserve(segments());
  for (int64_t s = 0; s < segments(); ++s) {
    const int64_t q0 = query_offsets_[s], k0 = key_offsets_[s];
    const at::Tensor out = compat::ScaledDotProductAttention(
        heads_first(q.narrow(0, q0, query_offsets_[s + 1] - q0)),
        heads_first(keys.narrow(0, k0, key_offsets_[s + 1] - k0)),
        heads_first(values.narrow(0, k0, key_offsets_[s + 1] - k0)), std::nullopt,
        /*causal=*/true, scale);
    outputs.push_back(out.squeeze(0).transpose(0, 1));
  }
  return at::cat(outputs);
}

}  // namespace rollout::models
