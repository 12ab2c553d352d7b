// Finding reward functions by name and by data_source, as verl's default scorer routes.
#include "rewards/reward_registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace rollout::rewards {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(RewardRegistry, BuiltinsAreRegisteredByName) {
  const RewardRegistry registry = RewardRegistry::WithBuiltins();
  EXPECT_THAT(registry.Names(), ElementsAre("countdown", "exact_match", "format", "gsm8k", "math", "math_dapo"));
  for (const std::string& name : registry.Names()) {
    absl::StatusOr<std::unique_ptr<RewardFunction>> reward = registry.Create(name);
    ASSERT_TRUE(reward.ok()) << reward.status();
    EXPECT_EQ((*reward)->name(), name);
  }
}

TEST(RewardRegistry, UnknownNameListsTheKnownOnes) {
  const absl::Status status = RewardRegistry::WithBuiltins().Create("gsm9k").status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "unknown reward 'gsm9k'; known: countdown, exact_match, format, gsm8k, math, math_dapo");
}

TEST(RewardRegistry, RoutesDataSourcesLikeVerl) {
  const RewardRegistry registry = RewardRegistry::WithBuiltins();
  EXPECT_EQ(registry.RouteDataSource("openai/gsm8k").value(), "gsm8k");
  EXPECT_EQ(registry.RouteDataSource("lighteval/MATH").value(), "math");
  EXPECT_EQ(registry.RouteDataSource("HuggingFaceH4/MATH-500").value(), "math");
  EXPECT_EQ(registry.RouteDataSource("my_countdown_tasks").value(), "countdown");
  EXPECT_EQ(registry.RouteDataSource("countdown").value(), "countdown");
  EXPECT_EQ(registry.RouteDataSource("exact_match").value(), "exact_match");
  EXPECT_EQ(registry.RouteDataSource("arithmetic").value(), "exact_match");
  const absl::Status unknown = registry.RouteDataSource("my/dataset").status();
  EXPECT_EQ(unknown.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(unknown.message(), HasSubstr("no reward for data_source 'my/dataset'"));
}

TEST(RewardRegistry, RegisteredFunctionsAreFoundAndReplaceable) {
  class Constant final : public RewardFunction {
   public:
    explicit Constant(double value) : value_(value) {}
    const std::string& name() const override { return name_; }
    absl::StatusOr<RewardOutput> Score(const RewardInput&) const override {
      RewardOutput out;
      out.score = value_;
      return out;
    }

   private:
    std::string name_ = "constant";
    double value_;
  };
  RewardRegistry registry;
  registry.Register("constant", [] { return std::make_unique<Constant>(1.0); });
  EXPECT_EQ(registry.Create("constant").value()->Score({}).value().score, 1.0);
  registry.Register("constant", [] { return std::make_unique<Constant>(2.0); });
  EXPECT_EQ(registry.Create("constant").value()->Score({}).value().score, 2.0);
  EXPECT_EQ(registry.RouteDataSource("constant").value(), "constant");
}

}  // namespace
}  // namespace rollout::rewards
