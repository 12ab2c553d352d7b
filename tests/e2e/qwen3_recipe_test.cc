// recipes/grpo_gsm8k_qwen3_0.6b.yaml, a GPU recipe, run on the CPU at reduced size
// through real worker processes: a random tiny Qwen3 (per-head q/k norms) with the
// fixture's tokenizer and Qwen3's chat template for the model, tests/data/gsm8k_tiny.jsonl
// to train on, everything else as the recipe says — in particular its
// data.apply_chat_template_kwargs.enable_thinking: false, which must reach the rollout's
// prompts, as must the tools each row offers (a "tools" column, TRL's) or the recipe's
// multi-turn rollout offers (rollout.multi_turn with recipes/tools/gsm8k.yaml).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/file_util.h"
#include "tests/e2e/rollout_run.h"
#include "tests/support/temp_dir.h"
#include "tests/support/tiny_qwen3.h"

namespace rollout {
namespace {

using testing::ReadJsonLines;
using testing::RolloutIn;

// The random model scores 0 on every row, so the policy gradient is 0, and so is the KL
// loss's while the actor is the reference: the update's gradient would be rounding
// noise. A small entropy bonus gives it one to check that the update trains.
constexpr char kEntropyBonus[] = "actor.entropy_coeff=0.01";

// A tiny Qwen3 model directory: random weights, the tiny Qwen2 fixture's tokenizer
// files (EOS and padding as there) and Qwen3's chat template.
void WriteTinyQwen3(const std::string& dir) {
  const std::string source = ROLLOUT_SOURCE_DIR;
  models::TransformerConfig config = testing::TinyQwen3Config(514, /*head_dim=*/32);
  config.eos_token_ids = {2};
  config.pad_token_id = 0;
  ASSERT_TRUE(testing::RandomQwen3(config, 3, models::LoadOptions())->Save(dir).ok());
  for (const char* file : {"tokenizer.json", "tokenizer_config.json"}) {
    ASSERT_TRUE(WriteFileAtomically(JoinPath(dir, file),
                                    ReadFile(source + "/tests/data/tiny-qwen2/" + file).value())
                    .ok());
  }
  ASSERT_TRUE(WriteFileAtomically(JoinPath(dir, "chat_template.jinja"),
                                  ReadFile(source + "/tests/data/qwen3_chat_template.jinja").value())
                  .ok());
}

// tests/data/gsm8k_tiny.jsonl with a tool schema on every row, its keys in an order
// that sorting would change; the schema as the template writes it is returned.
std::string WriteRowsWithTools(const std::string& path) {
  const std::string source = ROLLOUT_SOURCE_DIR;
  const nlohmann::ordered_json tool = nlohmann::ordered_json::parse(
      R"({"type": "function", "function": {"name": "calc", "parameters": {"type": "object"}}})");
  std::string rows;
  for (const absl::string_view line : absl::StrSplit(ReadFile(source + "/tests/data/gsm8k_tiny.jsonl").value(), '\n')) {
    if (line.empty()) continue;
    nlohmann::ordered_json row = nlohmann::ordered_json::parse(line);
    row["tools"] = nlohmann::ordered_json::array({tool});
    absl::StrAppend(&rows, row.dump(), "\n");
  }
  EXPECT_TRUE(WriteFileAtomically(path, rows).ok());
  return R"({"type": "function", "function": {"name": "calc", "parameters": {"type": "object"}}})";
}

// gsm8k_tiny.jsonl's rows as verl's GSM8K multi-turn data has them: each carries its
// ground truth for the gsm8k tool under extra_info.tools_kwargs and for the gsm8k
// simulated user under extra_info.interaction_kwargs.
void WriteRowsWithToolsKwargs(const std::string& path) {
  const std::string source = ROLLOUT_SOURCE_DIR;
  std::string rows;
  for (const absl::string_view line : absl::StrSplit(ReadFile(source + "/tests/data/gsm8k_tiny.jsonl").value(), '\n')) {
    if (line.empty()) continue;
    nlohmann::ordered_json row = nlohmann::ordered_json::parse(line);
    const nlohmann::ordered_json ground_truth = row["reward_model"]["ground_truth"];
    row["extra_info"]["tools_kwargs"]["calc_gsm8k_reward"]["create_kwargs"]["ground_truth"] = ground_truth;
    row["extra_info"]["interaction_kwargs"] = {{"name", "gsm8k"}, {"ground_truth", ground_truth}};
    absl::StrAppend(&rows, row.dump(), "\n");
  }
  EXPECT_TRUE(WriteFileAtomically(path, rows).ok());
}

TEST(Qwen3Recipe, TrainsTwoStepsOnTheCpuWithThinkingOffAndTheRowsTools) {
  testing::TempDir dir("qwen3_recipe_e2e");
  WriteTinyQwen3(dir.Path("model"));
  const std::string source = ROLLOUT_SOURCE_DIR;
  const std::string tool = WriteRowsWithTools(dir.Path("gsm8k_tools.jsonl"));
  const testing::CommandResult train = RolloutIn(
      dir.path(),
      {"train", source + "/recipes/grpo_gsm8k_qwen3_0.6b.yaml",
       "data.train_files=[" + dir.Path("gsm8k_tools.jsonl") + "]", "data.val_files=[]",
       "actor.model.path=" + dir.Path("model"), "trainer.device=cpu", "actor.model.dtype=float32",
       "rollout.dtype=float32", "rollout.cpu_kv_cache_gib=0.05", "data.train_batch_size=4",
       "actor.ppo_mini_batch_size=2", "actor.ppo_micro_batch_size_per_gpu=2", "rollout.n=2",
       "data.max_prompt_length=1024", "data.max_response_length=8", "trainer.total_training_steps=2",
       "trainer.save_freq=-1", "trainer.logger=[console,jsonl]", "trainer.rollout_data_dir=dumps",
       kEntropyBonus});
  ASSERT_EQ(train.exit_code, 0) << train.output;

  const auto steps = ReadJsonLines(dir.Path("jsonl_log/rollout_gsm8k/grpo_qwen3_0.6b/metrics.jsonl"));
  ASSERT_EQ(steps.size(), 2u);
  for (const nlohmann::json& metrics : steps) {
    EXPECT_TRUE(metrics.contains("actor/kl_loss")) << metrics.dump();
    EXPECT_GT(metrics["actor/grad_norm"].get<double>(), 0) << metrics.dump();
  }
  // The prompts the rollout generated from, decoded: the row's tool in the system
  // message, and Qwen3's generation prompt with the empty think block that
  // enable_thinking: false adds.
  const auto dumped = ReadJsonLines(dir.Path("dumps/1.jsonl"));
  ASSERT_EQ(dumped.size(), 8u);  // 4 prompts x 2 responses
  for (const nlohmann::json& line : dumped) {
    EXPECT_TRUE(absl::EndsWith(line["input"].get<std::string>(), "assistant\n<think>\n\n</think>\n\n"))
        << line["input"];
    EXPECT_THAT(line["input"].get<std::string>(),
                ::testing::StartsWith("system\n# Tools\n\nYou may call one or more functions"));  // specials left out
    EXPECT_THAT(line["input"].get<std::string>(), ::testing::HasSubstr("<tools>\n" + tool + "\n</tools>"));
  }
}

// The random model calls no tool, so each response is one reply (num_turns 2); what
// this checks is the wiring: the workers load the tools, every prompt offers them, and
// the multi-turn rollout's batch trains and reports its turns. The rows carry their
// ground truths for verl's gsm8k tool and simulated user (extra_info.tools_kwargs,
// interaction_kwargs) to the workers.
TEST(Qwen3Recipe, TrainsWithAMultiTurnRolloutOfferingTheGsm8kTool) {
  testing::TempDir dir("qwen3_multi_turn_e2e");
  WriteTinyQwen3(dir.Path("model"));
  const std::string source = ROLLOUT_SOURCE_DIR;
  WriteRowsWithToolsKwargs(dir.Path("gsm8k_tools_kwargs.jsonl"));
  const testing::CommandResult train = RolloutIn(
      dir.path(),
      {"train", source + "/recipes/grpo_gsm8k_qwen3_0.6b.yaml",
       "data.train_files=[" + dir.Path("gsm8k_tools_kwargs.jsonl") + "]", "data.val_files=[]",
       "actor.model.path=" + dir.Path("model"), "trainer.device=cpu", "actor.model.dtype=float32",
       "rollout.dtype=float32", "rollout.cpu_kv_cache_gib=0.05", "data.train_batch_size=4",
       "actor.ppo_mini_batch_size=2", "actor.ppo_micro_batch_size_per_gpu=2", "rollout.n=2",
       "data.max_prompt_length=1024", "data.max_response_length=8", "trainer.total_training_steps=1",
       "trainer.save_freq=-1", "trainer.logger=[console,jsonl]", "trainer.rollout_data_dir=dumps",
       "rollout.multi_turn.enable=true", "rollout.multi_turn.tool_config_path=" + source + "/recipes/tools/gsm8k.yaml",
       "rollout.multi_turn.interaction_config_path=" + source + "/recipes/tools/gsm8k_interaction.yaml",
       "rollout.multi_turn.max_assistant_turns=3", kEntropyBonus});
  ASSERT_EQ(train.exit_code, 0) << train.output;

  const auto steps = ReadJsonLines(dir.Path("jsonl_log/rollout_gsm8k/grpo_qwen3_0.6b/metrics.jsonl"));
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0]["num_turns/min"], 2.0) << steps[0].dump();
  EXPECT_EQ(steps[0]["num_turns/max"], 2.0) << steps[0].dump();
  EXPECT_GT(steps[0]["actor/grad_norm"].get<double>(), 0) << steps[0].dump();
  const auto dumped = ReadJsonLines(dir.Path("dumps/1.jsonl"));
  ASSERT_EQ(dumped.size(), 8u);
  for (const nlohmann::json& line : dumped) {
    EXPECT_THAT(line["input"].get<std::string>(), ::testing::HasSubstr("\"name\": \"calc_gsm8k_reward\""));
  }

