#include "workers/policy_batch.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace rollout::workers {
namespace {

at::Tensor Slice(const at::Tensor& tensor, int64_t start, int64_t length) {
  return tensor.defined() ? tensor.narrow(0, start, length) : tensor;
}

}  // namespace

absl::Status CheckPolicyBatch(const PolicyBatch& batch, bool for_update, bool needs_ref) {
  if (!batch.input_ids.defined() || batch.input_ids.dim() != 2 || !batch.responses.defined() ||
      batch.responses.dim() != 2) {
    return absl::InvalidArgumentError("policy batch: input_ids and responses must be 2-D tensors");
  }
  const int64_t rows = batch.input_ids.size(0);
  const int64_t total = batch.input_ids.size(1);
  const int64_t response = batch.responses.size(1);
  if (response < 1 || response >= total) {
    return absl::InvalidArgumentError(absl::StrCat("policy batch: ", response, " response columns of ",
                                                   total, " in input_ids; need 1 <= R < T"));
  }
  std::vector<std::pair<const char*, const at::Tensor*>> checks = {
      {"attention_mask", &batch.attention_mask}, {"position_ids", &batch.position_ids}};
  std::vector<std::pair<const char*, const at::Tensor*>> response_checks = {
      {"responses", &batch.responses}, {"response_mask", &batch.response_mask}};
  if (for_update) {
    response_checks.push_back({"old_log_probs", &batch.old_log_probs});
    response_checks.push_back({"advantages", &batch.advantages});
    if (needs_ref) response_checks.push_back({"ref_log_probs", &batch.ref_log_probs});
  }
  for (const auto& [name, tensor] : checks) {
    if (!tensor->defined() || tensor->sizes() != batch.input_ids.sizes()) {
      return absl::InvalidArgumentError(
          absl::StrCat("policy batch: ", name, " must be shaped like input_ids [", rows, ", ", total, "]"));
    }
  }
  for (const auto& [name, tensor] : response_checks) {
    if (!tensor->defined() || tensor->dim() != 2 || tensor->size(0) != rows ||
        tensor->size(1) != response) {
      return absl::InvalidArgumentError(
          absl::StrCat("policy batch: ", name, " must be [", rows, ", ", response, "]"));
    }
  }
  return absl::OkStatus();
}

PolicyBatch SliceRows(const PolicyBatch& batch, int64_t start, int64_t length) {
  PolicyBatch slice;
  slice.input_ids = Slice(batch.input_ids, start, length);
  slice.attention_mask = Slice(batch.attention_mask, start, length);
  slice.position_ids = Slice(batch.position_ids, start, length);
  slice.responses = Slice(batch.responses, start, length);
  slice.response_mask = Slice(batch.response_mask, start, length);
  slice.old_log_probs = Slice(batch.old_log_probs, start, length);
  slice.advantages = Slice(batch.advantages, start, length);
  slice.ref_log_probs = Slice(batch.ref_log_probs, start, length);
  return slice;
}

}  // namespace rollout::workers
