// verl's keys for its own machinery (FSDP, vLLM, Ray, ...) in recipes and on the
// command line: accepted and listed where they change nothing here, refused with the
// reason where they would, unknown where the table does not list them.
#include "common/verl_inert_keys.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/recipe_loader.h"
#include "tests/support/temp_dir.h"

namespace rollout::config {
namespace {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class VerlInertKeys : public ::testing::Test {
 protected:
  absl::StatusOr<LoadedRecipe> Load(const std::vector<std::string>& overrides, const std::string& text = "") {
    return LoadRecipe(files_.Write("x.yaml", text), overrides);
  }
  std::string Error(const std::vector<std::string>& overrides) {
    const absl::StatusOr<LoadedRecipe> loaded = Load(overrides);
    EXPECT_EQ(loaded.status().code(), absl::StatusCode::kInvalidArgument) << loaded.status();
    return std::string(loaded.status().message());
  }

  testing::TempDir files_{"verl_inert_keys"};
};

// Part of verl's GSM8K GRPO example (examples/grpo_trainer), as users pass it.
TEST_F(VerlInertKeys, AVerlCommandLineLoadsAndListsWhatItIgnores) {
  const absl::StatusOr<LoadedRecipe> loaded = Load(
      {"algorithm.adv_estimator=grpo", "actor_rollout_ref.actor.optim.lr=1e-6",
       "actor_rollout_ref.model.use_remove_padding=True", "actor_rollout_ref.actor.fsdp_config.param_offload=False",
       "actor_rollout_ref.actor.fsdp_config.optimizer_offload=False", "actor_rollout_ref.rollout.tensor_model_parallel_size=1",
       "actor_rollout_ref.rollout.name=vllm", "actor_rollout_ref.rollout.n=5",
       "actor_rollout_ref.ref.fsdp_config.param_offload=True", "reward_model.enable=False",
       "custom_reward_function.path=null", "actor_rollout_ref.hybrid_engine=True"});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_DOUBLE_EQ(loaded->recipe.actor().optim().lr(), 1e-6);
  EXPECT_EQ(loaded->recipe.rollout().n(), 5);
  EXPECT_EQ(loaded->recipe.rollout().name(), "native");
  EXPECT_FALSE(loaded->recipe.reward_model().enable());
  ASSERT_EQ(loaded->ignored_verl_keys.size(), 8u);
  EXPECT_EQ(loaded->ignored_verl_keys[0],
            "verl's 'actor.model.use_remove_padding' at command line "
            "'actor_rollout_ref.model.use_remove_padding=True' is ignored: verl's unpadded (varlen) forward, an "
            "efficiency switch; results do not depend on it");
  EXPECT_THAT(loaded->ignored_verl_keys[4], HasSubstr("'rollout.name' at command line"));
  EXPECT_THAT(loaded->ignored_verl_keys[4], HasSubstr("this project's own engine (rollout.name: native)"));
  EXPECT_THAT(loaded->ignored_verl_keys[7], HasSubstr("'actor_rollout_ref.hybrid_engine'"));
}

// Part of verl's Megatron GRPO examples (examples/grpo_trainer/*megatron*.sh): their
// parallelism and offloading load; starting from random weights is refused.
TEST_F(VerlInertKeys, AVerlMegatronCommandLineLoads) {
  const absl::StatusOr<LoadedRecipe> loaded = Load(
      {"actor_rollout_ref.actor.strategy=megatron", "actor_rollout_ref.actor.megatron.param_offload=True",
       "actor_rollout_ref.actor.megatron.tensor_model_parallel_size=8",
       "+actor_rollout_ref.actor.megatron.override_transformer_config.recompute_method=uniform",
       "actor_rollout_ref.ref.megatron.pipeline_model_parallel_size=1", "critic.megatron.context_parallel_size=1",
       "actor_rollout_ref.actor.load_weight=True", "actor_rollout_ref.rollout.over_sample_rate=0.1"});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->ignored_verl_keys.size(), 7u);
  EXPECT_THAT(loaded->ignored_verl_keys[1], HasSubstr("'actor.megatron' at command line"));
  EXPECT_DOUBLE_EQ(loaded->recipe.rollout().over_sample_rate(), 0.1);  // a key of its own now
  EXPECT_THAT(Error({"actor_rollout_ref.actor.load_weight=False"}),
              HasSubstr("starting from random weights is not offered"));
}

// verl serves its rollout asynchronously by default (rollout.mode: async; sync is
// deprecated there): both load, as the engine here generates the same responses.
TEST_F(VerlInertKeys, EitherRolloutModeLoads) {
  for (const char* mode : {"async", "sync"}) {
    const absl::StatusOr<LoadedRecipe> loaded = Load({std::string("actor_rollout_ref.rollout.mode=") + mode});
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    ASSERT_EQ(loaded->ignored_verl_keys.size(), 1u);
    EXPECT_THAT(loaded->ignored_verl_keys[0], HasSubstr("the engine here generates in the rollout worker"));
  }
}

// verl's DAPO recipes raise the model's position limit for their 8k-token responses.
TEST_F(VerlInertKeys, ARaisedPositionLimitLoads) {
  const absl::StatusOr<LoadedRecipe> loaded = Load({"+actor_rollout_ref.model.override_config.max_position_embeddings=32768"});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_EQ(loaded->ignored_verl_keys.size(), 1u);
  EXPECT_THAT(loaded->ignored_verl_keys[0], HasSubstr("positions here are not bounded by it"));
}

// verl's pure-bfloat16 training (fsdp_config.model_dtype: bf16) is ignored with what
// this project does instead: float32 masters, as verl's default.
TEST_F(VerlInertKeys, TheActorsModelDtypeIsIgnoredWithTheTrainingPrecision) {
  const absl::StatusOr<LoadedRecipe> loaded = Load({"actor_rollout_ref.actor.fsdp_config.model_dtype=bf16"});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_EQ(loaded->ignored_verl_keys.size(), 1u);
  EXPECT_THAT(loaded->ignored_verl_keys[0], HasSubstr("always trains as verl's default, on float32 master weights"));
}

// From verl's PPO examples: the critic's, the data's and the rollout's machinery.
TEST_F(VerlInertKeys, AVerlPpoCommandLineLoads) {
  const absl::StatusOr<LoadedRecipe> loaded =
      Load({"algorithm.adv_estimator=gae", "critic.model.use_remove_padding=True",
            "critic.model.fsdp_config.param_offload=False", "critic.ppo_micro_batch_size_per_gpu=4",
            "critic.ppo_micro_batch_size=null", "critic.rollout_n=8", "critic.strategy=fsdp",
            "data.dataloader_num_workers=8", "data.custom_cls.path=null", "algorithm.use_pf_ppo=False",
            "actor_rollout_ref.rollout.multi_turn.enable=False", "actor_rollout_ref.rollout.calculate_log_probs=True"});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->recipe.critic().ppo_micro_batch_size_per_gpu(), 4);
  EXPECT_FALSE(loaded->recipe.algorithm().use_pf_ppo());  // a key of its own, not ignored
  EXPECT_FALSE(loaded->recipe.rollout().multi_turn().enable());  // a key of its own
  EXPECT_EQ(loaded->ignored_verl_keys.size(), 8u);
  EXPECT_THAT(Error({"actor_rollout_ref.rollout.multi_turn.max_turn=3"}),
              HasSubstr("unknown key 'rollout.multi_turn.max_turn'"));
}

