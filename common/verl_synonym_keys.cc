#include "common/verl_synonym_keys.h"

#include <vector>

#include "common/recipe_schema.h"

namespace rollout::config {
namespace {

const std::vector<VerlSynonymKey>& Table() {
  static const auto* table = new std::vector<VerlSynonymKey>{
      // verl's OptimizerConfig clips the gradient norm (Megatron's optimizer reads it; its
      // FSDP actor reads actor.grad_clip, which verl's optimizer config also takes).
      {"actor.optim.clip_grad", "actor.grad_clip"},
      {"actor.optim.grad_clip", "actor.grad_clip"},
      {"critic.optim.clip_grad", "critic.grad_clip"},
      {"critic.optim.grad_clip", "critic.grad_clip"},
      // verl's FSDP optimizer names its schedule lr_scheduler_type (warmup_style, which
      // this schema keeps, is deprecated there).
      {"actor.optim.lr_scheduler_type", "actor.optim.warmup_style"},
      {"critic.optim.lr_scheduler_type", "critic.optim.warmup_style"},
      // verl's SFT trainer (its model and optim at the top level are the actor's:
      // common/recipe_schema.h's IsVerlSftTrainerKey).
      {"actor.model.partial_pretrain", "actor.model.path"},
      {"actor.optim.warmup_steps_ratio", "actor.optim.lr_warmup_steps_ratio"},
      {"actor.optim.lr_scheduler", "actor.optim.warmup_style"},
      {"data.micro_batch_size_per_gpu", "actor.ppo_micro_batch_size_per_gpu"},
      {"data.messages_key", "data.multiturn.messages_key"},
      {"data.tools_key", "data.multiturn.tools_key"},
      {"data.use_dynamic_bsz", "actor.use_dynamic_bsz"},
      {"data.max_token_len_per_gpu", "actor.ppo_max_token_len_per_gpu"},
      {"trainer.max_ckpt_to_keep", "trainer.max_actor_ckpt_to_keep"},
      // verl's rollout copies the data lengths (${oc.select:data.max_prompt_length,512});
      // its response_length is the generation's max_tokens, which
      // data.max_response_length sets here.
      {"rollout.prompt_length", "data.max_prompt_length"},
      {"rollout.response_length", "data.max_response_length"},
      // verl's dataset copies the multi-turn rollout's tools (to filter overlong prompts
      // with their schemas).
      {"data.tool_config_path", "rollout.multi_turn.tool_config_path"},
      // verl's earlier spelling of rollout.skip.
      {"rollout.skip_rollout", "rollout.skip.enable"},
      {"rollout.skip_dump_dir", "rollout.skip.dump_dir"},
      // verl's DAPO reward manager reads its overlong buffer under reward_model.
      {"reward_model.overlong_buffer.enable", "reward.overlong_buffer.enable"},
      {"reward_model.overlong_buffer.len", "reward.overlong_buffer.len"},
      {"reward_model.overlong_buffer.penalty_factor", "reward.overlong_buffer.penalty_factor"},
      // ... or as its keyword arguments (verl's recipes written for its newer config),
      // with the response length it measures against, verl's data.max_response_length.
      {"reward_model.reward_kwargs.overlong_buffer_cfg.enable", "reward.overlong_buffer.enable"},
      {"reward_model.reward_kwargs.overlong_buffer_cfg.len", "reward.overlong_buffer.len"},
      {"reward_model.reward_kwargs.overlong_buffer_cfg.penalty_factor", "reward.overlong_buffer.penalty_factor"},
      {"reward_model.reward_kwargs.max_resp_len", "data.max_response_length"},
      // verl 0.7 moved its reward settings to a top-level `reward` section: the reward
      // model's switch and weights there, and its reward workers' count (kept at the old
      // place as a null placeholder), are these.
      {"reward.reward_model.enable", "reward_model.enable"},
      {"reward.reward_model.model_path", "reward_model.model.path"},
      {"reward_model.num_workers", "reward.num_workers"},
  };
  return *table;
}

}  // namespace

const VerlSynonymKey* FindVerlSynonymKey(const std::string& key) {
  for (const VerlSynonymKey& entry : Table()) {
    if (entry.key == key) return &entry;
  }
  return nullptr;
}

bool IsVerlSynonymTarget(const std::string& key) {
  for (const VerlSynonymKey& entry : Table()) {
    if (entry.target == key) return true;
  }
  return false;
}

std::vector<std::string> VerlSynonymKeysUnder(const std::string& key) {
  std::vector<std::string> keys;
  for (const VerlSynonymKey& entry : Table()) keys.push_back(entry.key);
  return NamesBelow(key, keys);
}

}  // namespace rollout::config
