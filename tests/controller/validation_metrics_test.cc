#include "controller/validation_metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace rollout::controller {
namespace {

using ::testing::Pair;
using ::testing::UnorderedElementsAre;

TEST(ValidationMetrics, MeanBestAndMajorityOfEachPromptAveragedOverPrompts) {
  std::map<std::string, std::vector<PromptSamples>> by_source;
  // Prompt 1: "7" twice (score 1), "8" once: mean 2/3, best 1, majority 1.
  by_source["gsm8k"].push_back({{1, 0, 1}, {}, {"7", "8", "7"}});
  // Prompt 2: every response different, so the first is the majority (score 0).
  by_source["gsm8k"].push_back({{0, 1, 1}, {}, {"a", "b", "c"}});
  const auto metrics = ValidationMetrics(by_source, 3);
  EXPECT_THAT(metrics, UnorderedElementsAre(Pair("val-core/gsm8k/reward/mean@3", 2.0 / 3),
                                            Pair("val-core/gsm8k/reward/best@3/mean", 1.0),
                                            Pair("val-core/gsm8k/reward/maj@3/mean", 0.5)));
}

TEST(ValidationMetrics, AccuracyIsTheCoreVariableWhenTheRewardReportsIt) {
  std::map<std::string, std::vector<PromptSamples>> by_source;
  by_source["math_dapo"].push_back({{-1}, {0}, {"x"}});
  by_source["arith"].push_back({{0.5}, {}, {"y"}});
  const auto metrics = ValidationMetrics(by_source, 1);
  EXPECT_THAT(metrics, UnorderedElementsAre(Pair("val-core/math_dapo/acc/mean@1", 0.0),
                                            Pair("val-aux/math_dapo/reward/mean@1", -1.0),
                                            Pair("val-core/arith/reward/mean@1", 0.5)));
}

}  // namespace
}  // namespace rollout::controller
