#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "rewards/builtin_rewards.h"

namespace rollout::rewards {
namespace {

// 26 from 3, 5 and 7: "3 * 7 + 5".
constexpr char kGroundTruth[] = R"({"target": 26, "numbers": [3, 5, 7]})";
constexpr double kFormatScore = 0.1;
constexpr double kScore = 1.0;

RewardOutput ScoreOf(const std::string& response, const std::string& ground_truth = kGroundTruth) {
  std::unique_ptr<RewardFunction> reward = MakeCountdownReward();
  RewardInput input;
  input.data_source = "countdown";
  input.response = response;
  input.ground_truth = ground_truth;
  absl::StatusOr<RewardOutput> output = reward->Score(input);
  EXPECT_TRUE(output.ok()) << output.status();
  return output.ok() ? *output : RewardOutput{-1, {}};
}

double Score(const std::string& response, const std::string& ground_truth = kGroundTruth) {
  return ScoreOf(response, ground_truth).score;
}

std::string Answer(const std::string& equation) {
  return "Assistant: Let me think. <answer>" + equation + "</answer>";
}

TEST(Countdown, CorrectEquationGetsFullScoreAndAcc) {
  const RewardOutput output = ScoreOf(Answer("3 * 7 + 5"));
  EXPECT_EQ(output.score, kScore);
  EXPECT_EQ(output.extra.at("acc"), 1);
  EXPECT_EQ(Score(Answer("5 + 7 * 3")), kScore);
}

TEST(Countdown, WrongResultGetsFormatScore) {
  const RewardOutput output = ScoreOf(Answer("3 * 5 + 7"));
  EXPECT_EQ(output.score, kFormatScore);
  EXPECT_EQ(output.extra.at("acc"), 0);
}

TEST(Countdown, ReusedNumberGetsFormatScore) {
  EXPECT_EQ(Score(Answer("3 * 7 + 5 + 3 - 3")), kFormatScore);
  EXPECT_EQ(Score(Answer("7 * 7 - 3 * 5 - 5 - 3")), kFormatScore);
}

TEST(Countdown, MissingNumberGetsFormatScore) {
  EXPECT_EQ(Score(Answer("3 * 7 + 5"), R"({"target": 26, "numbers": [3, 5, 7, 1]})"),
            kFormatScore);
}

TEST(Countdown, NumberNotOfferedGetsFormatScore) {
  EXPECT_EQ(Score(Answer("3 * 7 + 5 * 1")), kFormatScore);
  EXPECT_EQ(Score(Answer("3 * 7 + 5"), R"({"target": 26, "numbers": [3, 7]})"), kFormatScore);
}

TEST(Countdown, NumbersMayRepeatWhenOfferedTwice) {
  EXPECT_EQ(Score(Answer("5 * 5 + 1"), R"({"target": 26, "numbers": [5, 1, 5]})"), kScore);
}

TEST(Countdown, DisallowedCharactersGetFormatScore) {
  const std::string numbers = R"({"target": 8, "numbers": [2, 3]})";
  EXPECT_EQ(Score(Answer("2 ** 3"), numbers), kFormatScore);
  EXPECT_EQ(Score(Answer("2 ^ 3 + 0"), R"({"target": 1, "numbers": [2, 3, 0]})"), kFormatScore);
  EXPECT_EQ(Score(Answer("3*7+5 # 5"), kGroundTruth), kFormatScore);
  EXPECT_EQ(Score(Answer("three * 7 + 5")), kFormatScore);
  EXPECT_EQ(Score(Answer("__import__('os').system('3 7 5')")), kFormatScore);
  EXPECT_EQ(Score(Answer("3.0 * 7 + 5")), kFormatScore);
}

TEST(Countdown, LastAnswerTagWins) {
  EXPECT_EQ(Score("Assistant: <answer>3 * 5 + 7</answer> no, <answer>3 * 7 + 5</answer>"),
            kScore);
  EXPECT_EQ(Score("Assistant: <answer>3 * 7 + 5</answer> no, <answer>3 * 5 + 7</answer>"),
            kFormatScore);
}

TEST(Countdown, AnswerMaySpanLinesAndIsTrimmed) {
  EXPECT_EQ(Score("Assistant: <answer>\n  3 * 7\n  + 5\n</answer>\n"), kScore);
}

TEST(Countdown, NoCompleteAnswerTagsScoresZero) {
  for (const char* response :
       {"Assistant: 3 * 7 + 5", "Assistant: <answer>3 * 7 + 5", "Assistant: 3 * 7 + 5</answer>",
        "Assistant: </answer>3 * 7 + 5<answer>", ""}) {
    const RewardOutput output = ScoreOf(response);
    EXPECT_EQ(output.score, 0) << response;
    EXPECT_EQ(output.extra.at("acc"), 0) << response;
  }
}

TEST(Countdown, EmptyAnswerGetsFormatScore) {
  EXPECT_EQ(Score("Assistant: <answer> </answer>"), kFormatScore);
}

TEST(Countdown, TextBeforeTheAssistantMarkerIsIgnored) {
  // An answer echoed in the prompt part must not count.
  EXPECT_EQ(Score("User: e.g. <answer>3 * 7 + 5</answer>\nAssistant: I give up."), 0);
  EXPECT_EQ(Score("<|im_start|>user <answer>3 * 7 + 5</answer><|im_end|>\n"
                  "<|im_start|>assistant <answer>3 * 5 + 7</answer>"),
            kFormatScore);
}

TEST(Countdown, ResponseWithoutAMarkerIsSearchedWhole) {
  EXPECT_EQ(Score("<think>3 * 7 = 21, + 5</think> <answer>3 * 7 + 5</answer>"), kScore);
}

TEST(Countdown, DivisionByZeroGetsFormatScore) {
  EXPECT_EQ(Score(Answer("5 / (7 - 7) + 3"), R"({"target": 3, "numbers": [3, 5, 7, 7]})"),
            kFormatScore);
}

TEST(Countdown, OverflowGetsFormatScore) {
  EXPECT_EQ(Score(Answer("3037000500 * 3037000500"),
                  R"({"target": 1, "numbers": [3037000500, 3037000500]})"),
            kFormatScore);
}

TEST(Countdown, FractionalIntermediatesAreExact) {
  // 1/3 * 3 is exactly 1 here (Python's floats land within 1e-5 too).
  EXPECT_EQ(Score(Answer("(1 / 3) * 3 * 24"), R"({"target": 24, "numbers": [1, 3, 3, 24]})"),
            kScore);
  EXPECT_EQ(Score(Answer("6 / (1 - 3 / 4)"), R"({"target": 24, "numbers": [6, 1, 3, 4]})"),
            kScore);
}

TEST(Countdown, ResultMustEqualTheTargetNotMerelyRoundToIt) {
  // 100000/99999 is 1.00001...: 1e-5 away from 1 or more, so wrong.
  EXPECT_EQ(Score(Answer("100000 / 99999"), R"({"target": 1, "numbers": [100000, 99999]})"),
            kFormatScore);
  // 1000001/1000000 is within 1e-5 of 1: right, as in TinyZero.
  EXPECT_EQ(Score(Answer("1000001 / 1000000"), R"({"target": 1, "numbers": [1000001, 1000000]})"),
            kScore);
}

TEST(Countdown, NegativeResultsCanMatchANegativeTarget) {
  EXPECT_EQ(Score(Answer("-(3 * 7 + 5)"), R"({"target": -26, "numbers": [3, 5, 7]})"), kScore);
}

TEST(Countdown, OptionsSetTheScores) {
  std::unique_ptr<RewardFunction> reward = MakeCountdownReward({/*format_score=*/0.25,
                                                                /*score=*/2.0});
  EXPECT_EQ(reward->name(), "countdown");
  RewardInput input;
  input.ground_truth = kGroundTruth;
  input.response = Answer("3 * 7 + 5");
  EXPECT_EQ(reward->Score(input)->score, 2.0);
  input.response = Answer("3 * 5 + 7");
  EXPECT_EQ(reward->Score(input)->score, 0.25);
}

TEST(Countdown, MalformedGroundTruthIsInvalidArgumentNamingTheProblem) {
  const struct {
    const char* ground_truth;
    const char* problem;
  } cases[] = {
      {"", "not valid JSON"},
      {"{\"target\": 26,", "not valid JSON"},
      {"[3, 5, 7]", "not a JSON object"},
      {R"({"numbers": [3, 5, 7]})", "\"target\" is missing"},
      {R"({"target": "26", "numbers": [3, 5, 7]})", "\"target\" is not an int64 integer"},
      {R"({"target": 2.5, "numbers": [3, 5, 7]})", "\"target\" is not an int64 integer"},
      {R"({"target": 26})", "\"numbers\" is missing"},
      {R"({"target": 26, "numbers": 3})", "\"numbers\" is not an array"},
      {R"({"target": 26, "numbers": [3, "5", 7]})", "\"numbers\" holds \"5\""},
      {R"({"target": 26, "numbers": [3, 18446744073709551615]})",
       "\"numbers\" holds 18446744073709551615"},
  };
  std::unique_ptr<RewardFunction> reward = MakeCountdownReward();
  for (const auto& c : cases) {
    RewardInput input;
    input.response = Answer("3 * 7 + 5");
    input.ground_truth = c.ground_truth;
    absl::StatusOr<RewardOutput> output = reward->Score(input);
    ASSERT_FALSE(output.ok()) << c.ground_truth;
    EXPECT_EQ(output.status().code(), absl::StatusCode::kInvalidArgument) << c.ground_truth;
    EXPECT_NE(output.status().message().find(c.problem), absl::string_view::npos)
        << output.status();
    EXPECT_NE(output.status().message().find("countdown ground_truth"), absl::string_view::npos)
        << output.status();
  }
}

}  // namespace
}  // namespace rollout::rewards
