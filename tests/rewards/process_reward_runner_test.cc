// reward.isolation: process, through real helper processes of the rollout binary: a
// plug-in that segfaults, aborts, loops forever or allocates without bound costs only
// its sample (score 0, counted), the batch finishes, and the next batch runs on fresh
// helpers.
#include "rewards/process_reward_runner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/subprocess.h"

namespace rollout::rewards {
namespace {

using ::testing::HasSubstr;

ProcessRunnerOptions Options(const std::string& plugin, int workers, absl::Duration timeout) {
  ProcessRunnerOptions options;
  options.spec.plugin = plugin;
  options.rollout_binary = ROLLOUT_BINARY_PATH;
  options.num_workers = workers;
  options.timeout = timeout;
  options.memory_limit_mb = 64;  // small, so a runaway allocation hits it fast
  return options;
}

std::vector<RewardInput> Samples(const std::vector<std::string>& responses) {
  std::vector<RewardInput> samples;
  for (const std::string& response : responses) {
    samples.emplace_back();
    samples.back().response = response;
    samples.back().ground_truth = "42";
  }
  return samples;
}

TEST(ProcessRewardRunner, ScoresLikeInProcess) {
  auto runner = ProcessRewardRunner::Create(Options(EXAMPLE_PLUGIN_PATH, 2, absl::Seconds(30))).value();
  std::vector<std::string> responses;
  for (int i = 0; i < 50; ++i) responses.push_back(i % 3 == 0 ? "x 42" : "x 41");
  const std::vector<ScoredSample> results = runner->Score(Samples(responses)).value();
  ASSERT_EQ(results.size(), responses.size());
  for (size_t i = 0; i < results.size(); ++i) {
    EXPECT_EQ(results[i].outcome, SampleOutcome::kOk) << results[i].error;
    EXPECT_EQ(results[i].output.score, i % 3 == 0 ? 1.0 : 0.0) << i;
    EXPECT_EQ(results[i].output.extra.at("response_chars"), 4.0);
  }
}

TEST(ProcessRewardRunner, CrashesHangsAndRunawayAllocationsCostOnlyTheirSample) {
  auto runner =
      ProcessRewardRunner::Create(Options(MISBEHAVING_PLUGIN_PATH, 2, absl::Seconds(5))).value();
  const std::vector<ScoredSample> results =
      runner->Score(Samples({"42", "segfault", "42", "abort", "loop", "allocate", "42"})).value();
  ASSERT_EQ(results.size(), 7u);
  for (size_t good : {0, 2, 6}) {
    EXPECT_EQ(results[good].outcome, SampleOutcome::kOk) << results[good].error;
    EXPECT_EQ(results[good].output.score, 1.0);
  }
  EXPECT_EQ(results[1].outcome, SampleOutcome::kError);
  EXPECT_THAT(results[1].error, HasSubstr("the reward helper was killed by signal 11 (SIGSEGV)"));
  EXPECT_EQ(results[3].outcome, SampleOutcome::kError);
  EXPECT_THAT(results[3].error, HasSubstr("(SIGABRT)"));
  EXPECT_EQ(results[4].outcome, SampleOutcome::kTimeout);
  EXPECT_THAT(results[4].error, HasSubstr("still running after the 5s timeout"));
  // The memory limit makes the allocation fail inside the helper, which then crashes.
  EXPECT_EQ(results[5].outcome, SampleOutcome::kError);
  EXPECT_THAT(results[5].error, HasSubstr("the reward helper was killed by signal"));
  for (size_t bad : {1, 3, 4, 5}) EXPECT_EQ(results[bad].output.score, 0.0);
  const RewardFailures failures = CountFailures(results);
  EXPECT_EQ(failures.errors, 3);
  EXPECT_EQ(failures.timeouts, 1);

  // The replacements score the next batch.
  const std::vector<ScoredSample> next = runner->Score(Samples({"42", "7", "42"})).value();
  EXPECT_EQ(next[0].output.score, 1.0);
  EXPECT_EQ(next[1].output.score, 0.0);
  EXPECT_EQ(CountFailures(next).errors, 0);
}

TEST(ProcessRewardRunner, HelpersDieWithTheRunner) {
  testing::ReapZombies();
  auto runner = ProcessRewardRunner::Create(Options(EXAMPLE_PLUGIN_PATH, 2, absl::Seconds(30))).value();
  ASSERT_TRUE(runner->Score(Samples({"42"})).ok());
  const std::vector<pid_t> helpers = testing::ChildPids();
  ASSERT_EQ(helpers.size(), 2u);
  runner.reset();
  for (pid_t pid : helpers) EXPECT_FALSE(testing::ProcessRunning(pid)) << pid;
}

TEST(ProcessRewardRunner, PluginThatDoesNotLoadFailsCreate) {
  const absl::Status status =
      ProcessRewardRunner::Create(Options("/nonexistent/libnope.so", 1, absl::Seconds(5))).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("reward helper: cannot load reward plug-in /nonexistent/libnope.so"));
}

TEST(ProcessRewardRunner, MissingBinaryIsAClearError) {
  ProcessRunnerOptions options = Options(EXAMPLE_PLUGIN_PATH, 1, absl::Seconds(5));
  options.rollout_binary = "/nonexistent/rollout";
  EXPECT_THAT(ProcessRewardRunner::Create(options).status().message(),
              HasSubstr("'/nonexistent/rollout' is not an executable file"));
}

}  // namespace
}  // namespace rollout::rewards
