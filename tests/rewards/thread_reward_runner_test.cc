// Scoring batches on threads: results in order, failures scored 0 and counted, a slow
// sample timed out without holding up the batch, and a runner that gives up with a
// clear message once abandoned calls pile up.
#include "rewards/thread_reward_runner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace rollout::rewards {
namespace {

using ::testing::HasSubstr;

// Scores the response's length; "error" fails, "throw" throws, "sleep N" sleeps N ms.
class TestReward final : public RewardFunction {
 public:
  const std::string& name() const override { return name_; }
  absl::StatusOr<RewardOutput> Score(const RewardInput& input) const override {
    if (input.response == "error") return absl::InvalidArgumentError("bad ground truth");
    if (input.response == "throw") throw std::runtime_error("boom");
    int ms = 0;
    if (absl::SimpleAtoi(input.response.substr(input.response.find(' ') + 1), &ms) &&
        input.response.rfind("sleep ", 0) == 0) {
      absl::SleepFor(absl::Milliseconds(ms));
    }
    RewardOutput output;
    output.score = static_cast<double>(input.response.size());
    output.extra["acc"] = 1;
    return output;
  }

 private:
  std::string name_ = "test";
};

std::vector<RewardInput> Samples(const std::vector<std::string>& responses) {
  std::vector<RewardInput> samples;
  for (const std::string& response : responses) {
    samples.emplace_back();
    samples.back().response = response;
  }
  return samples;
}

ThreadRunnerOptions Options(int workers, absl::Duration timeout, int max_stuck = 0) {
  ThreadRunnerOptions options;
  options.num_workers = workers;
  options.timeout = timeout;
  options.max_stuck_calls = max_stuck;
  return options;
}

TEST(ThreadRewardRunner, ScoresEverySampleInOrder) {
  ThreadRewardRunner runner(RewardSelector::Of(std::make_unique<TestReward>()),
                            Options(3, absl::Seconds(10)));
  std::vector<std::string> responses;
  for (int i = 0; i < 200; ++i) responses.push_back(std::string(static_cast<size_t>(i % 17), 'x'));
  const std::vector<ScoredSample> results = runner.Score(Samples(responses)).value();
  ASSERT_EQ(results.size(), responses.size());
  for (size_t i = 0; i < results.size(); ++i) {
    EXPECT_EQ(results[i].outcome, SampleOutcome::kOk);
    EXPECT_EQ(results[i].output.score, static_cast<double>(responses[i].size())) << i;
    EXPECT_EQ(results[i].output.extra.at("acc"), 1.0);
  }
  EXPECT_TRUE(runner.Score({}).value().empty());
}

TEST(ThreadRewardRunner, ErrorsAndExceptionsScoreZeroAndAreCounted) {
  ThreadRewardRunner runner(RewardSelector::Of(std::make_unique<TestReward>()),
                            Options(2, absl::Seconds(10)));
  const std::vector<ScoredSample> results =
      runner.Score(Samples({"ok", "error", "throw", "fine"})).value();
  EXPECT_EQ(results[0].output.score, 2);
  EXPECT_EQ(results[1].outcome, SampleOutcome::kError);
  EXPECT_EQ(results[1].output.score, 0);
  EXPECT_TRUE(results[1].output.extra.empty());
  EXPECT_EQ(results[1].error, "test: bad ground truth");
  EXPECT_EQ(results[2].outcome, SampleOutcome::kError);
  EXPECT_EQ(results[2].error, "threw: boom");
  EXPECT_EQ(results[3].output.score, 4);
  const RewardFailures failures = CountFailures(results);
  EXPECT_EQ(failures.errors, 2);
  EXPECT_EQ(failures.timeouts, 0);
  EXPECT_EQ(failures.first, "sample 1: test: bad ground truth");
}

TEST(ThreadRewardRunner, SlowSampleTimesOutWhileTheOthersFinish) {
  ThreadRewardRunner runner(RewardSelector::Of(std::make_unique<TestReward>()),
                            Options(2, absl::Milliseconds(200)));
  const absl::Time start = absl::Now();
  const std::vector<ScoredSample> results =
      runner.Score(Samples({"sleep 3000", "a", "bb", "ccc", "sleep 10"})).value();
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));  // did not wait for the sleeper
  EXPECT_EQ(results[0].outcome, SampleOutcome::kTimeout);
  EXPECT_THAT(results[0].error, HasSubstr("still running after the 200ms timeout"));
  EXPECT_EQ(results[0].output.score, 0);
  EXPECT_EQ(results[3].output.score, 3);
  EXPECT_EQ(results[4].outcome, SampleOutcome::kOk);
  EXPECT_EQ(CountFailures(results).timeouts, 1);
  // The abandoned thread was replaced: the next batch runs on two threads again.
  EXPECT_EQ(runner.Score(Samples({"x", "yy"})).value()[1].output.score, 2);
}

TEST(ThreadRewardRunner, GivesUpWhenAbandonedCallsPileUp) {
  ThreadRewardRunner runner(RewardSelector::Of(std::make_unique<TestReward>()),
                            Options(2, absl::Milliseconds(50), /*max_stuck=*/1));
  const absl::Status status = runner.Score(Samples({"sleep 2000", "sleep 2000", "a"})).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("2 reward calls are still running past their 50ms timeout"));
  EXPECT_THAT(status.message(), HasSubstr("use reward.isolation: process"));
}

TEST(ThreadRewardRunner, ScoresWithAPluginFromTheSelector) {
  RewardSpec spec;
  spec.plugin = EXAMPLE_PLUGIN_PATH;
  ThreadRewardRunner runner(RewardSelector::Create(spec).value(), Options(2, absl::Seconds(10)));
  std::vector<RewardInput> samples = Samples({"it is 42", "it is 41"});
  for (RewardInput& sample : samples) sample.ground_truth = "42";
  const std::vector<ScoredSample> results = runner.Score(samples).value();
  EXPECT_EQ(results[0].output.score, 1);
  EXPECT_EQ(results[1].output.score, 0);
}

}  // namespace
}  // namespace rollout::rewards
