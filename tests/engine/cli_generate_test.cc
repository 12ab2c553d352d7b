// `rollout generate` through the real binary on the tiny fixture.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "common/file_util.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace rollout::engine {
namespace {

using ::rollout::testing::CommandResult;
using ::rollout::testing::RunCommand;
using ::rollout::testing::TempDir;
using ::testing::HasSubstr;

constexpr char kFixture[] = "tests/data/tiny-qwen2";

CommandResult Rollout(std::vector<std::string> args) {
  args.insert(args.begin(), ROLLOUT_BINARY_PATH);
  return RunCommand(args);
}

std::vector<nlohmann::json> JsonLines(const std::string& text) {
  std::vector<nlohmann::json> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

TEST(GenerateCommand, WritesOneLinePerPromptWithItsResponses) {
  TempDir dir("generate");
  const std::string input = dir.Path("prompts.jsonl");
  ASSERT_TRUE(WriteFileAtomically(
                  input,
                  "{\"prompt\": \"Hello world\"}\n"
                  "\n"
                  "{\"messages\": [{\"role\": \"user\", \"content\": \"2 + 3?\"}], \"stop\": [\"zzz\"]}\n"
                  "{\"ids\": [5, 6, 7]}\n")
                  .ok());
  const std::string output = dir.Path("out.jsonl");
  const CommandResult run = Rollout({"generate", "--model", kFixture, "--input", input, "--output",
                                     output, "--n", "2", "--greedy", "--max_tokens", "4",
                                     "--cpu_kv_cache_gib", "0.01"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("6/6 responses"));  // the progress bar's last state
  const std::vector<nlohmann::json> lines = JsonLines(ReadFile(output).value());
  ASSERT_EQ(lines.size(), 3u);
  for (size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(lines[i]["index"], i);
    const nlohmann::json& responses = lines[i]["responses"];
    ASSERT_EQ(responses.size(), 2u);
    for (const nlohmann::json& response : responses) {
      EXPECT_LE(response["ids"].size(), 4u);
      EXPECT_EQ(response["log_probs"].size(), response["ids"].size());
      EXPECT_THAT(response["finish_reason"].get<std::string>(),
                  ::testing::AnyOf("eos", "length", "stop"));
    }
    // Greedy: both samples of a prompt are the same.
    EXPECT_EQ(responses[0]["ids"], responses[1]["ids"]);
  }
  EXPECT_EQ(lines[2]["prompt_ids"], nlohmann::json({5, 6, 7}));
}

TEST(GenerateCommand, BadInputLineIsAnErrorNamingTheLine) {
  TempDir dir("generate");
  const std::string input = dir.Path("prompts.jsonl");
  ASSERT_TRUE(WriteFileAtomically(input, "{\"ids\": [1, 2]}\n{\"ids\": [1, 999]}\n").ok());
  const CommandResult run =
      Rollout({"generate", "--model", kFixture, "--input", input, "--cpu_kv_cache_gib", "0.01"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.output, HasSubstr(input + ":2: token id 999 is outside the model's vocabulary"));
}

// verl's datasets: Parquet rows whose "prompt" is a list of chat messages.
TEST(GenerateCommand, ReadsVerlsParquetRowsWithChatPrompts) {
  TempDir dir("generate");
  const std::string output = dir.Path("out.jsonl");
  const CommandResult run = Rollout({"generate", "--model", kFixture, "--input", "tests/data/parquet/gsm8k_verl.parquet",
                                     "--output", output, "--greedy", "--max_tokens", "2", "--cpu_kv_cache_gib", "0.01"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const std::vector<nlohmann::json> lines = JsonLines(ReadFile(output).value());
  ASSERT_EQ(lines.size(), 3u);
  // The chat template wraps the question: more tokens than its ~40 words alone.
  EXPECT_GT(lines[0]["prompt_ids"].size(), 60u);
}

TEST(GenerateCommand, AParquetFileItCannotReadIsAnErrorNamingItAndTheColumn) {
  const std::string input = "tests/data/parquet/unsupported_map.parquet";
  const CommandResult run =
      Rollout({"generate", "--model", kFixture, "--input", input, "--cpu_kv_cache_gib", "0.01"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.output, HasSubstr(input + ": reading it as Parquet: column 'm' is a MAP"));
}

}  // namespace
}  // namespace rollout::engine