// verl's newer optimizer, profiler and agent-loop keys.
TEST_F(VerlInertKeys, OptimizerProfilerAndAgentLoopKeysLoad) {
  const absl::StatusOr<LoadedRecipe> loaded =
      Load({"actor_rollout_ref.actor.optim.optimizer_impl=torch.optim",
            "actor_rollout_ref.actor.optim.override_optimizer_config=null",
            "actor_rollout_ref.actor.optim.zero_indexed_step=True", "actor_rollout_ref.model.use_liger=True",
            "actor_rollout_ref.actor.profiler.enable=False", "actor_rollout_ref.rollout.agent.num_workers=8",
            "global_profiler.tool=null"});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->ignored_verl_keys.size(), 7u);
  EXPECT_THAT(loaded->ignored_verl_keys[5], HasSubstr("verl's agent loop"));
  EXPECT_THAT(Error({"critic.optim.zero_indexed_step=False"}), HasSubstr("counting from 1 is not offered"));
  EXPECT_THAT(Error({"actor_rollout_ref.actor.optim.override_optimizer_config={foreach: false}"}),
              HasSubstr("cannot be a map here"));
}

// optim.optimizer is a key of its own: torch's AdamW (the default) or Adam, or Megatron's
// adam, compared as written; other optimizer classes are refused.
TEST_F(VerlInertKeys, TheOptimizerIsAKeyOfItsOwn) {
  const absl::StatusOr<LoadedRecipe> loaded =
      Load({"actor_rollout_ref.actor.optim.optimizer=Adam", "critic.optim.optimizer=adam"});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->recipe.actor().optim().optimizer(), "Adam");
  EXPECT_EQ(loaded->recipe.critic().optim().optimizer(), "adam");
  EXPECT_TRUE(loaded->ignored_verl_keys.empty());
  EXPECT_EQ(Load({}).value().recipe.actor().optim().optimizer(), "AdamW");
  EXPECT_THAT(Error({"actor_rollout_ref.actor.optim.optimizer=AdamW8bit"}),
              HasSubstr("must be one of AdamW|Adam|adam|adamw; got 'AdamW8bit'"));
  EXPECT_THAT(Error({"critic.optim.optimizer=ADAM"}), HasSubstr("must be one of AdamW|Adam|adam|adamw"));
}

