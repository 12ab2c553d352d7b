#include <string>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "rewards/builtin_rewards.h"

namespace rollout::rewards {
namespace {

// Scores `response` against `ground_truth` with `options`; fails the test on an error.
double ScoreGsm8k(const std::string& response, const std::string& ground_truth,
                  const Gsm8kOptions& options = {}) {
  RewardInput input;
  input.data_source = "openai/gsm8k";
  input.response = response;
  input.ground_truth = ground_truth;
  absl::StatusOr<RewardOutput> output = MakeGsm8kReward(options)->Score(input);
  EXPECT_TRUE(output.ok()) << output.status();
  return output.ok() ? output->score : -1;
}

Gsm8kOptions Flexible() {
  Gsm8kOptions options;
  options.method = "flexible";
  return options;
}

Gsm8kOptions WithFormatScore(double format_score) {
  Gsm8kOptions options;
  options.format_score = format_score;
  return options;
}

TEST(Gsm8kReward, NameIsGsm8k) { EXPECT_EQ(MakeGsm8kReward()->name(), "gsm8k"); }

TEST(Gsm8kReward, StrictCorrectAnswerScoresOneWithAcc) {
  RewardInput input;
  input.response = "Natalia sold 48/2 = 24 clips in May.\n#### 72";
  input.ground_truth = "72";
  absl::StatusOr<RewardOutput> output = MakeGsm8kReward()->Score(input);
  ASSERT_TRUE(output.ok()) << output.status();
  EXPECT_EQ(output->score, 1.0);
  EXPECT_EQ(output->extra.at("acc"), 1.0);
}

TEST(Gsm8kReward, StrictWrongAnswerScoresFormatScoreWithZeroAcc) {
  RewardInput input;
  input.response = "#### 71";
  input.ground_truth = "72";
  absl::StatusOr<RewardOutput> output = MakeGsm8kReward(WithFormatScore(0.1))->Score(input);
  ASSERT_TRUE(output.ok()) << output.status();
  EXPECT_DOUBLE_EQ(output->score, 0.1);
  EXPECT_EQ(output->extra.at("acc"), 0.0);
}

TEST(Gsm8kReward, MissingMarkerScoresZeroEvenWithFormatScore) {
  EXPECT_EQ(ScoreGsm8k("The answer is 72.", "72", WithFormatScore(0.1)), 0.0);
  EXPECT_EQ(ScoreGsm8k("", "72", WithFormatScore(0.1)), 0.0);
}

TEST(Gsm8kReward, MarkerNeedsExactlyOneSpaceBeforeTheNumber) {
  EXPECT_EQ(ScoreGsm8k("####72", "72"), 0.0);
  EXPECT_EQ(ScoreGsm8k("###  72", "72"), 0.0);
}

TEST(Gsm8kReward, StrictStripsThousandsSeparators) {
  EXPECT_EQ(ScoreGsm8k("#### 1,234,567", "1234567"), 1.0);
}

TEST(Gsm8kReward, DollarBeforeTheNumberIsNotMatched) {
  // The regex allows only digits, '.', ',' and '-' after "#### ", so "$" blocks it.
  EXPECT_EQ(ScoreGsm8k("#### $18", "18", WithFormatScore(0.1)), 0.0);
}

TEST(Gsm8kReward, DollarAfterTheNumberIsIgnored) {
  EXPECT_EQ(ScoreGsm8k("#### 18$", "18"), 1.0);
}

TEST(Gsm8kReward, NegativeAnswerKeepsItsSign) {
  EXPECT_EQ(ScoreGsm8k("#### -5", "-5"), 1.0);
  EXPECT_EQ(ScoreGsm8k("#### -5", "5"), 0.0);
}

TEST(Gsm8kReward, DecimalsCompareAsWritten) {
  EXPECT_EQ(ScoreGsm8k("#### 2.50", "2.50"), 1.0);
  // verl compares strings, not values.
  EXPECT_EQ(ScoreGsm8k("#### 2.50", "2.5"), 0.0);
}

TEST(Gsm8kReward, TrailingSentencePeriodBecomesPartOfTheAnswer) {
  EXPECT_EQ(ScoreGsm8k("#### 72.", "72", WithFormatScore(0.1)), 0.1);
}

TEST(Gsm8kReward, UnicodeTextAroundTheAnswerIsIgnored) {
  EXPECT_EQ(ScoreGsm8k("Réponse: très bien 🎉 — 答案\n#### 42 ✅ 完了", "42"), 1.0);
}

TEST(Gsm8kReward, LastOfSeveralMarkersWins) {
  EXPECT_EQ(ScoreGsm8k("#### 10\nwait, recheck\n#### 12", "12"), 1.0);
  EXPECT_EQ(ScoreGsm8k("#### 12\nwait, recheck\n#### 10", "12"), 0.0);
}

TEST(Gsm8kReward, StrictMissesAnAnswerBeforeTheLast300Characters) {
  const std::string padding(300, 'x');
  EXPECT_EQ(ScoreGsm8k("#### 72\n" + padding, "72", WithFormatScore(0.1)), 0.0);
  // The same answer inside the window is found.
  EXPECT_EQ(ScoreGsm8k("#### 72" + std::string(293, 'x'), "72"), 1.0);
}

TEST(Gsm8kReward, WindowCountsCharactersNotBytes) {
  // 293 two-byte characters after "#### 72": 300 characters, 593 bytes.
  std::string padding;
  for (int i = 0; i < 293; ++i) padding += "é";
  EXPECT_EQ(ScoreGsm8k("#### 72" + padding, "72"), 1.0);
  EXPECT_EQ(ScoreGsm8k("#### 72" + padding + "é", "72"), 0.0);
}

TEST(Gsm8kReward, FlexibleTakesTheLastNumber) {
  EXPECT_EQ(ScoreGsm8k("First 3 apples, then 5 more: 8 in all.", "8", Flexible()), 1.0);
  EXPECT_EQ(ScoreGsm8k("8 in all, I think 9", "8", Flexible()), 0.0);
}

TEST(Gsm8kReward, FlexibleSkipsALoneDot) {
  EXPECT_EQ(ScoreGsm8k("The total is 8 . ", "8", Flexible()), 1.0);
}

TEST(Gsm8kReward, FlexibleKeepsCommas) {
  // Only the strict method strips separators, as in verl.
  EXPECT_EQ(ScoreGsm8k("It costs 1,200", "1,200", Flexible()), 1.0);
  EXPECT_EQ(ScoreGsm8k("It costs 1,200", "1200", Flexible()), 0.0);
}

TEST(Gsm8kReward, FlexibleWithNoNumberScoresZero) {
  Gsm8kOptions options = Flexible();
  options.format_score = 0.1;
  EXPECT_EQ(ScoreGsm8k("no digits here", "8", options), 0.0);
}

TEST(Gsm8kReward, FlexibleWithOnlyDotsFindsAWrongAnswer) {
  // verl's loop ends on a "." when nothing better exists: an answer, but a wrong one.
  Gsm8kOptions options = Flexible();
  options.format_score = 0.1;
  EXPECT_DOUBLE_EQ(ScoreGsm8k("Hmm. Well.", "8", options), 0.1);
}

TEST(Gsm8kReward, CustomScoreIsReturnedForACorrectAnswer) {
  Gsm8kOptions options;
  options.score = 2.5;
  EXPECT_EQ(ScoreGsm8k("#### 7", "7", options), 2.5);
}

TEST(Gsm8kReward, UnknownMethodIsInvalidArgumentNamingIt) {
  Gsm8kOptions options;
  options.method = "fuzzy";
  RewardInput input;
  input.response = "#### 7";
  input.ground_truth = "7";
  absl::StatusOr<RewardOutput> output = MakeGsm8kReward(options)->Score(input);
  EXPECT_EQ(output.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(output.status().message().find("fuzzy"), std::string::npos);
}

}  // namespace
}  // namespace rollout::rewards
