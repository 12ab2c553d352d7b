// verl's copies and second spellings of a setting (rollout.prompt_length,
// actor.optim.clip_grad, optim.lr_scheduler_type, ...) in recipes and on the command line: they set the
// setting this schema holds, and one layer giving both spellings different values is
// an error that names both.
#include "common/verl_synonym_keys.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "common/recipe_loader.h"
#include "common/recipe_schema.h"
#include "tests/support/temp_dir.h"

namespace rollout::config {
namespace {

class VerlSynonymKeys : public ::testing::Test {
 protected:
  LoadedRecipe Load(const std::string& name, const std::string& text,
                    const std::vector<std::string>& overrides = {}) {
    absl::StatusOr<LoadedRecipe> loaded = LoadRecipe(files_.Write(name, text), overrides);
    EXPECT_TRUE(loaded.ok()) << loaded.status();
    return loaded.ok() ? *std::move(loaded) : LoadedRecipe{};
  }
  std::string Error(const std::string& text) {
    const absl::StatusOr<LoadedRecipe> loaded = LoadRecipe(files_.Write("x.yaml", text), {});
    EXPECT_EQ(loaded.status().code(), absl::StatusCode::kInvalidArgument) << loaded.status();
    return std::string(loaded.status().message());
  }

  testing::TempDir files_{"verl_synonym_keys"};
  const std::string path_ = files_.Path("x.yaml");
};

TEST_F(VerlSynonymKeys, EachSpellingSetsTheSettingItNames) {
  const LoadedRecipe set =
      Load("a.yaml", "actor_rollout_ref:\n  rollout:\n    prompt_length: 256\n    response_length: 128\n",
           {"actor_rollout_ref.actor.optim.clip_grad=0.5", "critic.optim.grad_clip=2"});
  EXPECT_EQ(set.recipe.data().max_prompt_length(), 256);
  EXPECT_EQ(set.recipe.data().max_response_length(), 128);
  EXPECT_EQ(set.recipe.actor().grad_clip(), 0.5);
  EXPECT_EQ(set.recipe.critic().grad_clip(), 2.0);
  EXPECT_EQ(SourceOf(set, "data.max_response_length"), files_.Path("a.yaml") + ":4");
  EXPECT_EQ(SourceOf(set, "actor.grad_clip"),
            "command line 'actor_rollout_ref.actor.optim.clip_grad=0.5'");
  EXPECT_TRUE(set.ignored_verl_keys.empty());
}

// verl's GSM8K SFT example (examples/sft/gsm8k/run_qwen_05_peft.sh) as its command line
// passes it, plus its config's machinery: the top-level model and optim are the actor's.
TEST_F(VerlSynonymKeys, VerlsSftTrainerCommandLineLoads) {
  const LoadedRecipe set = Load(
      "sft.yaml", "trainer:\n  mode: sft\nmodel:\n  fsdp_config:\n    model_dtype: fp32\n  trust_remote_code: false\n"
                  "use_remove_padding: false\nulysses_sequence_parallel_size: 1\ndata:\n  max_length: 1024\n",
      {"data.prompt_key=extra_info", "data.response_key=extra_info", "optim.lr=1e-4",
       "data.prompt_dict_keys=['question']", "+data.response_dict_keys=['answer']", "data.micro_batch_size_per_gpu=4",
       "model.partial_pretrain=/models/Qwen2.5-0.5B-Instruct", "trainer.total_epochs=1", "model.lora_rank=32",
       "model.lora_alpha=16", "model.target_modules=all-linear", "model.enable_gradient_checkpointing=true",
       "optim.warmup_steps_ratio=0.1", "optim.clip_grad=1.0", "optim.lr_scheduler=cosine", "optim.betas=[0.9,0.95]",
       "trainer.max_ckpt_to_keep=2", "data.messages_key=conversation", "+data.ignore_input_ids_mismatch=True"});
  const Recipe& recipe = set.recipe;
  EXPECT_EQ(recipe.actor().model().path(), "/models/Qwen2.5-0.5B-Instruct");
  EXPECT_EQ(recipe.actor().optim().lr(), 1e-4);
  EXPECT_EQ(recipe.actor().ppo_micro_batch_size_per_gpu(), 4);
  EXPECT_EQ(recipe.actor().model().lora_rank(), 32);
  EXPECT_TRUE(recipe.actor().model().enable_gradient_checkpointing());
  EXPECT_EQ(recipe.actor().optim().lr_warmup_steps_ratio(), 0.1);
  EXPECT_EQ(recipe.actor().grad_clip(), 1.0);
  EXPECT_EQ(recipe.actor().optim().warmup_style(), "cosine");
  EXPECT_EQ(recipe.actor().optim().betas(1), 0.95);
  EXPECT_EQ(recipe.trainer().max_actor_ckpt_to_keep(), 2);
  EXPECT_EQ(recipe.data().prompt_dict_keys(0), "question");
  EXPECT_EQ(recipe.data().response_dict_keys(0), "answer");
  EXPECT_EQ(recipe.data().multiturn().messages_key(), "conversation");
  EXPECT_EQ(recipe.data().max_length(), 1024);  // the row's whole length, as verl's SFT dataset bounds it
  EXPECT_EQ(SourceOf(set, "actor.model.path"), "command line 'model.partial_pretrain=/models/Qwen2.5-0.5B-Instruct'");
  ASSERT_EQ(set.ignored_verl_keys.size(), 5u);
  EXPECT_NE(set.ignored_verl_keys[0].find("verl's 'actor.model.fsdp_config' at "), std::string::npos)
      << set.ignored_verl_keys[0];
  EXPECT_NE(Error("model:\n  nope: 1\n").find("unknown key 'actor.model.nope' at " + path_ + ":2"), std::string::npos);
}

// verl's DAPO recipe: the overlong buffer under reward_model, its reward manager "dapo".
TEST_F(VerlSynonymKeys, DaposRewardModelKeysSetTheOverlongBuffer) {
  const LoadedRecipe set =
      Load("dapo.yaml", "reward_model:\n  reward_manager: dapo\n  overlong_buffer:\n    enable: true\n    len: 512\n"
                        "    log: false\n",
           {"reward_model.overlong_buffer.penalty_factor=0.5"});
  EXPECT_TRUE(set.recipe.reward().overlong_buffer().enable());
  EXPECT_EQ(set.recipe.reward().overlong_buffer().len(), 512);
  EXPECT_EQ(set.recipe.reward().overlong_buffer().penalty_factor(), 0.5);
  EXPECT_EQ(SourceOf(set, "reward.overlong_buffer.len"), files_.Path("dapo.yaml") + ":5");
  ASSERT_EQ(set.ignored_verl_keys.size(), 2u);  // reward_manager and overlong_buffer.log
}

// The same buffer as the DAPO manager's keyword arguments (verl's Qwen3 GSPO examples).
TEST_F(VerlSynonymKeys, DaposRewardKwargsSetTheOverlongBufferToo) {
  const LoadedRecipe set = Load(
      "kwargs.yaml", "data:\n  max_response_length: 3072\n",
      {"reward_model.reward_manager=dapo", "+reward_model.reward_kwargs.overlong_buffer_cfg.enable=True",
       "+reward_model.reward_kwargs.overlong_buffer_cfg.len=2048",
       "+reward_model.reward_kwargs.overlong_buffer_cfg.penalty_factor=1.0",
       "+reward_model.reward_kwargs.overlong_buffer_cfg.log=False", "+reward_model.reward_kwargs.max_resp_len=3072"});
  EXPECT_TRUE(set.recipe.reward().overlong_buffer().enable());
  EXPECT_EQ(set.recipe.reward().overlong_buffer().len(), 2048);
  EXPECT_EQ(set.recipe.reward().overlong_buffer().penalty_factor(), 1.0);
  EXPECT_EQ(set.recipe.data().max_response_length(), 3072);
  EXPECT_EQ(set.ignored_verl_keys.size(), 2u);  // reward_manager and overlong_buffer_cfg.log
  // One value serves the response length and the manager's: two in one layer are an error.
  const std::string two = Error("data:\n  max_response_length: 3072\nreward_model:\n  reward_kwargs:\n    max_resp_len: 1024\n");
  EXPECT_NE(two.find("max_resp_len"), std::string::npos) << two;
}

TEST_F(VerlSynonymKeys, ALaterLayerWinsWhicheverSpellingItUses) {
  EXPECT_EQ(Load("a.yaml", "actor:\n  grad_clip: 1.0\n", {"actor.optim.clip_grad=0.3"})
                .recipe.actor()
                .grad_clip(),
            0.3);
  EXPECT_EQ(Load("b.yaml", "rollout:\n  response_length: 300\n", {"data.max_response_length=200"})
                .recipe.data()
                .max_response_length(),
            200);
}

TEST_F(VerlSynonymKeys, BothSpellingsInOneLayerMustAgree) {
  EXPECT_EQ(Load("a.yaml", "actor:\n  grad_clip: 1\n  optim:\n    clip_grad: 1.0\n")
                .recipe.actor()
                .grad_clip(),
            1.0);
  EXPECT_EQ(Error("data:\n  max_response_length: 512\nrollout:\n  response_length: 1024\n"),
            "'data.max_response_length' at " + path_ + ":2 (512) and 'rollout.response_length' at " +
                path_ + ":4 (1024) are one setting here, 'data.max_response_length': give it one value");
  EXPECT_EQ(Error("actor:\n  optim:\n    clip_grad: 0.5\n    grad_clip: 1.0\n"),
            "'actor.optim.clip_grad' at " + path_ + ":3 (0.5) and 'actor.optim.grad_clip' at " + path_ +
                ":4 (1.0) are one setting here, 'actor.grad_clip': give it one value");
}

TEST_F(VerlSynonymKeys, ANullUnderOneSpellingLeavesTheOthersValue) {
  // verl's optimizer block as its newer configs print it: the deprecated spellings null.
  const LoadedRecipe block = Load("a.yaml",
                                  "actor_rollout_ref:\n"
                                  "  actor:\n"
                                  "    optim:\n"
                                  "      optimizer: AdamW\n"
                                  "      lr: 1.0e-06\n"
                                  "      clip_grad: 0.5\n"
                                  "      lr_scheduler_type: cosine\n"
                                  "      warmup_style: null\n"
                                  "      grad_clip: null\n");
  EXPECT_EQ(block.recipe.actor().optim().warmup_style(), "cosine");
  EXPECT_EQ(block.recipe.actor().grad_clip(), 0.5);
  EXPECT_EQ(SourceOf(block, "actor.optim.warmup_style"), files_.Path("a.yaml") + ":7");
  // The null first, the value after it.
  EXPECT_EQ(Load("b.yaml", "critic:\n  optim:\n    warmup_style: null\n    lr_scheduler_type: cosine\n")
                .recipe.critic()
                .optim()
                .warmup_style(),
            "cosine");
  // A later layer's null still resets it.
  EXPECT_EQ(Load("c.yaml", "actor:\n  optim:\n    lr_scheduler_type: cosine\n", {"actor.optim.warmup_style=null"})
                .recipe.actor()
                .optim()
                .warmup_style(),
            "constant");
  EXPECT_EQ(Error("actor:\n  optim:\n    warmup_style: constant\n    lr_scheduler_type: cosine\n"),
            "'actor.optim.warmup_style' at " + path_ + ":3 (constant) and 'actor.optim.lr_scheduler_type' at " +
                path_ + ":4 (cosine) are one setting here, 'actor.optim.warmup_style': give it one value");
}

TEST_F(VerlSynonymKeys, ValuesAreCheckedAsTheSettingsOwn) {
  EXPECT_EQ(Error("rollout:\n  prompt_length: zero\n"),
            "wrong type for 'data.max_prompt_length' at " + path_ + ":2: expected an integer, got 'zero'");
  EXPECT_EQ(Error("actor:\n  optim:\n    clip_grad: 0\n"),
            "'actor.grad_clip' at " + path_ + ":3 must be > 0, got 0");
}

// Whether canonical `key` is a field of the Recipe schema.
bool IsSchemaField(const std::string& key) {
  const google::protobuf::Descriptor* message = Recipe::descriptor();
  const std::vector<std::string> segments = absl::StrSplit(key, '.');
  for (size_t i = 0; i < segments.size(); ++i) {
    if (message == nullptr) return false;
    const google::protobuf::FieldDescriptor* field = FindRecipeField(message, segments[i]);
    if (field == nullptr) return false;
    message = field->message_type();
  }
  return true;
}

TEST(VerlSynonymKeyTable, KeysAreNotSchemaFieldsAndTargetsAre) {
  for (const std::string key : {"actor.optim.clip_grad", "actor.optim.grad_clip", "critic.optim.clip_grad",
                                "critic.optim.grad_clip", "actor.optim.lr_scheduler_type",
                                "critic.optim.lr_scheduler_type", "rollout.prompt_length", "rollout.response_length"}) {
    const VerlSynonymKey* entry = FindVerlSynonymKey(key);
    ASSERT_NE(entry, nullptr) << key;
    EXPECT_FALSE(IsSchemaField(key)) << key;
    EXPECT_TRUE(IsSchemaField(entry->target)) << key;
    EXPECT_TRUE(IsVerlSynonymTarget(entry->target)) << key;
    EXPECT_FALSE(IsVerlSynonymTarget(key)) << key;
  }
  EXPECT_EQ(FindVerlSynonymKey("actor.grad_clip"), nullptr);
  EXPECT_EQ(FindVerlSynonymKey("rollout.n"), nullptr);
}

}  // namespace
}  // namespace rollout::config