// verl's actor.loss_scale_factor: null (the response width) or a divisor of at least 1.
TEST_F(VerlInertKeys, TheLossScaleFactorIsAKeyOfItsOwn) {
  EXPECT_FALSE(Load({"actor_rollout_ref.actor.loss_scale_factor=null"}).value().recipe.actor().has_loss_scale_factor());
  EXPECT_EQ(Load({"actor_rollout_ref.actor.loss_scale_factor=4096"}).value().recipe.actor().loss_scale_factor(), 4096);
  EXPECT_THAT(Error({"actor_rollout_ref.actor.loss_scale_factor=0"}), HasSubstr("must be >= 1, got 0"));
}

// rollout.agent.default_agent_loop picks the loop of rows naming none; the keys of
// verl's own agent loop classes and server are refused unless unset.
TEST_F(VerlInertKeys, TheDefaultAgentLoopIsAKeyOfItsOwn) {
  const absl::StatusOr<LoadedRecipe> loaded =
      Load({"actor_rollout_ref.rollout.agent.default_agent_loop=single_turn_agent",
            "actor_rollout_ref.rollout.agent.agent_loop_config_path=null",
            "actor_rollout_ref.rollout.agent.custom_async_server.path=null"});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->recipe.rollout().agent().default_agent_loop(), "single_turn_agent");
  EXPECT_EQ(loaded->ignored_verl_keys.size(), 2u);
  EXPECT_THAT(Error({"actor_rollout_ref.rollout.agent.default_agent_loop=react_agent"}),
              HasSubstr("tool_agent|single_turn_agent"));
  EXPECT_THAT(Error({"actor_rollout_ref.rollout.agent.agent_loop_config_path=loops.yaml"}),
              HasSubstr("verl's agent loop classes of your own, which are Python"));
}

TEST_F(VerlInertKeys, TheNestedYamlFormIsIgnoredWithItsLines) {
  const absl::StatusOr<LoadedRecipe> loaded = Load({},
                                                   "actor_rollout_ref:\n"
                                                   "  hybrid_engine: true\n"
                                                   "  actor:\n"
                                                   "    strategy: fsdp\n"
                                                   "    fsdp_config:\n"
                                                   "      param_offload: false\n"
                                                   "  rollout:\n"
                                                   "    name: sglang\n"
                                                   "    n: 4\n"
                                                   "reward_model:\n"
                                                   "  enable: false\n"
                                                   "  reward_manager: naive\n"
                                                   "ray_init:\n"
                                                   "  num_cpus: null\n");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->recipe.rollout().n(), 4);
  std::vector<std::string> lines;
  for (const std::string& line : loaded->ignored_verl_keys) lines.push_back(line.substr(0, line.find(" is ignored")));
  const std::string at = " at " + files_.Path("x.yaml") + ":";
  EXPECT_THAT(lines, ElementsAre("verl's 'actor_rollout_ref.hybrid_engine'" + at + "2",
                                 "verl's 'actor.strategy'" + at + "4", "verl's 'actor.fsdp_config'" + at + "5",
                                 "verl's 'rollout.name'" + at + "8", "verl's 'reward_model.reward_manager'" + at + "12", "verl's 'ray_init'" + at + "13"));
}

