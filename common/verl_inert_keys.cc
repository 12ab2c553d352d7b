#include "common/verl_inert_keys.h"

#include <algorithm>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace rollout::config {
namespace {

const char kWholeModels[] = "workers here train and run whole models, one per device";
const char kSameResults[] = "an efficiency switch; results do not depend on it";
const char kProfiler[] = "verl's profilers (Nsight Systems, torch) of its workers; traces here come from the benchmarks (bench/README.md)";
const char kAdamW[] = "verl's optimizer class; the optimizer here is this project's AdamW (optim.lr, betas, eps, weight_decay)";
const char kAdamWImpl[] = "the Python module verl imports its optimizer from; AdamW here is this project's own";
const char kAdamWKwargs[] = "extra keyword arguments for verl's optimizer class; AdamW here takes optim.lr, betas, eps and weight_decay";
const char kZeroIndexed[] = "the schedule here counts the first update as step 0, verl's default; counting from 1 is not offered";

const std::vector<VerlInertKey>& Table() {
  static const auto* table = new std::vector<VerlInertKey>{
      // The actor, the reference and the critic: verl's training backend.
      {"actor.strategy", {}, absl::StrCat("verl's training backend (fsdp, fsdp2, megatron); ", kWholeModels)},
      {"actor.fsdp_config", {}, absl::StrCat("FSDP's sharding and offloading; ", kWholeModels)},
      {"actor.ulysses_sequence_parallel_size", {"1"}, "Ulysses sequence parallelism is not implemented"},
      {"actor.use_torch_compile", {}, "torch.compile of verl's PyTorch code; the code here is compiled C++"},
      {"actor.entropy_from_logits_with_chunking", {}, absl::StrCat("memory use of verl's entropy; ", kSameResults)},
      {"actor.entropy_checkpointing", {}, absl::StrCat("recomputation in verl's entropy backward; ", kSameResults)},
      {"actor.model.use_remove_padding", {}, absl::StrCat("verl's unpadded (varlen) forward, ", kSameResults)},
      {"actor.model.use_fused_kernels", {}, "verl's fused log-prob kernels; this project's own kernels serve every pass"},
      {"actor.model.use_shm", {}, "copying the model files through /dev/shm before loading them"},
      {"actor.model.use_liger", {}, absl::StrCat("Liger's fused Triton kernels, ", kSameResults)},
      {"actor.optim.optimizer", {"adamw"}, kAdamW},
      {"actor.optim.optimizer_impl", {"torch.optim"}, kAdamWImpl},
      {"actor.optim.override_optimizer_config", {"null", "{}"}, kAdamWKwargs},
      {"actor.optim.zero_indexed_step", {"true"}, kZeroIndexed},
      {"actor.profiler", {}, kProfiler},
      {"ref.profiler", {}, kProfiler},
      {"critic.optim.optimizer", {"adamw"}, kAdamW},
      {"critic.optim.optimizer_impl", {"torch.optim"}, kAdamWImpl},
      {"critic.optim.override_optimizer_config", {"null", "{}"}, kAdamWKwargs},
      {"critic.optim.zero_indexed_step", {"true"}, kZeroIndexed},
      {"critic.profiler", {}, kProfiler},
      {"actor.model.trust_remote_code", {}, "models here are the built-in Qwen2 and Llama; no code from a model directory runs"},
      {"actor.model.external_lib", {"null"}, "importing a Python module that registers a model is not possible here"},
      {"actor.model.override_config", {"null", "{}"}, "changing a model's HF config at load is not implemented"},
      {"ref.strategy", {}, absl::StrCat("verl's backend for the reference model; ", kWholeModels)},
      {"ref.fsdp_config", {}, absl::StrCat("FSDP's sharding and offloading; ", kWholeModels)},
      {"ref.ulysses_sequence_parallel_size", {"1"}, "Ulysses sequence parallelism is not implemented"},
      {"critic.strategy", {}, absl::StrCat("verl's training backend for the critic; ", kWholeModels)},
      {"critic.ulysses_sequence_parallel_size", {"1"}, "Ulysses sequence parallelism is not implemented"},
      {"critic.model.fsdp_config", {}, absl::StrCat("FSDP's sharding and offloading; ", kWholeModels)},
      {"critic.model.use_remove_padding", {}, absl::StrCat("verl's unpadded (varlen) forward, ", kSameResults)},
      {"critic.model.trust_remote_code", {}, "models here are the built-in Qwen2 and Llama; no code from a model directory runs"},
      {"critic.model.external_lib", {"null"}, "importing a Python module that registers a model is not possible here"},
      {"critic.model.override_config", {"null", "{}"}, "changing a model's HF config at load is not implemented"},
      {"actor.ppo_micro_batch_size", {"null"}, "verl's deprecated global micro-batch size; set ppo_micro_batch_size_per_gpu"},
      {"critic.ppo_micro_batch_size", {"null"}, "verl's deprecated global micro-batch size; set ppo_micro_batch_size_per_gpu"},
      {"critic.rollout_n", {}, "verl's copy of rollout.n, which the critic here reads itself"},
      {"critic.shuffle", {"false"}, "shuffling the critic's rows between its mini-batches is not implemented"},
      {"actor_rollout_ref.hybrid_engine", {"true"}, "where roles run is the placement's (placement.*); verl has only the hybrid engine"},
      // The rollout: verl's inference engines.
      {"rollout.name", {"vllm", "sglang", "hf"},
       "verl's inference engines; this project's own engine (rollout.name: native) serves the rollout, with the same sampling keys"},
      {"rollout.mode", {"sync"}, "verl's asynchronous rollout server (its agent loop) is not implemented"},
      {"rollout.tensor_model_parallel_size", {"1"}, "tensor parallelism is not implemented; each rollout worker holds a whole model"},
      {"rollout.free_cache_engine", {}, "vLLM's sleep mode between rollouts"},
      {"rollout.load_format", {}, "how vLLM loads its first weights; the engine here starts from the actor's"},
      {"rollout.disable_log_stats", {}, "vLLM's statistics logging"},
      {"rollout.engine_kwargs", {}, "keyword arguments for vLLM or SGLang"},
      {"rollout.layered_summon", {}, "gathering FSDP weights layer by layer for vLLM"},
      {"rollout.calculate_log_probs", {}, "the engine here always returns the sampled tokens' log-probs"},
      {"rollout.multi_turn.enable", {"false"}, "multi-turn rollouts with tools are not implemented"},
      {"rollout.agent", {}, "verl's agent loop, which serves only its asynchronous rollout (rollout.mode: async)"},
      {"rollout.profiler", {}, kProfiler},
      // Rewards: verl's reward model and Python reward functions.
      {"reward_model.enable", {"false"}, "reward models are not implemented; rewards come from reward.*"},
      {"reward_model.reward_manager", {"naive"},
       "verl's naive manager (one score per response) is what reward.* runs; prime, dapo and batch are not implemented"},
      {"custom_reward_function.path", {"null"},
       "Python reward functions cannot be loaded; use a built-in (reward.name) or a C++ plug-in (reward.plugin)"},
      {"custom_reward_function.name", {}, "the function in custom_reward_function.path"},
      // Data and the trainer.
      {"algorithm.use_pf_ppo", {"false"}, "PF-PPO's reweighting of the batch is not implemented"},
      {"algorithm.pf_ppo", {}, "settings of PF-PPO (algorithm.use_pf_ppo), which is not implemented"},
      {"data.return_raw_chat", {"false"}, "raw chat messages for verl's multi-turn rollout are not implemented"},
      {"data.tokenizer", {"null"}, "the tokenizer is the model's (actor.model.tokenizer_path)"},
      {"data.use_shm", {}, "copying the data files through /dev/shm before reading them"},
      {"data.dataloader_num_workers", {}, "PyTorch DataLoader processes; the controller here reads JSON lines itself"},
      {"data.filter_overlong_prompts_workers", {}, "processes for verl's filter; data.filter_overlong_prompts runs here without"},
      {"data.image_key", {}, "the column of images; multimodal prompts are not implemented"},
      {"data.video_key", {}, "the column of videos; multimodal prompts are not implemented"},
      {"data.trust_remote_code", {}, "the tokenizers here are built in; no code from a model directory runs"},
      {"data.custom_cls.path", {"null"}, "a Python dataset class cannot be loaded; prompts are JSON lines"},
      {"data.custom_cls.name", {}, "the class in data.custom_cls.path"},
      {"trainer.esi_redundant_time", {}, "a time reserve for verl's elastic scheduling on Ascend"},
      {"trainer.ray_wait_register_center_timeout", {}, "Ray's registration wait; workers here register within runtime.register_timeout_s"},
      {"trainer.rollout_data_dir", {"null"}, "dumping each step's rollouts to files is not implemented"},
      {"trainer.validation_data_dir", {"null"}, "dumping validation generations to files is not implemented"},
      {"trainer.ray_timeline_filename", {"null"}, "Ray's timeline; traces here come from the benchmarks"},
      {"ray_init", {}, "Ray's start-up; workers here are processes the launcher starts"},
      {"global_profiler", {}, kProfiler},
  };
  return *table;
}

}  // namespace

const VerlInertKey* FindVerlInertKey(const std::string& key) {
  for (const VerlInertKey& entry : Table()) {
    if (entry.key == key) return &entry;
  }
  return nullptr;
}

bool HasVerlInertKeysUnder(const std::string& key) { return !VerlInertKeysUnder(key).empty(); }

std::vector<std::string> VerlInertKeysUnder(const std::string& key) {
  const std::string prefix = key + ".";
  std::set<std::string> names;
  for (const VerlInertKey& entry : Table()) {
    if (!absl::StartsWith(entry.key, prefix)) continue;
    const std::string rest = entry.key.substr(prefix.size());
    names.insert(rest.substr(0, rest.find('.')));
  }
  return {names.begin(), names.end()};
}

bool VerlInertKeyAccepts(const VerlInertKey& entry, const std::string& value) {
  return entry.accepted.empty() ||
         std::find(entry.accepted.begin(), entry.accepted.end(), value) != entry.accepted.end();
}

}  // namespace rollout::config
