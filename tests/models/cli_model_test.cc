// `rollout init-model` and `rollout score` through the real binary.
#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "common/file_util.h"
#include "models/causal_lm.h"
#include "models/lora.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace rollout::models {
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

TEST(InitModel, WritesALoadableModelWithTheTokenizer) {
  TempDir dir("init_model");
  const std::string out = dir.Path("model");
  CommandResult run = Rollout({"init-model", "--out", out, "--tokenizer", kFixture, "--seed", "3"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  absl::StatusOr<std::unique_ptr<CausalLM>> model = CausalLM::Load(out, LoadOptions());
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ((*model)->config().vocab_size, 514);
  EXPECT_EQ((*model)->config().eos_token_ids, std::vector<int64_t>({2}));
  EXPECT_TRUE(ReadFile(JoinPath(out, "tokenizer.json")).ok());
  EXPECT_TRUE(ReadFile(JoinPath(out, "chat_template.jinja")).ok());
  // Same seed, same weights.
  const std::string again = dir.Path("again");
  ASSERT_EQ(Rollout({"init-model", "--out", again, "--tokenizer", kFixture, "--seed", "3"}).exit_code, 0);
  EXPECT_EQ(ReadFile(JoinPath(out, "model.safetensors")).value(),
            ReadFile(JoinPath(again, "model.safetensors")).value());
}

TEST(InitModel, UnknownPresetIsAUsageError) {
  TempDir dir("init_model");
  CommandResult run = Rollout({"init-model", "--out", dir.Path("m"), "--tokenizer", kFixture, "--preset", "huge"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.output, HasSubstr("unknown model preset 'huge' (known: tiny, qwen2.5-0.5b, qwen3-0.6b)"));
}

TEST(Score, LogProbsMatchHfForIdsAndText) {
  const nlohmann::json expected =
      nlohmann::json::parse(ReadFile(JoinPath(kFixture, "model_expect.json")).value());
  const nlohmann::json& first = expected["forward"][0];
  TempDir dir("score");
  const std::string input = dir.Write(
      "in.jsonl", nlohmann::json{{"ids", first["ids"]}}.dump() + "\n\n" +
                      nlohmann::json{{"text", "Hello world"}}.dump() + "\n");
  CommandResult run = Rollout({"score", "--model", kFixture, "--input", input, "--output", dir.Path("out.jsonl")});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  std::istringstream lines(ReadFile(dir.Path("out.jsonl")).value());
  std::string line;
  ASSERT_TRUE(std::getline(lines, line));
  const std::vector<float> got = nlohmann::json::parse(line)["log_probs"];
  const std::vector<float> want = first["logprob_of_next"];
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4) << i;
  ASSERT_TRUE(std::getline(lines, line));
  const nlohmann::json text = nlohmann::json::parse(line);
  EXPECT_EQ(text["log_probs"].size() + 1, text["ids"].size());
}

// --adapter: the log-probs of the model with a PEFT adapter applied, as the same model
// with that adapter scores in process; a missing adapter is an error naming its file.
TEST(Score, AnAdapterIsAppliedToTheModel) {
  TempDir dir("score_adapter");
  std::unique_ptr<CausalLM> adapted = CausalLM::Load(kFixture, LoadOptions()).value();
  LoraConfig config;
  config.options.rank = 4;
  config.target_modules = {"q_proj", "down_proj"};
  ASSERT_TRUE(AddLoraAdapters(*adapted, config, 1).ok());
  at::manual_seed(3);
  for (auto& [name, tensor] : NamedLoraParameters(*adapted)) {
    c10::NoGradGuard no_grad;
    tensor->normal_(0, 0.05);
  }
  ASSERT_TRUE(SaveLoraAdapter(*adapted, config, dir.Path("adapter"), kFixture).ok());
  const std::vector<int64_t> ids = {1, 17, 42, 99, 7, 300};
  const std::string input = dir.Write("in.jsonl", nlohmann::json{{"ids", ids}}.dump() + "\n");
  CommandResult run = Rollout({"score", "--model", kFixture, "--adapter", dir.Path("adapter"), "--input", input});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const std::vector<float> got = nlohmann::json::parse(run.output)["log_probs"];
  c10::NoGradGuard no_grad;
  const int64_t t = static_cast<int64_t>(ids.size());
  const at::Tensor hidden =
      adapted->Forward(at::tensor(ids, at::kLong).view({1, t}), at::arange(t, at::kLong).view({1, t}), at::Tensor());
  const at::Tensor targets = at::tensor(ids, at::kLong).narrow(0, 1, t - 1).unsqueeze(1);
  const at::Tensor want = adapted->Logits(hidden)[0].log_softmax(-1).narrow(0, 0, t - 1).gather(1, targets);
  ASSERT_EQ(static_cast<int64_t>(got.size()), t - 1);
  for (int64_t i = 0; i + 1 < t; ++i) EXPECT_NEAR(got[i], want[i][0].item<float>(), 1e-5) << i;
  CommandResult plain = Rollout({"score", "--model", kFixture, "--input", input});
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  EXPECT_NE(nlohmann::json::parse(plain.output)["log_probs"], nlohmann::json::parse(run.output)["log_probs"]);
  CommandResult missing = Rollout({"score", "--model", kFixture, "--adapter", dir.Path("none"), "--input", input});
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_THAT(missing.output, HasSubstr(dir.Path("none/adapter_config.json")));
}

TEST(Score, BadLineNamesFileAndLine) {
  TempDir dir("score");
  const std::string input = dir.Write("in.jsonl", "{\"ids\": [1, 2, 3]}\n{\"ids\": [1, 9999]}\n");
  CommandResult run = Rollout({"score", "--model", kFixture, "--input", input});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.output, HasSubstr(input + ":2: token id 9999 is outside the vocabulary (514)"));
}

// verl's data files are Parquet: their rows are read as JSON lines' are, errors naming
// the row. (typed_plain.parquet's first text, "a", is one token.)
TEST(Score, ParquetRowsAreScoredAndNamedByRow) {
  const std::string input = "tests/data/parquet/typed_plain.parquet";
  CommandResult run = Rollout({"score", "--model", kFixture, "--input", input});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.output, HasSubstr(input + " row 1: a sequence needs at least 2 tokens to score"));
}

}  // namespace
}  // namespace rollout::models