TEST_F(VerlInertKeys, ValuesThatAskForWhatIsNotHereAreErrors) {
  EXPECT_EQ(Error({"actor_rollout_ref.rollout.tensor_model_parallel_size=2"}),
            "verl's 'rollout.tensor_model_parallel_size' at command line "
            "'actor_rollout_ref.rollout.tensor_model_parallel_size=2' cannot be 2 here: tensor parallelism is not "
            "implemented; each rollout worker holds a whole model (it may be 1)");
  EXPECT_THAT(Error({"reward_model.enable_resource_pool=True"}),
              HasSubstr("the reward model runs on the pool placement.reward_model names"));
  EXPECT_THAT(Error({"custom_reward_function.path=my_reward.py"}),
              HasSubstr("cannot be my_reward.py here: Python reward functions cannot be loaded; use a built-in "
                        "(reward.name) or a C++ plug-in (reward.plugin) (it may be null)"));
  EXPECT_THAT(Error({"actor_rollout_ref.model.override_config={rope_theta: 5}"}),
              HasSubstr("verl's 'actor.model.override_config.rope_theta' at command line "
                        "'actor_rollout_ref.model.override_config={rope_theta: 5}' cannot be set here: "
                        "changing a model's HF config at load is not implemented (under "
                        "'actor.model.override_config' the keys that ask for nothing here may be set, and are ignored: "
                        "attention_dropout, attn_implementation, embd_pdrop, max_position_embeddings, resid_pdrop)"));
  // A real key keeps its own checks: rollout.name's other values.
  EXPECT_THAT(Error({"actor_rollout_ref.rollout.name=trtllm"}), HasSubstr("must be one of native; got 'trtllm'"));
}

// The reward model part of verl's PPO example with a reward model
// (examples/ppo_trainer/run_qwen2-7b_rm.sh).
TEST_F(VerlInertKeys, VerlsRewardModelExampleLoads) {
  const absl::StatusOr<LoadedRecipe> loaded =
      Load({"data.return_raw_chat=True", "reward_model.enable=True",
            "reward_model.model.path=sfairXC/FsfairX-LLaMA3-RM-v0.1", "reward_model.model.use_remove_padding=True",
            "reward_model.model.fsdp_config.param_offload=True", "reward_model.micro_batch_size_per_gpu=32",
            "reward_model.use_dynamic_bsz=True", "reward_model.forward_max_token_len_per_gpu=98304"});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const RewardModelConfig& reward_model = loaded->recipe.reward_model();
  EXPECT_TRUE(reward_model.enable());
  EXPECT_EQ(reward_model.model().path(), "sfairXC/FsfairX-LLaMA3-RM-v0.1");
  EXPECT_EQ(reward_model.micro_batch_size_per_gpu(), 32);
  EXPECT_TRUE(reward_model.use_dynamic_bsz());
  EXPECT_EQ(reward_model.forward_max_token_len_per_gpu(), 98304);
  ASSERT_EQ(loaded->ignored_verl_keys.size(), 3u);
  EXPECT_THAT(loaded->ignored_verl_keys[0], HasSubstr("verl's 'data.return_raw_chat' at command line"));
}

