#include "models/shared_prompt_packing.h"

#include <ATen/ATen.h>

#include <utility>
#include <vector>

namespace rollout::models {
namespace {

// Row b's token runs: prompt columns [first, P), response columns [P, P + length).
struct RowRuns {
  int64_t first;
  int64_t length;
};

// The row's runs, or nullopt when its mask has another shape.
std::optional<RowRuns> FindRuns(const at::TensorAccessor<bool, 1>& mask, int64_t prompt_end,
                                int64_t total) {
  int64_t first = prompt_end;
  while (first > 0 && mask[first - 1]) --first;
  if (first == prompt_end) return std::nullopt;  // no prompt token to predict from
  for (int64_t t = 0; t < first; ++t) {
    if (mask[t]) return std::nullopt;
  }
  int64_t end = prompt_end;
  while (end < total && mask[end]) ++end;
  for (int64_t t = end; t < total; ++t) {
    if (mask[t]) return std::nullopt;
  }
  return RowRuns{first, end - prompt_end};
}

bool SamePrompt(const at::TensorAccessor<int64_t, 1>& a, const RowRuns& a_runs,
                const at::TensorAccessor<int64_t, 1>& b, const RowRuns& b_runs,
                int64_t prompt_end) {
  if (a_runs.first != b_runs.first) return false;
  for (int64_t t = a_runs.first; t < prompt_end; ++t) {
    if (a[t] != b[t]) return false;
  }
  return true;
}

}  // namespace

std::optional<SharedPromptPacking> PackSharedPrompts(const at::Tensor& input_ids,
                                                     const at::Tensor& attention_mask,
                                                     const at::Tensor& position_ids,
                                                     int64_t response_length, c10::Device device) {
  const int64_t rows = input_ids.size(0), total = input_ids.size(1);
  const int64_t prompt_end = total - response_length;
  const at::Tensor ids = input_ids.to(at::kCPU, at::kLong).contiguous();
  const at::Tensor mask = attention_mask.to(at::kCPU, at::kBool).contiguous();
  const at::Tensor positions = position_ids.to(at::kCPU, at::kLong).contiguous();
  const auto id = ids.accessor<int64_t, 2>();
  const auto present = mask.accessor<bool, 2>();
  const auto position = positions.accessor<int64_t, 2>();
  std::vector<RowRuns> runs;
  runs.reserve(rows);
  for (int64_t b = 0; b < rows; ++b) {
    const std::optional<RowRuns> row = FindRuns(present[b], prompt_end, total);
    if (!row) return std::nullopt;
    runs.push_back(*row);
  }

  std::vector<int64_t> packed_ids, packed_positions, query_offsets{0}, key_offsets{0}, key_index;
  std::vector<int64_t> score_rows, score_targets, score_slots;
  // Appends token (b, t) to the forward; returns its index there.
  auto add_token = [&](int64_t b, int64_t t) {
    packed_ids.push_back(id[b][t]);
    packed_positions.push_back(position[b][t]);
    return static_cast<int64_t>(packed_ids.size()) - 1;
  };
  int64_t groups = 0;
  for (int64_t b = 0; b < rows;) {
    int64_t end = b + 1;
    while (end < rows && SamePrompt(id[b], runs[b], id[end], runs[end], prompt_end)) ++end;
    ++groups;
    // The prompt's segment: its tokens attend to themselves.
    const int64_t prompt_start = static_cast<int64_t>(packed_ids.size());
    for (int64_t t = runs[b].first; t < prompt_end; ++t) key_index.push_back(add_token(b, t));
    const int64_t prompt_last = static_cast<int64_t>(packed_ids.size()) - 1;
    query_offsets.push_back(static_cast<int64_t>(packed_ids.size()));
    key_offsets.push_back(static_cast<int64_t>(key_index.size()));
    for (int64_t r = b; r < end; ++r) {
      const int64_t length = runs[r].length;
      // Response token i is predicted by the token before it.
      for (int64_t i = 0; i < length; ++i) {
        score_rows.push_back(i == 0 ? prompt_last : static_cast<int64_t>(packed_ids.size()) + i - 1);
        score_targets.push_back(id[r][prompt_end + i]);
        score_slots.push_back(r * response_length + i);
      }
      if (length < 2) continue;  // nothing of the response is needed as a key or query
      for (int64_t t = prompt_start; t <= prompt_last; ++t) key_index.push_back(t);
      for (int64_t i = 0; i + 1 < length; ++i) key_index.push_back(add_token(r, prompt_end + i));
      query_offsets.push_back(static_cast<int64_t>(packed_ids.size()));
      key_offsets.push_back(static_cast<int64_t>(key_index.size()));
    }
    b = end;
  }

  return SharedPromptPacking{
      UploadIndices(packed_ids, at::kLong, device),
      UploadIndices(packed_positions, at::kLong, device),
      PackedSegmentAttention(std::move(query_offsets), std::move(key_offsets), key_index, device),
      UploadIndices(score_rows, at::kLong, device),
      UploadIndices(score_targets, at::kLong, device),
      UploadIndices(score_slots, at::kLong, device),
      groups};
}

}  // namespace rollout::models
