#include <memory>
#include <string>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "rewards/builtin_rewards.h"

namespace rollout::rewards {
namespace {

double ScoreWith(const RewardFunction& reward, const std::string& response,
                 const std::string& ground_truth = "") {
  RewardInput input;
  input.response = response;
  input.ground_truth = ground_truth;
  absl::StatusOr<RewardOutput> output = reward.Score(input);
  EXPECT_TRUE(output.ok()) << output.status();
  return output.ok() ? output->score : -1;
}

std::unique_ptr<RewardFunction> MakeFormatOrDie(const FormatOptions& options) {
  absl::StatusOr<std::unique_ptr<RewardFunction>> reward = MakeFormatReward(options);
  EXPECT_TRUE(reward.ok()) << reward.status();
  return reward.ok() ? std::move(*reward) : nullptr;
}

TEST(FormatReward, NameIsFormat) {
  EXPECT_EQ(MakeFormatOrDie(FormatOptions())->name(), "format");
}

TEST(FormatReward, DefaultPatternAcceptsThinkThenAnswerAcrossLines) {
  auto reward = MakeFormatOrDie(FormatOptions());
  ASSERT_NE(reward, nullptr);
  EXPECT_EQ(ScoreWith(*reward, "<think>step 1\nstep 2\n</think>\n\n<answer>\n42\n</answer>"), 1.0);
}

TEST(FormatReward, DefaultPatternRejectsMissingOrMisorderedTags) {
  auto reward = MakeFormatOrDie(FormatOptions());
  ASSERT_NE(reward, nullptr);
  EXPECT_EQ(ScoreWith(*reward, "<answer>42</answer>"), 0.0);
  EXPECT_EQ(ScoreWith(*reward, "<answer>42</answer><think>x</think>"), 0.0);
  EXPECT_EQ(ScoreWith(*reward, ""), 0.0);
}

TEST(FormatReward, MatchMustCoverTheWholeResponse) {
  auto reward = MakeFormatOrDie(FormatOptions());
  ASSERT_NE(reward, nullptr);
  EXPECT_EQ(ScoreWith(*reward, "Sure! <think>x</think><answer>1</answer>"), 0.0);
  EXPECT_EQ(ScoreWith(*reward, "<think>x</think><answer>1</answer> trailing"), 0.0);
}

TEST(FormatReward, DotDoesNotCrossLinesWithoutDotAllFlag) {
  FormatOptions options;
  options.pattern = "<think>.*</think>";
  auto reward = MakeFormatOrDie(options);
  ASSERT_NE(reward, nullptr);
  EXPECT_EQ(ScoreWith(*reward, "<think>one line</think>"), 1.0);
  EXPECT_EQ(ScoreWith(*reward, "<think>two\nlines</think>"), 0.0);
}

TEST(FormatReward, CustomScoreIsReturnedOnMatch) {
  FormatOptions options;
  options.pattern = "[0-9]+";
  options.score = 0.25;
  auto reward = MakeFormatOrDie(options);
  ASSERT_NE(reward, nullptr);
  EXPECT_EQ(ScoreWith(*reward, "123"), 0.25);
  EXPECT_EQ(ScoreWith(*reward, "12a"), 0.0);
}

TEST(FormatReward, InvalidPatternIsInvalidArgumentNamingThePattern) {
  FormatOptions options;
  options.pattern = "<answer>[z-a]</answer>";
  absl::StatusOr<std::unique_ptr<RewardFunction>> reward = MakeFormatReward(options);
  ASSERT_FALSE(reward.ok());
  EXPECT_EQ(reward.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(reward.status().message().find("'<answer>[z-a]</answer>'"), std::string::npos)
      << reward.status();
}

TEST(ExactMatchReward, NameIsExactMatch) { EXPECT_EQ(MakeExactMatchReward()->name(), "exact_match"); }

TEST(ExactMatchReward, EqualTextScoresOne) {
  EXPECT_EQ(ScoreWith(*MakeExactMatchReward(), "Paris", "Paris"), 1.0);
}

TEST(ExactMatchReward, SurroundingWhitespaceIsTrimmedOnBothSides) {
  EXPECT_EQ(ScoreWith(*MakeExactMatchReward(), "  Paris\n", "\tParis "), 1.0);
}

TEST(ExactMatchReward, InnerWhitespaceAndCaseMatter) {
  auto reward = MakeExactMatchReward();
  EXPECT_EQ(ScoreWith(*reward, "New  York", "New York"), 0.0);
  EXPECT_EQ(ScoreWith(*reward, "paris", "Paris"), 0.0);
}

TEST(ExactMatchReward, EmptyMatchesOnlyBlank) {
  auto reward = MakeExactMatchReward();
  EXPECT_EQ(ScoreWith(*reward, " \n", ""), 1.0);
  EXPECT_EQ(ScoreWith(*reward, "", "x"), 0.0);
}

TEST(ExactMatchReward, UnicodeComparesByteForByte) {
  EXPECT_EQ(ScoreWith(*MakeExactMatchReward(), " 東京 ", "東京"), 1.0);
}

}  // namespace
}  // namespace rollout::rewards