// verl's reward_model.model.input_tokenizer: its default (the actor's tokenizer) is the
// empty setting here, and null, which turns re-rendering off, is kept apart from it.
TEST_F(VerlInertKeys, TheRewardModelsInputTokenizerKeepsNullApartFromUnset) {
  EXPECT_EQ(Load({"reward_model.enable=True"})->recipe.reward_model().model().input_tokenizer(), "");
  EXPECT_EQ(Load({"reward_model.model.input_tokenizer=null"})->recipe.reward_model().model().input_tokenizer(), "null");
  EXPECT_EQ(Load({"reward_model.model.input_tokenizer=tok/dir"})->recipe.reward_model().model().input_tokenizer(),
            "tok/dir");
  // Another field's null still resets it to its default.
  EXPECT_EQ(Load({"reward_model.model.dtype=float32", "reward_model.model.dtype=null"})
                ->recipe.reward_model().model().dtype(),
            "bfloat16");
}

// The attention implementation many verl scripts pick for transformers
// (`+actor_rollout_ref.model.override_config.attn_implementation=sdpa`).
TEST_F(VerlInertKeys, TheAttentionImplementationInOverrideConfigIsIgnored) {
  const absl::StatusOr<LoadedRecipe> loaded =
      Load({"+actor_rollout_ref.model.override_config.attn_implementation=sdpa",
            "++critic.model.override_config.attn_implementation=eager"});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_EQ(loaded->ignored_verl_keys.size(), 2u);
  EXPECT_THAT(loaded->ignored_verl_keys[0],
              HasSubstr("verl's 'actor.model.override_config.attn_implementation' at command line"));
  EXPECT_THAT(loaded->ignored_verl_keys[1], HasSubstr("transformers' attention implementation"));
}

// verl's DAPO recipe turns the HF config's dropouts off; the models here have none.
TEST_F(VerlInertKeys, ZeroDropoutsInOverrideConfigAreIgnored) {
  const absl::StatusOr<LoadedRecipe> loaded =
      Load({"+actor_rollout_ref.model.override_config.attention_dropout=0.",
            "+actor_rollout_ref.model.override_config.embd_pdrop=0.", "+actor_rollout_ref.model.override_config.resid_pdrop=0"});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->ignored_verl_keys.size(), 3u);
  EXPECT_THAT(Error({"+actor_rollout_ref.model.override_config.attention_dropout=0.1"}),
              HasSubstr("cannot be 0.1 here: a dropout probability in the model's HF config; the models here apply no "
                        "dropout (LoRA's aside), as 0 asks (it may be 0)"));
}

TEST_F(VerlInertKeys, KeysTheTableDoesNotListStayUnknown) {
  EXPECT_THAT(Error({"reward_model.micro_batchsize=8"}),
              AllOf(HasSubstr("unknown key 'reward_model.micro_batchsize' at command line "
                              "'reward_model.micro_batchsize=8'"),
                    HasSubstr("did you mean 'reward_model.micro_batch_size'?")));
  EXPECT_EQ(Error({"reward_model.reward_kwargs.x=1"}),
            "unknown key 'reward_model.reward_kwargs.x' at command line 'reward_model.reward_kwargs.x=1'; valid "
            "keys under 'reward_model.reward_kwargs': max_resp_len, overlong_buffer_cfg");
  EXPECT_THAT(Error({"reward_model.reward_args.x=1"}),
              HasSubstr("unknown key 'reward_model.reward_args' at command line 'reward_model.reward_args.x=1' "
                        "\xE2\x80\x94 did you mean 'reward_model.reward_kwargs'?"));
  EXPECT_THAT(Error({"actor_rollout_ref.actor.fsdp_confg.param_offload=False"}),
              HasSubstr("unknown key 'actor.fsdp_confg'"));
}

// Hydra's `_target_` entries name the Python classes verl builds its config into.
TEST_F(VerlInertKeys, TargetEntriesAreSkippedWithOneNote) {
  const absl::StatusOr<LoadedRecipe> loaded = Load({},
                                                   "actor_rollout_ref:\n"
                                                   "  actor:\n"
                                                   "    _target_: verl.workers.config.FSDPActorConfig\n"
                                                   "    optim:\n"
                                                   "      _target_: verl.workers.config.FSDPOptimizerConfig\n"
                                                   "      lr: 2.0e-06\n"
                                                   "algorithm:\n"
                                                   "  _target_: verl.trainer.config.AlgoConfig\n");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_DOUBLE_EQ(loaded->recipe.actor().optim().lr(), 2e-6);
  EXPECT_THAT(loaded->ignored_verl_keys,
              ElementsAre(AllOf(HasSubstr("verl's '_target_' entries (at "),
                                HasSubstr("x.yaml:3 and 2 more) are ignored: the Python classes Hydra builds"))));
}

