#include <string>

#include "gtest/gtest.h"
#include "rewards/builtin_rewards.h"

namespace rollout::rewards {
namespace {

double ScoreMath(const std::string& response, const std::string& ground_truth) {
  RewardInput input;
  input.data_source = "lighteval/MATH";
  input.response = response;
  input.ground_truth = ground_truth;
  absl::StatusOr<RewardOutput> output = MakeMathReward()->Score(input);
  EXPECT_TRUE(output.ok()) << output.status();
  return output.ok() ? output->score : -1;
}

TEST(MathReward, NameIsMath) { EXPECT_EQ(MakeMathReward()->name(), "math"); }

TEST(MathReward, CorrectBoxedAnswerScoresOneWithAcc) {
  RewardInput input;
  input.response = "So the answer is $\\boxed{42}$.";
  input.ground_truth = "42";
  absl::StatusOr<RewardOutput> output = MakeMathReward()->Score(input);
  ASSERT_TRUE(output.ok()) << output.status();
  EXPECT_EQ(output->score, 1.0);
  EXPECT_EQ(output->extra.at("acc"), 1.0);
}

TEST(MathReward, WrongBoxedAnswerScoresZeroWithZeroAcc) {
  RewardInput input;
  input.response = "\\boxed{41}";
  input.ground_truth = "42";
  absl::StatusOr<RewardOutput> output = MakeMathReward()->Score(input);
  ASSERT_TRUE(output.ok()) << output.status();
  EXPECT_EQ(output->score, 0.0);
  EXPECT_EQ(output->extra.at("acc"), 0.0);
}

TEST(MathReward, NoBoxScoresZero) {
  EXPECT_EQ(ScoreMath("The answer is 42.", "42"), 0.0);
  EXPECT_EQ(ScoreMath("", "42"), 0.0);
}

TEST(MathReward, UnclosedBoxScoresZero) { EXPECT_EQ(ScoreMath("\\boxed{42", "42"), 0.0); }

TEST(MathReward, NestedBracesStayInsideTheBox) {
  EXPECT_EQ(ScoreMath("$\\boxed{\\frac{1}{2}}$ and more {text}", "\\frac{1}{2}"), 1.0);
  EXPECT_EQ(ScoreMath("\\boxed{\\sqrt{\\frac{3}{4}}}", "\\sqrt{\\frac{3}{4}}"), 1.0);
}

TEST(MathReward, LastOfSeveralBoxesWins) {
  EXPECT_EQ(ScoreMath("\\boxed{3} no, actually \\boxed{5}", "5"), 1.0);
  EXPECT_EQ(ScoreMath("\\boxed{5} no, actually \\boxed{3}", "5"), 0.0);
}

TEST(MathReward, FboxIsReadWhenThereIsNoBoxed) {
  EXPECT_EQ(ScoreMath("\\fbox{7}", "7"), 1.0);
  EXPECT_EQ(ScoreMath("\\fbox{7} then \\boxed{8}", "7"), 0.0);
}

TEST(MathReward, BoxedWithSpaceFormEndsAtDollar) {
  EXPECT_EQ(ScoreMath("so $\\boxed 9$.", "9"), 1.0);
}

TEST(MathReward, BoxedWithoutBraceAfterItIsNoAnswer) {
  EXPECT_EQ(ScoreMath("\\boxed5 {5}", "5"), 0.0);
}

TEST(MathReward, DfracAndTfracEqualFrac) {
  EXPECT_EQ(ScoreMath("\\boxed{\\dfrac{1}{2}}", "\\frac{1}{2}"), 1.0);
  EXPECT_EQ(ScoreMath("\\boxed{\\tfrac{3}{4}}", "\\frac34"), 1.0);
}

TEST(MathReward, ShortFracGetsBraces) {
  EXPECT_EQ(ScoreMath("\\boxed{\\frac12}", "\\frac{1}{2}"), 1.0);
  EXPECT_EQ(ScoreMath("\\boxed{\\frac1{72}}", "\\frac{1}{72}"), 1.0);
}

TEST(MathReward, PointFiveEqualsOneHalfButOtherDecimalsDoNot) {
  // verl rewrites exactly "0.5"; nothing else is evaluated.
  EXPECT_EQ(ScoreMath("\\boxed{0.5}", "\\frac{1}{2}"), 1.0);
  EXPECT_EQ(ScoreMath("\\boxed{.5}", "\\frac{1}{2}"), 1.0);
  EXPECT_EQ(ScoreMath("\\boxed{0.25}", "\\frac{1}{4}"), 0.0);
  EXPECT_EQ(ScoreMath("\\boxed{0.50}", "\\frac{1}{2}"), 0.0);
}

TEST(MathReward, IntegerSlashIntegerEqualsFrac) {
  EXPECT_EQ(ScoreMath("\\boxed{3/4}", "\\frac{3}{4}"), 1.0);
  EXPECT_EQ(ScoreMath("\\boxed{-3/4}", "\\frac{-3}{4}"), 1.0);
  // A non-canonical integer is left alone.
  EXPECT_EQ(ScoreMath("\\boxed{03/4}", "\\frac{3}{4}"), 0.0);
}

TEST(MathReward, NonIntegerSlashFallsBackToRawComparison) {
  // verl's fix_a_slash_b raises on "a/b", so is_equiv compares the raw strings.
  EXPECT_EQ(ScoreMath("\\boxed{a/b}", "a/b"), 1.0);
  EXPECT_EQ(ScoreMath("\\boxed{a / b}", "a/b"), 0.0);
}

TEST(MathReward, SpacesLeftRightAndThinSpacesAreIgnored) {
  EXPECT_EQ(ScoreMath("\\boxed{\\left( 1, 2 \\right)}", "(1,2)"), 1.0);
  EXPECT_EQ(ScoreMath("\\boxed{10\\!000}", "10000"), 1.0);
}

TEST(MathReward, DegreesAreDropped) {
  EXPECT_EQ(ScoreMath("\\boxed{30^\\circ}", "30"), 1.0);
  EXPECT_EQ(ScoreMath("\\boxed{30^{\\circ}}", "30"), 1.0);
}

TEST(MathReward, UnitsAfterTextSpaceAreDropped) {
  EXPECT_EQ(ScoreMath("\\boxed{5\\text{ cm}}", "5"), 1.0);
  // Without the space verl does not treat it as a unit.
  EXPECT_EQ(ScoreMath("\\boxed{5\\text{cm}}", "5"), 0.0);
}

TEST(MathReward, DollarAndPercentSignsAreDropped) {
  EXPECT_EQ(ScoreMath("\\boxed{\\$18.90}", "18.90"), 1.0);
  EXPECT_EQ(ScoreMath("\\boxed{25\\%}", "25"), 1.0);
}

TEST(MathReward, ShortLeftHandSideIsDropped) {
  EXPECT_EQ(ScoreMath("\\boxed{x = 5}", "5"), 1.0);
  EXPECT_EQ(ScoreMath("\\boxed{k=5}", "5"), 1.0);
  EXPECT_EQ(ScoreMath("\\boxed{ab=5}", "5"), 1.0);
  // A left-hand side of three characters or more is kept.
  EXPECT_EQ(ScoreMath("\\boxed{abc=5}", "5"), 0.0);
}

TEST(MathReward, ShortSqrtGetsBraces) {
  EXPECT_EQ(ScoreMath("\\boxed{2\\sqrt3}", "2\\sqrt{3}"), 1.0);
}

TEST(MathReward, TrailingSqrtFallsBackToRawComparison) {
  // verl's fix_sqrt raises on a bare "\sqrt" at the end.
  EXPECT_EQ(ScoreMath("\\boxed{2\\sqrt}", "2\\sqrt"), 1.0);
  EXPECT_EQ(ScoreMath("\\boxed{2 \\sqrt}", "2\\sqrt"), 0.0);
}

TEST(MathReward, UnicodeAroundTheBoxIsIgnored) {
  EXPECT_EQ(ScoreMath("答案是 → $\\boxed{π}$ ✅", "π"), 1.0);
}

}  // namespace
}  // namespace rollout::rewards
