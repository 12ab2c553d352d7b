#include "controller/group_sampling.h"

#include <ATen/ATen.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "algorithms/dapo.h"
#include "common/status_macros.h"
#include "controller/ppo_step.h"

namespace rollout::controller {

absl::StatusOr<std::vector<double>> FilterMetricValues(const std::string& metric,
                                                       const std::vector<rewards::ScoredSample>& scored,
                                                       const std::vector<double>& shaped) {
  if (metric == "seq_reward" || metric == "seq_final_reward") return shaped;
  std::vector<double> values;
  values.reserve(scored.size());
  for (const rewards::ScoredSample& sample : scored) {
    if (metric == "score") {
      values.push_back(sample.output.score);
      continue;
    }
    const auto it = sample.output.extra.find(metric);
    if (it == sample.output.extra.end()) {
      std::vector<std::string> reported = {"score", "seq_reward", "seq_final_reward"};
      for (const auto& [name, value] : sample.output.extra) reported.push_back(name);
      return absl::InvalidArgumentError(absl::StrCat(
          "algorithm.filter_groups.metric is '", metric, "', which the reward does not report",
          sample.outcome == rewards::SampleOutcome::kOk ? "" : " for a sample it failed to score",
          "; the metrics at hand: ", absl::StrJoin(reported, ", ")));
    }
    values.push_back(it->second);
  }
  return values;
}

absl::Status KeptGroups::Add(const Batch& generated, const std::vector<double>& metric) {
  ASSIGN_OR_RETURN(const std::vector<std::string> uids, generated.Strings("uid"));
  if (metric.size() != uids.size()) {
    return absl::InvalidArgumentError(absl::StrCat(metric.size(), " filter metric values for ", uids.size(), " rows"));
  }
  ASSIGN_OR_RETURN(const algorithms::GroupFilter filter,
                   algorithms::FilterGroups(at::tensor(metric, at::kDouble), GroupIds(uids)));
  std::vector<int64_t> rows;
  const at::Tensor keep = filter.keep.to(at::kBool).contiguous();
  const bool* kept = keep.data_ptr<bool>();
  for (int64_t row = 0; row < keep.numel(); ++row) {
    if (kept[row]) rows.push_back(row);
  }
  if (rows.empty()) return absl::OkStatus();
  ASSIGN_OR_RETURN(Batch kept_rows, generated.Reorder(rows));
  kept_.push_back(std::move(kept_rows));
  kept_prompts_ += filter.num_kept_groups;
  return absl::OkStatus();
}

absl::StatusOr<Batch> KeptGroups::Take() const {
  if (!full()) {
    return absl::FailedPreconditionError(
        absl::StrCat(kept_prompts_, " prompt groups kept of the ", prompts_, " a step takes"));
  }
  ASSIGN_OR_RETURN(const Batch all, Batch::Concat(kept_));
  return all.Slice(0, prompts_ * rows_per_prompt_);
}

}  // namespace rollout::controller