// verl's copies of a setting by reference: a synonym's copy of the key it spells sets
// nothing; an ignored key's reference is checked once resolved.
TEST_F(VerlInertKeys, ReferencesInVerlKeysResolve) {
  const absl::StatusOr<LoadedRecipe> loaded =
      Load({"data.max_response_length=300"},
           "actor_rollout_ref:\n"
           "  rollout:\n"
           "    response_length: ${oc.select:data.max_response_length,512}\n"
           "    prompt_length: ${data.max_prompt_length}\n"
           "  model:\n"
           "    external_lib: null\n"
           "critic:\n"
           "  model:\n"
           "    external_lib: ${oc.select:actor_rollout_ref.model.external_lib,null}\n");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->recipe.data().max_response_length(), 300);
  ASSERT_EQ(loaded->ignored_verl_keys.size(), 2u);
  EXPECT_THAT(loaded->ignored_verl_keys[1], HasSubstr("verl's 'critic.model.external_lib' at "));
  EXPECT_THAT(Error({"reward_model.sandbox_fusion.url=${data.prompt_key}"}),
              HasSubstr("verl's 'reward_model.sandbox_fusion.url' at command line "
                        "'reward_model.sandbox_fusion.url=${data.prompt_key}' cannot be prompt "
                        "(${data.prompt_key}) here: verl's Sandbox Fusion service"));
}

// Everything verl prints for a PPO run loads: each key a setting here, a verl key
// ignored with its reason, or a copy by reference, which follows the setting it copies.
TEST(VerlPrintedConfig, LoadsWithItsCopiesFollowingTheirSettings) {
  const absl::StatusOr<LoadedRecipe> loaded =
      LoadRecipe("tests/data/verl_ppo_trainer_printed.yaml",
                 {"actor_rollout_ref.actor.use_dynamic_bsz=true",
                  "actor_rollout_ref.actor.ppo_max_token_len_per_gpu=20000"});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const Recipe& recipe = loaded->recipe;
  EXPECT_EQ(recipe.algorithm().adv_estimator(), "grpo");
  EXPECT_EQ(recipe.rollout().n(), 8);
  EXPECT_EQ(recipe.actor().model().path(), "models/Qwen2.5-0.5B-Instruct");
  EXPECT_EQ(recipe.critic().model().tokenizer_path(), "models/Qwen2.5-0.5B-Instruct");
  EXPECT_TRUE(recipe.ref().log_prob_use_dynamic_bsz());
  EXPECT_EQ(recipe.rollout().log_prob_max_token_len_per_gpu(), 20000);
  EXPECT_EQ(recipe.critic().ppo_mini_batch_size(), 64);
  EXPECT_EQ(recipe.critic().forward_max_token_len_per_gpu(), 32768);
  EXPECT_THAT(recipe.actor().checkpoint().load_contents(), ElementsAre("model", "optimizer", "extra"));
  EXPECT_EQ(recipe.data().max_prompt_length(), 512);
  EXPECT_FALSE(recipe.reward_model().enable());
  EXPECT_EQ(recipe.reward_model().model().input_tokenizer(), "models/Qwen2.5-0.5B-Instruct");
  EXPECT_EQ(recipe.reward_model().forward_max_token_len_per_gpu(), 32768);
  EXPECT_EQ(recipe.reward_model().max_length(), 0);
  EXPECT_THAT(loaded->ignored_verl_keys, Contains(HasSubstr("verl's '_target_' entries")));
  EXPECT_THAT(loaded->ignored_verl_keys, Contains(HasSubstr("verl's 'ref.strategy' at ")));
}

