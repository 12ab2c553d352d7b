// `rollout reward` through the real binary: routing, named rewards, line errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace rollout::rewards {
namespace {

using ::rollout::testing::CommandResult;
using ::rollout::testing::RunCommand;
using ::rollout::testing::TempDir;
using ::testing::HasSubstr;

// `rollout reward ARGS < stdin_text`, through /bin/sh for the redirection.
CommandResult RunReward(const std::vector<std::string>& args, const std::string& stdin_text) {
  TempDir dir("cli_reward");
  const std::string input = dir.Write("samples.jsonl", stdin_text);
  std::vector<std::string> argv = {"/bin/sh", "-c",
                                   "INPUT='" + input + "'; exec \"$0\" reward \"$@\" < \"$INPUT\"",
                                   ROLLOUT_BINARY_PATH};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv);
}

// The output lines of a `rollout reward ARGS < stdin_text` that must succeed; none
// (and a test failure) when it does not.
std::vector<nlohmann::json> ScoredLines(const std::vector<std::string>& args, const std::string& stdin_text) {
  const CommandResult run = RunReward(args, stdin_text);
  if (run.exit_code != 0) {
    ADD_FAILURE() << "rollout reward exited with " << run.exit_code << ": " << run.output;
    return {};
  }
  std::vector<nlohmann::json> lines;
  std::istringstream in(run.output);
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

TEST(RewardCommand, RoutesEachLineByDataSource) {
  const std::vector<nlohmann::json> lines = ScoredLines(
      {}, "{\"data_source\": \"openai/gsm8k\", \"response\": \"so #### 72\", \"ground_truth\": \"72\"}\n"
          "\n"
          "{\"data_source\": \"exact_match\", \"response\": \" yes \", \"ground_truth\": \"no\"}\n");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["reward"], "gsm8k");
  EXPECT_EQ(lines[0]["score"], 1.0);
  EXPECT_EQ(lines[1]["reward"], "exact_match");
  EXPECT_EQ(lines[1]["score"], 0.0);
}

TEST(RewardCommand, NamedRewardScoresEveryLineAndTakesNonStringGroundTruths) {
  const std::vector<nlohmann::json> lines = ScoredLines(
      {"--name", "countdown"},
      "{\"response\": \"Assistant: <answer>(1 + 2) * 3</answer>\", "
      "\"ground_truth\": {\"target\": 9, \"numbers\": [1, 2, 3]}}\n");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["score"], 1.0);
  EXPECT_EQ(lines[0]["extra"]["acc"], 1.0);
}

TEST(RewardCommand, TakesTheGroundTruthFromVerlsRewardModelField) {
  const std::vector<nlohmann::json> lines = ScoredLines(
      {"--name", "gsm8k"},
      "{\"response\": \"so #### 72\", \"reward_model\": {\"ground_truth\": \"72\", \"style\": \"rule\"}}\n"
      "{\"response\": \"so #### 71\", \"reward_model\": {\"ground_truth\": \"72\", \"style\": \"rule\"}}\n");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["score"], 1.0);
  EXPECT_EQ(lines[1]["score"], 0.0);
}

TEST(RewardCommand, PluginScoresEveryLine) {
  const std::vector<nlohmann::json> lines =
      ScoredLines({"--plugin", EXAMPLE_PLUGIN_PATH},
                  "{\"response\": \"it is 42\", \"ground_truth\": \"42\"}\n"
                  "{\"response\": \"it is 41\", \"ground_truth\": \"42\"}\n");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["reward"], "contains_answer");
  EXPECT_EQ(lines[0]["score"], 1.0);
  EXPECT_EQ(lines[0]["extra"]["response_chars"], 8.0);
  EXPECT_EQ(lines[1]["score"], 0.0);
  const CommandResult both = RunReward({"--plugin", EXAMPLE_PLUGIN_PATH, "--name", "gsm8k"}, "");
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_THAT(both.output, HasSubstr("give a reward name ('gsm8k') or a plug-in"));
}

TEST(RewardCommand, BadLinesAndUnknownNamesAreUsageErrors) {
  CommandResult run =
      RunReward({}, "{\"response\": \"x\", \"ground_truth\": \"y\", \"data_source\": \"nowhere\"}\n");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.output, HasSubstr("stdin:1: no reward for data_source 'nowhere'"));
  run = RunReward({"--name", "gsm8k"}, "{\"ground_truth\": \"1\"}\n");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.output, HasSubstr("stdin:1: \"response\" is missing"));
  run = RunReward({"--name", "gsm8k"}, "{\"response\": \"#### 1\"}\n");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.output, HasSubstr("stdin:1: no ground truth: neither \"ground_truth\" nor "
                                    "\"reward_model\": {\"ground_truth\": ...}"));
  run = RunReward({"--name", "nope"}, "");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.output, HasSubstr("unknown reward 'nope'"));
}

}  // namespace
}  // namespace rollout::rewards
