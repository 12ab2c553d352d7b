#include "algorithms/seeded_choice.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "common/mix_bits.h"

namespace rollout::algorithms {

at::Tensor ChooseSeeded(const at::Tensor& candidates, int64_t count, uint64_t seed) {
  const at::Tensor host = candidates.to(at::kCPU, at::kBool).contiguous();
  const bool* flags = host.data_ptr<bool>();
  const uint64_t key = MixBits(seed ^ 0x3c6ef372fe94f82bULL);
  // (hash, offset) of every candidate; the `count` smallest hashes win.
  std::vector<std::pair<uint64_t, int64_t>> ranked;
  for (int64_t offset = 0; offset < host.numel(); ++offset) {
    if (flags[offset]) ranked.emplace_back(MixBits(key + (static_cast<uint64_t>(offset) + 1) * kGoldenGamma), offset);
  }
  const auto chosen_count = static_cast<size_t>(std::clamp<int64_t>(count, 0, static_cast<int64_t>(ranked.size())));
  std::partial_sort(ranked.begin(), ranked.begin() + chosen_count, ranked.end());
  at::Tensor chosen = at::zeros(host.sizes(), host.options());
  bool* out = chosen.data_ptr<bool>();
  for (size_t i = 0; i < chosen_count; ++i) out[ranked[i].second] = true;
  return chosen.to(candidates.device());
}

}  // namespace rollout::algorithms