  // A row without the ground truth the gsm8k tool needs is refused, naming it.
  const testing::CommandResult without = RolloutIn(
      dir.path(), {"train", source + "/recipes/grpo_gsm8k_qwen3_0.6b.yaml",
                   "data.train_files=[" + source + "/tests/data/gsm8k_tiny.jsonl]", "data.val_files=[]",
                   "actor.model.path=" + dir.Path("model"), "trainer.device=cpu", "rollout.multi_turn.enable=true",
                   "rollout.multi_turn.tool_config_path=" + source + "/recipes/tools/gsm8k.yaml"});
  EXPECT_NE(without.exit_code, 0);
  EXPECT_THAT(without.output, ::testing::HasSubstr("gsm8k_tiny.jsonl:1: \"extra_info.tools_kwargs\" calc_gsm8k_reward."
                                                   "create_kwargs needs a ground_truth"));

  // A row that offers tools of its own besides the recipe's is refused, naming both.
  WriteRowsWithTools(dir.Path("gsm8k_tools.jsonl"));
  const testing::CommandResult both = RolloutIn(
      dir.path(), {"train", source + "/recipes/grpo_gsm8k_qwen3_0.6b.yaml",
                   "data.train_files=[" + dir.Path("gsm8k_tools.jsonl") + "]", "data.val_files=[]",
                   "actor.model.path=" + dir.Path("model"), "trainer.device=cpu",
                   "rollout.multi_turn.enable=true",
                   "rollout.multi_turn.tool_config_path=" + source + "/recipes/tools/calculator.yaml"});
  EXPECT_NE(both.exit_code, 0);
  EXPECT_THAT(both.output, ::testing::HasSubstr("offers tools of its own, but the prompts offer the tools of "
                                                "rollout.multi_turn.tool_config_path"));
}

}  // namespace
}  // namespace rollout
