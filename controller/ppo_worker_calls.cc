#include "controller/ppo_worker_calls.h"

#include <ATen/ATen.h>

#include "common/batch_metrics.h"
#include "common/status_macros.h"

namespace rollout::controller {
namespace {

absl::Status Merge(const absl::StatusOr<Batch>& columns, Batch* batch) {
  if (!columns.ok()) return columns.status();
  return batch->Union(*columns);
}

// The sequence columns and `extra` of `batch`.
absl::StatusOr<Batch> SelectWith(const Batch& batch, const std::vector<std::string>& extra) {
  std::vector<std::string> columns = SequenceColumns();
  columns.insert(columns.end(), extra.begin(), extra.end());
  return batch.Select(columns);
}

// Runs a training method on the group's shards and averages each metric over the ranks.
absl::StatusOr<std::map<std::string, double>> TrainOnShards(WorkerGroup& group, const std::string& method,
                                                            const Batch& input) {
  ASSIGN_OR_RETURN(const std::vector<Batch> shards, group.CallDpShards(method, input));
  std::map<std::string, std::vector<double>> per_rank;
  for (const Batch& shard : shards) {
    ASSIGN_OR_RETURN(const auto shard_metrics, GetBatchMetrics(shard));
    for (const auto& [name, value] : shard_metrics) per_rank[name].push_back(value);
  }
  std::map<std::string, double> metrics;
  for (const auto& [name, values] : per_rank) {
    double sum = 0;
    for (double value : values) sum += value;
    metrics[name] = sum / static_cast<double>(values.size());
  }
  return metrics;
}

}  // namespace

const std::vector<std::string>& SequenceColumns() {
  static const std::vector<std::string>* const columns = new std::vector<std::string>{
      "input_ids", "attention_mask", "position_ids", "responses", "response_mask"};
  return *columns;
}

absl::StatusOr<double> ComputeOldLogProbs(WorkerGroup& policy, Batch* batch) {
  ASSIGN_OR_RETURN(const Batch sequences, batch->Select(SequenceColumns()));
  ASSIGN_OR_RETURN(const Batch out, policy.CallDpSplit("actor.compute_log_prob", sequences));
  ASSIGN_OR_RETURN(const at::Tensor entropys, out.Tensor("entropys"));
  ASSIGN_OR_RETURN(const at::Tensor mask, batch->Tensor("response_mask"));
  RETURN_IF_ERROR(Merge(out.Select({"old_log_probs"}), batch));
  const at::Tensor weights = mask.to(at::kFloat);
  return ((entropys * weights).sum() / weights.sum().clamp_min(1)).item<double>();
}

absl::Status ComputeRefLogProbs(WorkerGroup& policy, Batch* batch) {
  ASSIGN_OR_RETURN(const Batch sequences, batch->Select(SequenceColumns()));
  return Merge(policy.CallDpSplit("ref.compute_ref_log_prob", sequences), batch);
}

absl::Status ComputeValues(WorkerGroup& critic, Batch* batch) {
  ASSIGN_OR_RETURN(const Batch sequences, batch->Select(SequenceColumns()));
  return Merge(critic.CallDpSplit("critic.compute_values", sequences), batch);
}

absl::StatusOr<std::map<std::string, double>> UpdateCritic(WorkerGroup& critic, const Batch& batch) {
  ASSIGN_OR_RETURN(const Batch update, SelectWith(batch, {"values", "returns"}));
  return TrainOnShards(critic, "critic.update_critic", update);
}

absl::StatusOr<std::map<std::string, double>> UpdateActor(WorkerGroup& policy, const Batch& batch,
                                                          bool use_kl_loss) {
  std::vector<std::string> extra = {"old_log_probs", "advantages"};
  if (use_kl_loss) extra.push_back("ref_log_prob");
  ASSIGN_OR_RETURN(const Batch update, SelectWith(batch, extra));
  return TrainOnShards(policy, "actor.update_actor", update);
}

bool ActorUpdatesAt(int64_t step, int64_t critic_warmup) { return step > critic_warmup; }

}  // namespace rollout::controller
