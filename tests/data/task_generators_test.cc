// Task generators: determinism, correct answers (checked with the reward side's own
// arithmetic parser), really wrong "rejected" answers, disjoint splits; and
// `rollout gen-data` through the binary, whose files must load as datasets.
#include "data/task_generators.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "common/file_util.h"
#include "controller/dataset.h"
#include "rewards/arithmetic.h"
#include "rewards/reward_registry.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace rollout::data {
namespace {

using ::rollout::testing::CommandResult;
using ::rollout::testing::RunCommand;
using ::rollout::testing::TempDir;
using ::testing::HasSubstr;

SplitOptions Split(int64_t train, int64_t validation, int64_t seed = 1) {
  SplitOptions split;
  split.train_size = train;
  split.validation_size = validation;
  split.seed = seed;
  return split;
}

std::vector<std::string> Prompts(const std::vector<Problem>& problems) {
  std::vector<std::string> prompts;
  for (const Problem& problem : problems) prompts.push_back(problem.prompt);
  return prompts;
}

int64_t ParseInt(const std::string& text) {
  int64_t value = 0;
  EXPECT_TRUE(absl::SimpleAtoi(text, &value)) << text;
  return value;
}

// The value of `expression` as the reward side computes it; fails unless an integer.
int64_t Evaluate(const std::string& expression) {
  absl::StatusOr<rewards::ArithmeticResult> result = rewards::EvaluateArithmetic(expression);
  EXPECT_TRUE(result.ok()) << expression << ": " << result.status();
  if (!result.ok()) return -1;
  EXPECT_EQ(result->value.denominator, 1) << expression;
  return result->value.numerator;
}

double CountdownScore(const Problem& problem, const std::string& response) {
  std::unique_ptr<rewards::RewardFunction> reward =
      std::move(rewards::RewardRegistry::WithBuiltins().Create("countdown")).value();
  rewards::RewardInput input;
  input.response = response;
  input.ground_truth = problem.ground_truth_json;
  absl::StatusOr<rewards::RewardOutput> output = reward->Score(input);
  EXPECT_TRUE(output.ok()) << output.status();
  return output.ok() ? output->score : -1;
}

TEST(ArithmeticTask, SameSeedGivesSameProblemsAndOtherSeedsOthers) {
  const TaskSplits first = GenerateArithmetic({}, Split(50, 10, 7)).value();
  const TaskSplits again = GenerateArithmetic({}, Split(50, 10, 7)).value();
  const TaskSplits other = GenerateArithmetic({}, Split(50, 10, 8)).value();
  EXPECT_EQ(Prompts(first.train), Prompts(again.train));
  EXPECT_EQ(Prompts(first.validation), Prompts(again.validation));
  EXPECT_NE(Prompts(first.train), Prompts(other.train));
}

TEST(ArithmeticTask, DefaultsAreTwoDigitAdditionAndSubtractionWithCorrectAnswers) {
  const TaskSplits splits = GenerateArithmetic({}, Split(300, 50)).value();
  ASSERT_EQ(splits.train.size(), 300u);
  ASSERT_EQ(splits.validation.size(), 50u);
  std::set<char> operators;
  for (const Problem& problem : splits.train) {
    ASSERT_EQ(problem.solution.size(), 5u) << problem.solution;  // "12+35"
    operators.insert(problem.solution[2]);
    const int64_t answer = Evaluate(problem.solution);
    EXPECT_GE(answer, 0) << problem.solution;
    EXPECT_EQ(problem.prompt, problem.solution + "=");
    EXPECT_EQ(problem.response, std::to_string(answer));
    EXPECT_EQ(problem.ground_truth_json, "\"" + std::to_string(answer) + "\"");
    EXPECT_EQ(problem.data_source, "arithmetic");
  }
  EXPECT_EQ(operators, (std::set<char>{'+', '-'}));
}

TEST(ArithmeticTask, WrongAnswersAreCloseButNeverCorrect) {
  ArithmeticOptions task;
  task.min_digits = 1;
  task.max_digits = 1;
  task.operators = "-*";  // many small answers, including 0
  const TaskSplits splits = GenerateArithmetic(task, Split(80, 20)).value();
  for (const Problem& problem : splits.train) {
    const int64_t answer = ParseInt(problem.response);
    const int64_t wrong = ParseInt(problem.wrong_response);
    EXPECT_NE(wrong, answer) << problem.prompt;
    EXPECT_LE(std::abs(wrong - answer), 3) << problem.prompt;
    EXPECT_GE(wrong, 0) << problem.prompt;
  }
}

TEST(ArithmeticTask, OptionsChooseDigitsAndOperators) {
  ArithmeticOptions task;
  task.min_digits = 3;
  task.max_digits = 3;
  task.operators = "*";
  const TaskSplits splits = GenerateArithmetic(task, Split(20, 0)).value();
  for (const Problem& problem : splits.train) {
    ASSERT_EQ(problem.solution.size(), 7u) << problem.solution;  // "123*456"
    EXPECT_EQ(problem.solution[3], '*');
    EXPECT_EQ(ParseInt(problem.response), Evaluate(problem.solution));
  }
}

TEST(ArithmeticTask, TrainAndValidationShareNoProblem) {
  ArithmeticOptions task;
  task.min_digits = 1;
  task.max_digits = 1;
  task.operators = "+";  // 100 problems in all: every one is drawn
  const TaskSplits splits = GenerateArithmetic(task, Split(70, 30)).value();
  const std::vector<std::string> train = Prompts(splits.train);
  const std::vector<std::string> validation = Prompts(splits.validation);
  std::set<std::string> all(train.begin(), train.end());
  all.insert(validation.begin(), validation.end());
  EXPECT_EQ(all.size(), 100u);
}

TEST(ArithmeticTask, AskingForMoreProblemsThanExistIsAnError) {
  ArithmeticOptions task;
  task.min_digits = 1;
  task.max_digits = 1;
  task.operators = "+";
  const absl::StatusOr<TaskSplits> splits = GenerateArithmetic(task, Split(90, 20));
  EXPECT_EQ(splits.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(splits.status().message(), HasSubstr("found only 100 distinct problems"));
}

TEST(ArithmeticTask, BadOptionsAreInvalidArgument) {
  ArithmeticOptions zero_digits;
  zero_digits.min_digits = 0;
  ArithmeticOptions too_many_digits;
  too_many_digits.max_digits = 10;
  ArithmeticOptions division;
  division.operators = "+/";
  for (const ArithmeticOptions& task : {zero_digits, too_many_digits, division}) {
    EXPECT_EQ(GenerateArithmetic(task, Split(1, 0)).status().code(),
              absl::StatusCode::kInvalidArgument);
  }
  EXPECT_EQ(GenerateArithmetic({}, Split(0, 5)).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(GenerateArithmetic({}, Split(5, -1)).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(CountdownTask, SolutionUsesEveryNumberOnceAndReachesTheTarget) {
  const TaskSplits splits = GenerateCountdown({}, Split(200, 50)).value();
  for (const Problem& problem : splits.train) {
    const nlohmann::json truth = nlohmann::json::parse(problem.ground_truth_json);
    const int64_t target = truth.at("target").get<int64_t>();
    std::vector<int64_t> numbers = truth.at("numbers").get<std::vector<int64_t>>();
    EXPECT_GE(numbers.size(), 3u);
    EXPECT_LE(numbers.size(), 4u);
    for (int64_t number : numbers) {
      EXPECT_GE(number, 1);
      EXPECT_LE(number, 99);
    }
    EXPECT_GE(target, 1);
    EXPECT_LE(target, 999);
    const absl::StatusOr<rewards::ArithmeticResult> result =
        rewards::EvaluateArithmetic(problem.solution);
    ASSERT_TRUE(result.ok()) << problem.solution;
    EXPECT_EQ(result->value, (rewards::Rational{target, 1})) << problem.solution;
    std::vector<int64_t> used = result->literals;
    std::sort(used.begin(), used.end());
    std::sort(numbers.begin(), numbers.end());
    EXPECT_EQ(used, numbers) << problem.solution;
    EXPECT_EQ(problem.data_source, "countdown");
  }
}

TEST(CountdownTask, PromptIsTinyZeroStyle) {
  const Problem problem = GenerateCountdown({}, Split(1, 0)).value().train[0];
  const nlohmann::json truth = nlohmann::json::parse(problem.ground_truth_json);
  std::string numbers;
  for (const nlohmann::json& number : truth.at("numbers")) {
    numbers += (numbers.empty() ? "" : ", ") + number.dump();
  }
  EXPECT_THAT(problem.prompt, HasSubstr("User: Using the numbers [" + numbers +
                                        "], create an equation that equals " +
                                        truth.at("target").dump() + "."));
  EXPECT_THAT(problem.prompt, HasSubstr("<answer> </answer> tags"));
  EXPECT_THAT(problem.prompt,
              ::testing::EndsWith("Assistant: Let me solve this step by step.\n<think>"));
}

TEST(CountdownTask, ChosenResponseScoresFullyAndRejectedDoesNot) {
  const TaskSplits splits = GenerateCountdown({}, Split(100, 0)).value();
  for (const Problem& problem : splits.train) {
    EXPECT_EQ(CountdownScore(problem, problem.response), 1.0) << problem.response;
    EXPECT_LT(CountdownScore(problem, problem.wrong_response), 1.0) << problem.wrong_response;
  }
}

TEST(CountdownTask, DeterministicPerSeedAndDisjointSplits) {
  const TaskSplits first = GenerateCountdown({}, Split(100, 100, 3)).value();
  const TaskSplits again = GenerateCountdown({}, Split(100, 100, 3)).value();
  const TaskSplits other = GenerateCountdown({}, Split(100, 100, 4)).value();
  EXPECT_EQ(Prompts(first.train), Prompts(again.train));
  EXPECT_NE(Prompts(first.train), Prompts(other.train));
  // The same problem is the same numbers, in any order, and target.
  const auto key = [](const Problem& problem) {
    nlohmann::json truth = nlohmann::json::parse(problem.ground_truth_json);
    std::vector<int64_t> numbers = truth.at("numbers").get<std::vector<int64_t>>();
    std::sort(numbers.begin(), numbers.end());
    return nlohmann::json{numbers, truth.at("target")}.dump();
  };
  std::set<std::string> train;
  for (const Problem& problem : first.train) train.insert(key(problem));
  for (const Problem& problem : first.validation) EXPECT_EQ(train.count(key(problem)), 0u);
}

TEST(CountdownTask, BadOptionsAreInvalidArgument) {
  CountdownOptions one_number;
  one_number.min_numbers = 1;
  CountdownOptions huge_numbers;
  huge_numbers.max_number = 5000;
  CountdownOptions no_target;
  no_target.max_target = 0;
  for (const CountdownOptions& task : {one_number, huge_numbers, no_target}) {
    EXPECT_EQ(GenerateCountdown(task, Split(1, 0)).status().code(),
              absl::StatusCode::kInvalidArgument);
  }
}

// ---- rollout gen-data, through the binary ----

CommandResult GenData(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {ROLLOUT_BINARY_PATH, "gen-data"};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv);
}

TEST(GenDataCommand, WritesEveryFileAndTheyLoadAsDatasets) {
  TempDir dir("gen_data");
  const std::string out = dir.Path("arith");
  const CommandResult run = GenData({"arithmetic", "--out", out, "--train", "40", "--val", "8"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const controller::DatasetOptions options;
  const auto train = controller::LoadPromptDataset({JoinPath(out, "train.jsonl")}, options);
  const auto val = controller::LoadPromptDataset({JoinPath(out, "val.jsonl")}, options);
  const auto sft_train = controller::LoadSftDataset({JoinPath(out, "sft_train.jsonl")}, options);
  const auto sft_val = controller::LoadSftDataset({JoinPath(out, "sft_val.jsonl")}, options);
  const auto dpo_train =
      controller::LoadPreferenceDataset({JoinPath(out, "dpo_train.jsonl")}, options);
  const auto dpo_val = controller::LoadPreferenceDataset({JoinPath(out, "dpo_val.jsonl")}, options);
  ASSERT_TRUE(train.ok() && val.ok() && sft_train.ok() && sft_val.ok() && dpo_train.ok() &&
              dpo_val.ok());
  ASSERT_EQ(train->examples.size(), 40u);
  EXPECT_EQ(val->examples.size(), 8u);
  EXPECT_EQ(sft_train->examples.size(), 40u);
  EXPECT_EQ(sft_val->examples.size(), 8u);
  EXPECT_EQ(dpo_train->examples.size(), 40u);
  EXPECT_EQ(dpo_val->examples.size(), 8u);
  const controller::PromptExample& first = train->examples[0];
  EXPECT_EQ(first.data_source, "arithmetic");
  EXPECT_EQ(first.prompt.format, controller::Prompt::Format::kText);
  const std::string problem = first.prompt.content.substr(0, first.prompt.content.size() - 1);
  EXPECT_EQ(first.ground_truth, std::to_string(Evaluate(problem)));  // "12+35=" -> "47"
  EXPECT_EQ(sft_train->examples[0].response.content, first.ground_truth);
  EXPECT_EQ(dpo_train->examples[0].chosen.content, first.ground_truth);
  EXPECT_NE(dpo_train->examples[0].rejected.content, first.ground_truth);
  EXPECT_EQ(first.extra_info, R"({"index":0,"split":"train"})");
}

TEST(GenDataCommand, CountdownGroundTruthLoadsAsJsonObjectText) {
  TempDir dir("gen_data");
  const CommandResult run =
      GenData({"countdown", "--out", dir.path(), "--train", "5", "--val", "2", "--seed", "9"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto train =
      controller::LoadPromptDataset({dir.Path("train.jsonl")}, controller::DatasetOptions());
  ASSERT_TRUE(train.ok()) << train.status();
  ASSERT_EQ(train->examples.size(), 5u);
  const nlohmann::json truth = nlohmann::json::parse(train->examples[0].ground_truth);
  EXPECT_TRUE(truth.at("target").is_number_integer());
  EXPECT_TRUE(truth.at("numbers").is_array());
  EXPECT_EQ(train->examples[0].data_source, "countdown");
}

TEST(GenDataCommand, SameSeedWritesIdenticalFiles) {
  TempDir dir("gen_data");
  for (const char* name : {"a", "b"}) {
    const CommandResult run = GenData({"countdown", "--out", dir.Path(name), "--train", "30",
                                       "--val", "5", "--seed", "4"});
    ASSERT_EQ(run.exit_code, 0) << run.output;
  }
  for (const char* file : {"train.jsonl", "val.jsonl", "sft_train.jsonl", "dpo_train.jsonl"}) {
    EXPECT_EQ(ReadFile(JoinPath(dir.Path("a"), file)).value(),
              ReadFile(JoinPath(dir.Path("b"), file)).value())
        << file;
  }
}

TEST(GenDataCommand, UsageErrorsExitTwoWithOneLine) {
  TempDir dir("gen_data");
  const std::vector<std::vector<std::string>> bad = {
      {"--out", dir.path()},                                   // no task
      {"sudoku", "--out", dir.path()},                         // unknown task
      {"arithmetic"},                                          // no --out
      {"arithmetic", "--out", dir.path(), "--max_digits", "12"},  // option out of range
      {"arithmetic", "--out", dir.path(), "--bogus", "1"},     // unknown flag
  };
  for (const std::vector<std::string>& args : bad) {
    const CommandResult run = GenData(args);
    EXPECT_EQ(run.exit_code, 2) << run.output;
    EXPECT_THAT(run.output, ::testing::StartsWith("rollout gen-data: ")) << run.output;
    EXPECT_EQ(std::count(run.output.begin(), run.output.end(), '\n'), 1) << run.output;
  }
  EXPECT_EQ(ListDirectory(dir.path()).value(), std::vector<std::string>());
}

TEST(GenDataCommand, UnwritableOutputExitsOne) {
  TempDir dir("gen_data");
  const std::string file = dir.Write("not_a_dir", "x");
  const CommandResult run = GenData({"arithmetic", "--out", file, "--train", "5", "--val", "1"});
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_THAT(run.output, HasSubstr("rollout gen-data: writing " + file));
}

}  // namespace
}  // namespace rollout::data
