// Dynamic sampling's bookkeeping (controller/group_sampling.h): the filter metric per
// row, and the groups kept across generation rounds until a step's prompts are there.
#include "controller/group_sampling.h"

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace rollout::controller {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

rewards::ScoredSample Sample(double score, double acc) {
  rewards::ScoredSample sample;
  sample.output.score = score;
  sample.output.extra["acc"] = acc;
  return sample;
}

TEST(FilterMetricValues, AccScoreAndTheShapedScore) {
  const std::vector<rewards::ScoredSample> scored = {Sample(1, 1), Sample(-1, 0)};
  const std::vector<double> shaped = {0.5, -1.5};
  EXPECT_THAT(FilterMetricValues("acc", scored, shaped).value(), ElementsAre(1, 0));
  EXPECT_THAT(FilterMetricValues("score", scored, shaped).value(), ElementsAre(1, -1));
  EXPECT_THAT(FilterMetricValues("seq_reward", scored, shaped).value(), ElementsAre(0.5, -1.5));
  EXPECT_THAT(FilterMetricValues("seq_final_reward", scored, shaped).value(), ElementsAre(0.5, -1.5));
  const absl::Status unknown = FilterMetricValues("pass_rate", scored, shaped).status();
  EXPECT_EQ(unknown.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(unknown.message()),
              HasSubstr("algorithm.filter_groups.metric is 'pass_rate', which the reward does not report; "
                        "the metrics at hand: score, seq_reward, seq_final_reward, acc"));
}

// Rows of prompt groups: uid per row, and a "row" tensor numbering them.
Batch Round(const std::vector<std::string>& uids, int64_t first_row) {
  Batch batch;
  EXPECT_TRUE(batch.AddStrings("uid", uids).ok());
  EXPECT_TRUE(batch.AddTensor("row", at::arange(first_row, first_row + static_cast<int64_t>(uids.size()))).ok());
  return batch;
}

std::vector<int64_t> Rows(const Batch& batch) {
  const at::Tensor rows = batch.Tensor("row").value().contiguous();
  return std::vector<int64_t>(rows.data_ptr<int64_t>(), rows.data_ptr<int64_t>() + rows.numel());
}

TEST(KeptGroups, KeepsGroupsThatDifferAcrossRoundsAndTakesTheFirstOnes) {
  KeptGroups kept(/*prompts=*/3, /*rows_per_prompt=*/2);
  // Round 1: a differs, b agrees (dropped), c differs.
  ASSERT_TRUE(kept.Add(Round({"a", "a", "b", "b", "c", "c"}, 0), {1, 0, 1, 1, 0, 1}).ok());
  EXPECT_EQ(kept.kept_prompts(), 2);
  EXPECT_FALSE(kept.full());
  EXPECT_EQ(kept.Take().status().code(), absl::StatusCode::kFailedPrecondition);
  // Round 2: d agrees, e and f differ; one group more than the step takes.
  ASSERT_TRUE(kept.Add(Round({"d", "d", "e", "e", "f", "f"}, 6), {0, 0, 0, 1, 1, 0}).ok());
  EXPECT_EQ(kept.kept_prompts(), 4);
  ASSERT_TRUE(kept.full());
  const Batch batch = kept.Take().value();
  EXPECT_THAT(Rows(batch), ElementsAre(0, 1, 4, 5, 8, 9));  // a, c, e; f dropped
  EXPECT_THAT(batch.Strings("uid").value(), ElementsAre("a", "a", "c", "c", "e", "e"));
}

TEST(KeptGroups, ARoundWithNothingKeptAndAMismatchedMetric) {
  KeptGroups kept(1, 2);
  ASSERT_TRUE(kept.Add(Round({"a", "a"}, 0), {0.5, 0.5}).ok());
  EXPECT_EQ(kept.kept_prompts(), 0);
  EXPECT_THAT(std::string(kept.Add(Round({"b", "b"}, 2), {1}).message()),
              HasSubstr("1 filter metric values for 2 rows"));
}

}  // namespace
}  // namespace rollout::controller
