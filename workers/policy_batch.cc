#include "workers/policy_batch.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "workers/micro_batches.h"

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
    if (batch.rollout_is_weights.defined()) {
      response_checks.push_back({"rollout_is_weights", &batch.rollout_is_weights});
    }
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

absl::StatusOr<PolicyBatch> PolicyBatchFromColumns(const Batch& batch, bool for_update,
                                                   bool needs_ref) {
  PolicyBatch policy;
  std::vector<std::pair<const char*, at::Tensor*>> columns = {
      {"input_ids", &policy.input_ids},       {"attention_mask", &policy.attention_mask},
      {"position_ids", &policy.position_ids}, {"responses", &policy.responses},
      {"response_mask", &policy.response_mask}};
  if (for_update) {
    columns.push_back({"old_log_probs", &policy.old_log_probs});
    columns.push_back({"advantages", &policy.advantages});
    if (needs_ref) columns.push_back({"ref_log_prob", &policy.ref_log_probs});
    if (batch.HasTensor("rollout_is_weights")) columns.push_back({"rollout_is_weights", &policy.rollout_is_weights});
  }
  for (const auto& [name, target] : columns) {
    ASSIGN_OR_RETURN(*target, batch.Tensor(name));
  }
  RETURN_IF_ERROR(CheckPolicyBatch(policy, for_update, needs_ref));
  return policy;
}

PolicyBatch MoveTo(const PolicyBatch& batch, c10::Device device) {
  const auto move = [&](const at::Tensor& t) { return t.defined() ? t.to(device) : t; };
  PolicyBatch moved;
  moved.input_ids = move(batch.input_ids);
  moved.attention_mask = move(batch.attention_mask);
  moved.position_ids = move(batch.position_ids);
  moved.responses = move(batch.responses);
  moved.response_mask = move(batch.response_mask);
  moved.old_log_probs = move(batch.old_log_probs);
  moved.advantages = move(batch.advantages);
  moved.ref_log_probs = move(batch.ref_log_probs);
  moved.rollout_is_weights = move(batch.rollout_is_weights);
  return moved;
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
  slice.rollout_is_weights = Slice(batch.rollout_is_weights, start, length);
  return slice;
}

PolicyBatch ReorderRows(const PolicyBatch& batch, const std::vector<int64_t>& order) {
  PolicyBatch rows;
  for (const auto& [out, in] : {std::pair<at::Tensor*, const at::Tensor*>{&rows.input_ids, &batch.input_ids},
                                {&rows.attention_mask, &batch.attention_mask},
                                {&rows.position_ids, &batch.position_ids},
                                {&rows.responses, &batch.responses},
                                {&rows.response_mask, &batch.response_mask},
                                {&rows.old_log_probs, &batch.old_log_probs},
                                {&rows.advantages, &batch.advantages},
                                {&rows.ref_log_probs, &batch.ref_log_probs},
                                {&rows.rollout_is_weights, &batch.rollout_is_weights}}) {
    *out = ReorderRows(*in, order);
  }
  return rows;
}

}  // namespace rollout::workers
