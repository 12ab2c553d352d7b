// verl's math_dapo reward, case by case: each expected score is what verl's own
// math_dapo.py (Python's re) gives for the same response and ground truth, computed
// once and written here; the comment is verl's normalised prediction.
#include <string>

#include "gtest/gtest.h"
#include "rewards/builtin_rewards.h"
#include "rewards/reward_registry.h"

namespace rollout::rewards {
namespace {

RewardOutput ScoreDapo(const std::string& response, const std::string& ground_truth) {
  RewardInput input;
  input.data_source = "math_dapo";
  input.response = response;
  input.ground_truth = ground_truth;
  absl::StatusOr<RewardOutput> output = MakeMathDapoReward()->Score(input);
  EXPECT_TRUE(output.ok()) << output.status();
  return output.ok() ? *output : RewardOutput{};
}

TEST(MathDapoReward, ScoresAsVerlDoes) {
  struct Case {
    std::string response, ground_truth;
    int score;
  };
  const Case cases[] = {
      {"So the total is 34.\nAnswer: 34", "34", 1},  // '34'
      {"answer : 34", "34", 1},  // '34'
      {"ANSWER:\n\n 34 apples", "34", -1},  // '34apples'
      {"Answer: $\\frac{1}{2}$", "\\frac{1}{2}", 1},  // '\\frac{1}{2}'
      {"Answer: \\frac12", "\\frac{1}{2}", 1},  // '\\frac{1}{2}'
      {"Answer: \\dfrac{1}{2}", "\\frac{1}{2}", -1},  // '\\dfrac{1}{2}'
      {"Answer: \\sqrt3", "\\sqrt{3}", 1},  // '\\sqrt{3}'
      {"Answer: x = 5", "5", 1},  // '5'
      {"Answer: 1,000", "1000", 1},  // '1000'
      {"Answer: 1,000,000 dollars", "1000000", 1},  // '1000000'
      {"Answer: 10 degrees", "10", 1},  // '10'
      {"Answer: 90^\\circ", "90", 1},  // '90'
      {"Answer: \\boxed{42}", "42", 1},  // '42'
      {"Answer: \\text{(B)}", "(B)", 1},  // '(B)'
      {"Answer: 5 Answer: 6", "6", -1},  // '5Answer:6'
      {"Answer: 5\nAnswer: 6", "6", 1},  // '6'
      {"Answer: 5\nno more", "5", 1},  // '5'
      {"I think the answer is 5", "5", -1},  // '[INVALID]'
      {"Answer:", "[INVALID]", 1},  // '[INVALID]'
      {"Answer:   ", "", 1},  // ''
      {"Answer: 7", "8", -1},  // '7'
      {"Answer:\xc2\xa0""12", "12", 1},  // '12'
      {"Answer: 12\xe3\x80\x80", "12", 1},  // '12'
      {"Answer: \xef\xbc\x92\xef\xbc\x93", "\xef\xbc\x92\xef\xbc\x93", 1},  // '２３'
      {"Answer: an apple", "apple", 1},  // 'apple'
      {"Answer: \\$5.00", "5.00", 1},  // '5.00'
      {"Answer: 3, 4", "3,4", 1},  // '34'
      {"Answer: $3$ and $4$", "3", 1},  // '3'
      {"Answer: \\overline{AB}", "AB", 1},  // 'AB'
      {"Answer: \\textbf{yes}", "yes", 1},  // 'yes'
      {"Answer: \\boxed{\\frac{2}{3}} units", "\\frac{2}{3}", 1},  // '\\frac{2}{3}'
      {"Answer: frac\xc3\xa9x", "frac{\xc3\xa9}{x}", 1},  // 'frac{é}{x}'
      {"Ans\xc5\xbf""er... no. AN\xc5\xbfWER: 9", "9", 1},  // '9'
      {"Answer: 1 \\text{ m}", "1", 1},  // '1'
      {"Answer: 5 \\mathrm{th}", "5", 1},  // '5'
  };
  for (const Case& c : cases) {
    const RewardOutput output = ScoreDapo(c.response, c.ground_truth);
    EXPECT_EQ(output.score, c.score) << "response: " << c.response << "\nground truth: " << c.ground_truth;
    EXPECT_EQ(output.extra.at("acc"), c.score == 1 ? 1 : 0);
  }
}

// The answer is looked for in the last 300 characters — code points, not bytes.
TEST(MathDapoReward, LooksOnlyAtTheLast300Characters) {
  std::string accented;
  for (int i = 0; i < 290; ++i) accented += "\xc3\xa9";  // 'é', two bytes
  EXPECT_EQ(ScoreDapo("Answer: 5\n" + accented, "5").score, 1);           // 300 characters
  EXPECT_EQ(ScoreDapo("Answer: 5\n" + accented + "\xc3\xa9", "5").score, -1);  // 301: 'A' cut off
  EXPECT_EQ(ScoreDapo("Answer: 5\n" + std::string(300, 'x'), "5").score, -1);
}

TEST(MathDapoReward, VerlRoutesDapoAndAimeDataSourcesToIt) {
  const RewardRegistry registry = RewardRegistry::WithBuiltins();
  EXPECT_EQ(registry.RouteDataSource("math_dapo").value(), "math_dapo");
  EXPECT_EQ(registry.RouteDataSource("aime-2024").value(), "math_dapo");
  EXPECT_EQ(registry.RouteDataSource("aime25").value(), "math_dapo");
  EXPECT_EQ(MakeMathDapoReward()->name(), "math_dapo");
}

}  // namespace
}  // namespace rollout::rewards