// verl 0.7's printed config, with its reward settings moved to a top-level `reward`
// section and null placeholders at their old places.
TEST(VerlPrintedConfig, Verl07LoadsWithItsRewardSectionAndPlaceholders) {
  const absl::StatusOr<LoadedRecipe> loaded = LoadRecipe("tests/data/verl_0.7_ppo_trainer_printed.yaml", {});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const Recipe& recipe = loaded->recipe;
  EXPECT_EQ(recipe.algorithm().adv_estimator(), "grpo");
  EXPECT_EQ(recipe.rollout().n(), 8);
  EXPECT_EQ(recipe.actor().ppo_micro_batch_size_per_gpu(), 16);
  EXPECT_EQ(recipe.actor().optim().optimizer(), "AdamW");
  EXPECT_EQ(recipe.actor().optim().warmup_style(), "constant");
  EXPECT_FALSE(recipe.actor().has_loss_scale_factor());
  EXPECT_EQ(recipe.data().train_max_samples(), -1);
  EXPECT_EQ(recipe.data().val_max_samples(), 500);
  EXPECT_EQ(recipe.data().max_response_length(), 1024);
  EXPECT_EQ(recipe.reward().num_workers(), 8);
  EXPECT_FALSE(recipe.reward_model().enable());
  EXPECT_EQ(recipe.critic().model().tokenizer_path(), "models/Qwen2.5-0.5B-Instruct");
  EXPECT_THAT(loaded->ignored_verl_keys, Contains(HasSubstr("verl's 'reward.reward_manager.name' at ")));
  EXPECT_THAT(loaded->ignored_verl_keys, Contains(HasSubstr("verl's 'rollout.logprobs_mode' at ")));
  // The new section's reward model is the reward_model.* settings.
  const absl::StatusOr<LoadedRecipe> with_model = LoadRecipe(
      "tests/data/verl_0.7_ppo_trainer_printed.yaml",
      {"reward.reward_model.enable=true", "reward.reward_model.model_path=models/rm"});
  ASSERT_TRUE(with_model.ok()) << with_model.status();
  EXPECT_TRUE(with_model->recipe.reward_model().enable());
  EXPECT_EQ(with_model->recipe.reward_model().model().path(), "models/rm");
  EXPECT_THAT(LoadRecipe("tests/data/verl_0.7_ppo_trainer_printed.yaml", {"reward.reward_manager.name=prime"})
                  .status()
                  .message(),
              HasSubstr("cannot be prime here"));
}

TEST(VerlInertKeyTable, EntriesAcceptTheirValuesAndNameTheirGroups) {
  const VerlInertKey* tp = FindVerlInertKey("rollout.tensor_model_parallel_size");
  ASSERT_NE(tp, nullptr);
  EXPECT_TRUE(VerlInertKeyAccepts(*tp, "1"));
  EXPECT_FALSE(VerlInertKeyAccepts(*tp, "2"));
  const VerlInertKey* dropout = FindVerlInertKey("actor.model.override_config.attention_dropout");
  ASSERT_NE(dropout, nullptr);
  EXPECT_TRUE(VerlInertKeyAccepts(*dropout, "0.0"));
  EXPECT_TRUE(VerlInertKeyAccepts(*dropout, "0."));
  EXPECT_FALSE(VerlInertKeyAccepts(*dropout, "0.1"));
  EXPECT_FALSE(VerlInertKeyAccepts(*dropout, "none"));
  const VerlInertKey* fsdp = FindVerlInertKey("actor.fsdp_config");
  ASSERT_NE(fsdp, nullptr);
  EXPECT_TRUE(VerlInertKeyAccepts(*fsdp, "a map"));
  EXPECT_EQ(FindVerlInertKey("actor.optim.lr"), nullptr);
  EXPECT_TRUE(HasVerlInertKeysUnder("custom_reward_function"));
  EXPECT_FALSE(HasVerlInertKeysUnder("rollout.val_kwargs"));
  EXPECT_THAT(VerlInertKeysUnder("actor.optim"),
              ElementsAre("optimizer_impl", "override_optimizer_config", "use_checkpoint_opt_param_scheduler",
                          "weight_decay_incr_style", "zero_indexed_step"));
  EXPECT_THAT(VerlInertKeysUnder("custom_reward_function"), ElementsAre("name", "path"));
}

}  // namespace
}  // namespace rollout::config
