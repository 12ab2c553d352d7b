#include "controller/ppo_worker_calls.h"

#include <ATen/ATen.h>

#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/batch_metrics.h"
#include "common/status_macros.h"
#include "controller/ppo_step.h"

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

int64_t OnPolicyRowsPerRank(const config::Recipe& recipe, int world) {
  const config::RolloutCorrectionConfig& correction = recipe.algorithm().rollout_correction();
  if (recipe.actor().ppo_epochs() != 1 || recipe.algorithm().use_kl_in_reward() || correction.bypass_mode() ||
      CorrectsForRolloutLogProbs(correction) || recipe.algorithm().use_pf_ppo() || recipe.actor().shuffle() ||
      recipe.actor().calculate_sum_pi_squared() || world < 1) {
    return 0;
  }
  return int64_t{recipe.actor().ppo_mini_batch_size()} * recipe.rollout().n() / world;
}

absl::StatusOr<std::optional<double>> ComputeOldLogProbs(WorkerGroup& policy, int64_t on_policy_rows,
                                                         Batch* batch) {
  const int64_t world = policy.world_size(), rows = batch->size();
  const int64_t shard = rows / world;
  if (rows % world != 0 || on_policy_rows < 0 || on_policy_rows > shard) {
    return absl::InvalidArgumentError(absl::StrCat("old_log_prob: ", rows, " rows over ", world,
                                                   " actor workers with ", on_policy_rows,
                                                   " on-policy rows a worker"));
  }
  ASSIGN_OR_RETURN(const at::Tensor mask, batch->Tensor("response_mask"));
  const at::Tensor unscored = at::full(mask.sizes(), std::nanf(""), at::kFloat);
  const int64_t scored_per_shard = shard - on_policy_rows;
  if (scored_per_shard == 0) {
    RETURN_IF_ERROR(batch->AddTensor("old_log_probs", unscored));
    return std::nullopt;
  }
  ASSIGN_OR_RETURN(const Batch sequences, batch->Select(SequenceColumns()));
  std::vector<Batch> scored_shards;
  for (int64_t rank = 0; rank < world; ++rank) {
    ASSIGN_OR_RETURN(Batch scored, sequences.Slice(rank * shard + on_policy_rows, (rank + 1) * shard));
    scored_shards.push_back(std::move(scored));
  }
  ASSIGN_OR_RETURN(const Batch scored, Batch::Concat(scored_shards));
  ASSIGN_OR_RETURN(const Batch out, policy.CallDpSplit("actor.compute_log_prob", scored));
  // A column of the scored rows' values as the batch's, NaN in the rows not scored.
  auto add_column = [&](const std::string& name) -> absl::Status {
    ASSIGN_OR_RETURN(const at::Tensor values, out.Tensor(name));
    const at::Tensor column = unscored.clone();
    for (int64_t rank = 0; rank < world; ++rank) {
      column.narrow(0, rank * shard + on_policy_rows, scored_per_shard)
          .copy_(values.narrow(0, rank * scored_per_shard, scored_per_shard));
    }
    return batch->AddTensor(name, column);
  };
  RETURN_IF_ERROR(add_column("old_log_probs"));
  if (out.HasTensor("sum_pi_squared")) RETURN_IF_ERROR(add_column("sum_pi_squared"));
  ASSIGN_OR_RETURN(const at::Tensor entropys, out.Tensor("entropys"));
  ASSIGN_OR_RETURN(const at::Tensor scored_mask, scored.Tensor("response_mask"));
  const at::Tensor weights = scored_mask.to(at::kFloat);
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

absl::StatusOr<std::vector<double>> ComputeRewardModelScores(WorkerGroup& reward_model, const Batch& batch,
                                                             const Batch& prompts) {
  ASSIGN_OR_RETURN(Batch input, SelectWith(batch, {}));
  ASSIGN_OR_RETURN(const Batch prompt_columns, prompts.Select({"prompt", "prompt_format"}));
  RETURN_IF_ERROR(input.Union(prompt_columns));
  ASSIGN_OR_RETURN(const Batch reply, reward_model.CallDpSplit("reward_model.compute_rm_score", input));
  ASSIGN_OR_RETURN(const at::Tensor scores, reply.Tensor("rm_scores"));
  if (scores.dim() != 1 || scores.size(0) != input.size()) {
    return absl::InvalidArgumentError(absl::StrCat("reward_model.compute_rm_score returned ", scores.numel(),
                                                   " rm_scores in ", scores.dim(), " dimension(s) for ",
                                                   input.size(), " rows"));
  }
  const at::Tensor as_double = scores.to(at::kDouble).contiguous();
  return std::vector<double>(as_double.data_ptr<double>(), as_double.data_ptr<double>() + as_double.numel());
}

absl::StatusOr<std::map<std::string, double>> UpdateCritic(WorkerGroup& critic, const Batch& batch) {
  ASSIGN_OR_RETURN(const Batch update, SelectWith(batch, {"values", "returns"}));
  return TrainOnShards(critic, "critic.update_critic", update);
}

absl::StatusOr<std::map<std::string, double>> UpdateActor(WorkerGroup& policy, const Batch& batch,
                                                          bool use_kl_loss, int64_t on_policy_rows) {
  std::vector<std::string> extra = {"old_log_probs", "advantages"};
  if (use_kl_loss) extra.push_back("ref_log_prob");
  if (batch.HasTensor("rollout_is_weights")) extra.push_back("rollout_is_weights");
  ASSIGN_OR_RETURN(Batch update, SelectWith(batch, extra));
  if (on_policy_rows > 0) update.SetMeta("on_policy_rows", absl::StrCat(on_policy_rows));
  return TrainOnShards(policy, "actor.update_actor", update);
}

bool ActorUpdatesAt(int64_t step, int64_t critic_warmup) { return step > critic_warmup; }

}  // namespace rollout::controller
