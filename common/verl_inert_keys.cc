#include "common/verl_inert_keys.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/recipe_schema.h"

namespace rollout::config {
namespace {

const char kWholeModels[] = "workers here train and run whole models, one per device";
const char kOptimizerShards[] =
    "; a data-parallel group shards the optimizer state over its ranks (ZeRO-1: workers/optimizer_shards.h)";
// What a trained role's fsdp_config.model_dtype / mixed_precision choose in verl.
const char kTrainingPrecision[] =
    "; its model_dtype and mixed_precision: a bfloat16 model here always trains as verl's default, on float32 "
    "master weights and gradients (workers/adamw.h)";
const char kSameResults[] = "an efficiency switch; results do not depend on it";
const char kProfiler[] = "verl's profilers (Nsight Systems, torch) of its workers; traces here come from the benchmarks (bench/README.md)";
const char kWeightDecayRamp[] =
    "Megatron's weight-decay ramp, which verl starts and ends at optim.weight_decay, so every style keeps that value";
const char kScheduleFromRecipe[] =
    "whether a resumed Megatron run takes its schedule's settings from the checkpoint; a resumed run here takes "
    "them from the recipe, as verl's default (false) does";
const char kAdamWImpl[] =
    "the Python module verl imports its optimizer from; AdamW and Adam (optim.optimizer) here are this project's own";
const char kAdamWKwargs[] =
    "extra keyword arguments for verl's optimizer class; the optimizers here take optim.lr, betas, eps and "
    "weight_decay";
const char kRewardModelPool[] =
    "verl's own pool for the reward model; here the reward model runs on the pool placement.reward_model names "
    "(resource_pools)";
const char kAttentionImplementation[] =
    "transformers' attention implementation (eager, sdpa, flash_attention_2); the attention here is this project's "
    "own, on FlashAttention's kernels where they serve, and results do not depend on it";
const char kNoDropout[] =
    "a dropout probability in the model's HF config; the models here apply no dropout (LoRA's aside), as 0 asks";
const char kPositionLimit[] =
    "the position limit in the model's HF config, which verl's long-response recipes raise; positions here are not "
    "bounded by it (rotary embeddings are computed for any position), and exported checkpoints keep the model's value";
const char kMixtureOfExperts[] =
    "replaying a mixture-of-experts router's choices; mixture-of-experts models are not implemented";
const char kQat[] = "a setting of quantization-aware training (actor.qat.enable), which is not implemented";
const char kMtp[] =
    "a setting of multi-token prediction layers (actor_rollout_ref.model.mtp.enable), which are not implemented";
const char kTiledMlp[] = "computing the MLP in tiles to save memory; results do not depend on it";
const char kMbridge[] =
    "Megatron Bridge's settings for verl's Megatron checkpoints; checkpoints here are this project's";
const char kRewardServer[] =
    "the inference server (vLLM, SGLang) verl runs its reward model on; the reward model here runs in a worker "
    "(reward_model.*)";
const char kSandboxFusion[] = "a setting of Sandbox Fusion (reward_model.sandbox_fusion.url), which is not implemented";
const char kZeroIndexed[] = "the schedule here counts the first update as step 0, verl's default; counting from 1 is not offered";

const std::vector<VerlInertKey>& Table() {
  static const auto* table = new std::vector<VerlInertKey>{
      // The actor, the reference and the critic: verl's training backend.
      {"actor.strategy", {}, absl::StrCat("verl's training backend (fsdp, fsdp2, megatron); ", kWholeModels)},
      {"actor.fsdp_config", {},
       absl::StrCat("FSDP's sharding and offloading; ", kWholeModels, kOptimizerShards, kTrainingPrecision)},
      {"actor.ulysses_sequence_parallel_size", {"1"}, "Ulysses sequence parallelism is not implemented"},
      {"actor.use_torch_compile", {}, "torch.compile of verl's PyTorch code; the code here is compiled C++"},
      {"actor.entropy_from_logits_with_chunking", {}, absl::StrCat("memory use of verl's entropy; ", kSameResults)},
      {"actor.entropy_checkpointing", {}, absl::StrCat("recomputation in verl's entropy backward; ", kSameResults)},
      {"actor.model.use_remove_padding", {}, absl::StrCat("verl's unpadded (varlen) forward, ", kSameResults)},
      {"actor.model.use_fused_kernels", {}, "verl's fused log-prob kernels; this project's own kernels serve every pass"},
      {"actor.model.use_shm", {}, "copying the model files through /dev/shm before loading them"},
      {"actor.model.use_liger", {}, absl::StrCat("Liger's fused Triton kernels, ", kSameResults)},
      {"actor.optim.weight_decay_incr_style", {"constant", "linear", "cosine"}, kWeightDecayRamp},
      {"actor.optim.use_checkpoint_opt_param_scheduler", {"false"}, kScheduleFromRecipe},
      {"actor.optim.optimizer_impl", {"torch.optim"}, kAdamWImpl},
      {"actor.optim.override_optimizer_config", {"null", "{}"}, kAdamWKwargs},
      {"actor.optim.zero_indexed_step", {"true"}, kZeroIndexed},
      {"actor.profiler", {}, kProfiler},
      {"actor.use_fused_kernels", {}, "verl's copy of actor.model.use_fused_kernels; this project's own kernels serve every pass"},
      {"actor.use_remove_padding", {}, absl::StrCat("verl's copy of actor.model.use_remove_padding, ", kSameResults)},
      {"actor.freeze_vision_tower", {"false"}, "freezing a vision encoder; multimodal models are not implemented"},
      {"actor.tis_imp_ratio_cap", {"-1"}, "verl's earlier spelling of truncated importance sampling; set algorithm.rollout_correction.rollout_is=token and rollout_is_threshold to the cap"},
      {"actor.model.return_last_hidden_state", {"false"}, "returning hidden states to verl's Python callers"},
      {"actor.model.use_fused_loss", {}, "verl's fused linear cross-entropy; the token-score kernels here never hold float32 logits"},
      {"actor.model.hf_config_path", {"null"}, "a separate HF config directory; config.json is read from actor.model.path"},
      {"actor.model.enable_activation_offload", {"false"}, "offloading activations to the CPU is not implemented"},
      {"actor.model.fused_kernel_options", {}, "options of verl's fused kernels (actor.model.use_fused_kernels)"},
      {"actor.model.tiled_mlp", {}, kTiledMlp},
      {"actor.model.mtp.enable", {"false"}, "multi-token prediction layers are not implemented"},
      {"actor.model.mtp.enable_train", {}, kMtp},
      {"actor.model.mtp.enable_rollout", {}, kMtp},
      {"actor.model.mtp.detach_encoder", {}, kMtp},
      {"actor.model.mtp.mtp_loss_scaling_factor", {}, kMtp},
      {"actor.model.mtp.speculative_algorithm", {}, kMtp},
      {"actor.model.mtp.speculative_num_steps", {}, kMtp},
      {"actor.model.mtp.speculative_eagle_topk", {}, kMtp},
      {"actor.model.mtp.speculative_num_draft_tokens", {}, kMtp},
      {"actor.model.mtp.method", {}, kMtp},
      {"actor.model.mtp.num_speculative_tokens", {}, kMtp},
      {"actor.rollout_n", {}, "verl's copy of rollout.n, which the actor here reads itself"},
      {"actor.calculate_entropy", {},
       "whether verl computes the entropy when entropy_coeff is 0; the actor here always computes it with the "
       "log-probs (actor/entropy)"},
      {"actor.use_prefix_grouper", {},
       absl::StrCat("verl's forward that runs a group's shared prompt once, as the scoring passes here always do; ",
                    kSameResults)},
      {"actor.router_replay.mode", {"disabled"}, kMixtureOfExperts},
      {"actor.router_replay.record_file", {"null"}, kMixtureOfExperts},
      {"actor.router_replay.replay_file", {"null"}, kMixtureOfExperts},
      {"actor.sum_pi_squared_checkpointing", {},
       absl::StrCat("recomputation in verl's sum of squared probabilities (actor.calculate_sum_pi_squared), which "
                    "the scoring here computes chunk by chunk with the log-probs (one fused kernel on CUDA); ",
                    kSameResults)},
      {"actor.qat.enable", {"false"}, "quantization-aware training is not implemented"},
      {"actor.qat.mode", {}, kQat},
      {"actor.qat.group_size", {}, kQat},
      {"actor.qat.ignore_patterns", {}, kQat},
      {"actor.qat.activation_observer", {}, kQat},
      {"actor.qat.quantization_config_path", {}, kQat},
      {"actor.checkpoint.mbridge_config", {}, kMbridge},
      {"actor.megatron", {},
       absl::StrCat("Megatron's model, pipeline and context parallelism and offloading; ", kWholeModels)},
      {"actor.load_weight", {"true"},
       "verl's Megatron actor starting from random weights is not offered; the actor loads actor.model.path"},
      {"actor_rollout_ref.nccl_timeout", {}, "the NCCL timeout of verl's workers; a dead worker here stops the run within runtime's heartbeat"},
      {"ref.profiler", {}, kProfiler},
      {"ref.use_torch_compile", {}, "torch.compile of verl's PyTorch code; the code here is compiled C++"},
      {"ref.log_prob_micro_batch_size", {"null"}, "verl's deprecated global micro-batch size; set log_prob_micro_batch_size_per_gpu"},
      {"ref.model", {"null"}, "a reference model of its own is not implemented; the reference is actor.model's initial weights"},
      {"ref.entropy_from_logits_with_chunking", {}, absl::StrCat("memory use of verl's entropy; ", kSameResults)},
      {"ref.entropy_checkpointing", {}, absl::StrCat("recomputation in verl's entropy backward; ", kSameResults)},
      {"ref.rollout_n", {}, "verl's copy of rollout.n, which the reference here reads itself"},
      {"ref.router_replay.mode", {"disabled"}, kMixtureOfExperts},
      {"ref.router_replay.record_file", {"null"}, kMixtureOfExperts},
      {"ref.router_replay.replay_file", {"null"}, kMixtureOfExperts},
      {"critic.checkpoint.mbridge_config", {}, kMbridge},
      {"critic.model.tiled_mlp", {}, kTiledMlp},
      {"critic.optim.weight_decay_incr_style", {"constant", "linear", "cosine"}, kWeightDecayRamp},
      {"critic.optim.use_checkpoint_opt_param_scheduler", {"false"}, kScheduleFromRecipe},
      {"critic.optim.optimizer_impl", {"torch.optim"}, kAdamWImpl},
      {"critic.optim.override_optimizer_config", {"null", "{}"}, kAdamWKwargs},
      {"critic.optim.zero_indexed_step", {"true"}, kZeroIndexed},
      {"critic.profiler", {}, kProfiler},
      {"critic.enable", {"null"}, "the critic runs when algorithm.adv_estimator needs values (gae)"},
      {"critic.forward_micro_batch_size", {"null"}, "verl's deprecated global micro-batch size; set forward_micro_batch_size_per_gpu"},
      {"critic.model.use_shm", {}, "copying the model files through /dev/shm before loading them"},
      {"critic.model.enable_activation_offload", {"false"}, "offloading activations to the CPU is not implemented"},
      {"actor.model.trust_remote_code", {}, "models here are the built-in Qwen2, Qwen3 and Llama; no code from a model directory runs"},
      {"actor.model.external_lib", {"null"}, "importing a Python module that registers a model is not possible here"},
      {"actor.model.override_config", {"null", "{}"}, "changing a model's HF config at load is not implemented"},
      {"actor.model.override_config.attn_implementation", {}, kAttentionImplementation},
      {"actor.model.override_config.attention_dropout", {"0"}, kNoDropout},
      {"actor.model.override_config.embd_pdrop", {"0"}, kNoDropout},
      {"actor.model.override_config.resid_pdrop", {"0"}, kNoDropout},
      {"actor.model.override_config.max_position_embeddings", {}, kPositionLimit},
      {"ref.strategy", {}, absl::StrCat("verl's backend for the reference model; ", kWholeModels)},
      {"ref.fsdp_config", {}, absl::StrCat("FSDP's sharding and offloading; ", kWholeModels)},
      {"ref.ulysses_sequence_parallel_size", {"1"}, "Ulysses sequence parallelism is not implemented"},
      {"ref.megatron", {},
       absl::StrCat("Megatron's parallelism and offloading for the reference model; ", kWholeModels)},
      {"ref.load_weight", {"true"}, "the reference here loads actor.model.path's weights"},
      {"critic.megatron", {}, absl::StrCat("Megatron's parallelism and offloading for the critic; ", kWholeModels)},
      {"critic.load_weight", {"true"}, "the critic here loads critic.model.path's weights"},
      {"reward_model.megatron", {}, absl::StrCat("Megatron's parallelism for the reward model; ", kWholeModels)},
      {"reward_model.load_weight", {"true"}, "the reward model here loads reward_model.model.path's weights"},
      {"critic.strategy", {}, absl::StrCat("verl's training backend for the critic; ", kWholeModels)},
      {"critic.ulysses_sequence_parallel_size", {"1"}, "Ulysses sequence parallelism is not implemented"},
      {"critic.model.fsdp_config", {},
       absl::StrCat("FSDP's sharding and offloading; ", kWholeModels, kOptimizerShards, kTrainingPrecision)},
      {"critic.model.use_remove_padding", {}, absl::StrCat("verl's unpadded (varlen) forward, ", kSameResults)},
      {"critic.model.trust_remote_code", {}, "models here are the built-in Qwen2, Qwen3 and Llama; no code from a model directory runs"},
      {"critic.model.external_lib", {"null"}, "importing a Python module that registers a model is not possible here"},
      {"critic.model.override_config", {"null", "{}"}, "changing a model's HF config at load is not implemented"},
      {"critic.model.override_config.attn_implementation", {}, kAttentionImplementation},
      {"critic.model.override_config.attention_dropout", {"0"}, kNoDropout},
      {"critic.model.override_config.embd_pdrop", {"0"}, kNoDropout},
      {"critic.model.override_config.resid_pdrop", {"0"}, kNoDropout},
      {"critic.model.override_config.max_position_embeddings", {}, kPositionLimit},
      {"actor.ppo_micro_batch_size", {"null"}, "verl's deprecated global micro-batch size; set ppo_micro_batch_size_per_gpu"},
      {"critic.ppo_micro_batch_size", {"null"}, "verl's deprecated global micro-batch size; set ppo_micro_batch_size_per_gpu"},
      {"critic.rollout_n", {}, "verl's copy of rollout.n, which the critic here reads itself"},
      {"actor_rollout_ref.hybrid_engine", {"true"}, "where roles run is the placement's (placement.*); verl has only the hybrid engine"},
      // The rollout: verl's inference engines.
      {"rollout.name", {"vllm", "sglang", "hf"},
       "verl's inference engines; this project's own engine (rollout.name: native) serves the rollout, with the same sampling keys"},
      {"rollout.mode", {"async", "sync"},
       "how verl serves its inference engine (async, its default: a server its agent loop calls; sync, deprecated: "
       "batch inference); the engine here generates in the rollout worker, the same responses for single-turn prompts"},
      {"rollout.tensor_model_parallel_size", {"1"}, "tensor parallelism is not implemented; each rollout worker holds a whole model"},
      {"rollout.pipeline_model_parallel_size", {"1"},
       "pipeline parallelism is not implemented; each rollout worker holds a whole model"},
      {"rollout.logprobs_mode", {"processed_logprobs"},
       "which log-probs vLLM returns with each token; the engine here returns the sampled token's under the "
       "temperature (before top-k/top-p), what processed_logprobs gives"},
      {"rollout.scheduling_policy", {"fcfs"},
       "vLLM's scheduling order; the engine here schedules first come, first served"},
      {"rollout.checkpoint_engine", {},
       "how verl sends updated weights to its inference server; the rollout here gets them as placement.* places it "
       "(shared in one process, else NCCL or gRPC)"},
      {"rollout.trace.max_samples_per_step_per_worker", {}, "a limit of traced rollouts (rollout.trace.backend)"},
      {"rollout.enable_rollout_routing_replay", {"false"}, kMixtureOfExperts},
      {"rollout.prometheus", {}, "vLLM's Prometheus metrics server"},
      {"rollout.quantization", {"null"},
       "quantized inference is not implemented; the engine here runs the model's dtype"},
      {"rollout.quantization_config_file", {"null"},
       "quantized inference is not implemented; the engine here runs the model's dtype"},
      {"rollout.mtp", {}, "verl's copy of actor_rollout_ref.model.mtp for its inference server"},
      {"rollout.qat", {}, "verl's copy of actor.qat for its inference server"},
      {"rollout.multi_turn.num_repeat_rollouts", {"null"},
       "repeating each multi-turn rollout; rollout.n samples each prompt that many times"},
      {"rollout.free_cache_engine", {}, "vLLM's sleep mode between rollouts"},
      {"rollout.load_format", {}, "how vLLM loads its first weights; the engine here starts from the actor's"},
      {"rollout.disable_log_stats", {}, "vLLM's statistics logging"},
      {"rollout.engine_kwargs", {}, "keyword arguments for vLLM or SGLang"},
      {"rollout.layered_summon", {}, "gathering FSDP weights layer by layer for vLLM"},
      {"rollout.calculate_log_probs", {}, "the engine here always returns the sampled tokens' log-probs"},
      {"rollout.multi_turn.max_turns", {"null"}, "verl's former limit of turns; set rollout.multi_turn.max_assistant_turns"},
      {"rollout.multi_turn.use_inference_chat_template", {"false"},
       "re-rendering earlier turns with the inference template (dropping their reasoning) is not implemented; "
       "a multi-turn response here keeps the tokens the model generated, as verl does with false"},
      {"rollout.multi_turn.tokenization_sanity_check_mode", {},
       "verl's check that a multi-turn response's tokens match the chat template's rendering of its messages; the "
       "turns here are the template's own text (each tool turn is what the template writes after the model's end token)"},
      {"rollout.log_prob_micro_batch_size", {"null"}, "verl's deprecated global micro-batch size; set log_prob_micro_batch_size_per_gpu"},
      {"rollout.chat_scheduler", {"null"}, "verl's chat scheduler for its asynchronous rollout, which is not implemented"},
      {"rollout.use_fire_sampling", {"false"}, "FIRE sampling (a first token at a higher temperature) is not implemented"},
      {"rollout.max_model_len", {}, "vLLM's context length; the engine here fits each sequence's data.max_prompt_length + data.max_response_length"},
      {"rollout.cudagraph_capture_sizes", {}, "vLLM's CUDA-graph batch sizes; the engine here captures its own (rollout.enforce_eager)"},
      {"rollout.data_parallel_size", {"1"}, "vLLM's data parallelism inside one rollout server; rollout workers here are one per device"},
      {"rollout.expert_parallel_size", {"1"}, "expert parallelism; mixture-of-experts models are not implemented"},
      {"rollout.multi_stage_wake_up", {}, "how vLLM's sleep mode wakes its weights and KV cache"},
      {"rollout.update_weights_bucket_megabytes", {}, "the bucket size of verl's weight transfer to its inference server"},
      {"rollout.trace.backend", {"null"}, "tracing rollouts to weave or mlflow is not implemented"},
      {"rollout.trace.token2text", {}, "decoding traced rollouts (rollout.trace.backend)"},
      {"rollout.skip_tokenizer_init", {}, "whether vLLM loads its own tokenizer"},
      {"rollout.agent.num_workers", {}, "the processes that run verl's agent loops; here the rollout workers run them"},
      {"rollout.agent.agent_loop_config_path", {"null"},
       "verl's agent loop classes of your own, which are Python; the loops here are tool_agent and single_turn_agent"},
      {"rollout.agent.custom_async_server.path", {"null"}, "a Python inference server of your own in place of vLLM's"},
      {"rollout.agent.custom_async_server.name", {"null"}, "a Python inference server of your own in place of vLLM's"},
      {"rollout.profiler", {}, kProfiler},
      // Rewards: verl's reward model and Python reward functions.
      {"reward_model.reward_manager", {"naive", "dapo", "null"},
       "verl's naive manager (one score per response) is what reward.* runs, and its dapo manager that with "
       "reward.overlong_buffer (reward_model.overlong_buffer); its prime and batch managers have no counterpart here"},
      {"reward_model.overlong_buffer.log", {},
       "whether verl's DAPO manager returns its overlong penalty as extra info; reward/overlong_penalty/mean and "
       "reward/overlong_fraction are always logged here"},
      {"reward_model.reward_kwargs.overlong_buffer_cfg.log", {},
       "whether verl's DAPO manager returns its overlong penalty as extra info; reward/overlong_penalty/mean and "
       "reward/overlong_fraction are always logged here"},
      {"reward_model.enable_resource_pool", {"false", "null"}, kRewardModelPool},
      {"reward_model.reward_loop_source", {"null"},
       "where verl's reward loop class comes from; a Python class of your own cannot be loaded"},
      {"reward_model.reward_loop_module_path", {"null"}, "a Python reward loop class of your own cannot be loaded"},
      {"reward_model.reward_loop_class_name", {"null"}, "a Python reward loop class of your own cannot be loaded"},
      {"reward_model.rollout", {}, kRewardServer},
      {"reward.max_concurrency_per_worker", {},
       "how many rewards each of verl's reward workers computes at once; each of reward.num_workers threads or "
       "processes here computes one at a time"},
      {"reward.custom_reward_function.path", {"null"},
       "Python reward functions cannot be loaded; use a built-in (reward.name) or a C++ plug-in (reward.plugin)"},
      {"reward.custom_reward_function.name", {}, "the function in reward.custom_reward_function.path"},
      {"reward.reward_manager.source", {"register"},
       "where verl finds its reward manager: registered (naive, dapo) or a Python module of your own, which cannot be "
       "loaded"},
      {"reward.reward_manager.name", {"naive", "dapo"},
       "verl's naive manager (one score per response) is what reward.* runs, and its dapo manager that with "
       "reward.overlong_buffer; its prime and batch managers have no counterpart here"},
      {"reward.reward_manager.module.path", {"null"}, "a Python reward manager of your own cannot be loaded"},
      {"reward.reward_manager.module.name", {}, "the class in reward.reward_manager.module.path"},
      {"reward.reward_model.enable_resource_pool", {"false"}, kRewardModelPool},
      {"reward.reward_model.n_gpus_per_node", {}, kRewardModelPool},
      {"reward.reward_model.nnodes", {}, kRewardModelPool},
      {"reward.reward_model.rollout", {}, kRewardServer},
      {"reward.sandbox_fusion.url", {"null"}, "verl's Sandbox Fusion service for code rewards is not implemented"},
      {"reward.sandbox_fusion.max_concurrent", {}, kSandboxFusion},
      {"reward.sandbox_fusion.memory_limit_mb", {}, kSandboxFusion},
      {"sandbox_fusion.url", {"null"}, "verl's Sandbox Fusion service for code rewards is not implemented"},
      {"sandbox_fusion.max_concurrent", {}, kSandboxFusion},
      {"sandbox_fusion.memory_limit_mb", {}, kSandboxFusion},
      {"algorithm.rollout_correction.loss_type", {"ppo_clip"},
       "verl 0.7's loss in bypass mode: ppo_clip, PPO's clipped loss anchored at the rollout's log-probs, is what "
       "bypass_mode trains with here; for the plain policy-gradient loss set "
       "algorithm.rollout_correction.use_policy_gradient=true"},
      {"transfer_queue.enable", {"false"},
       "verl's TransferQueue, a data service between its trainer and workers; batches here travel in the workers' "
       "calls"},
      {"reward_model.n_gpus_per_node", {}, kRewardModelPool},
      {"reward_model.nnodes", {}, kRewardModelPool},
      {"reward_model.strategy", {}, absl::StrCat("verl's backend for the reward model; ", kWholeModels)},
      {"reward_model.model.external_lib", {"null"}, "importing a Python module that registers a model is not possible here"},
      {"reward_model.model.trust_remote_code", {}, "models here are the built-in Qwen2, Qwen3 and Llama; no code from a model directory runs"},
      {"reward_model.model.use_shm", {}, "copying the model files through /dev/shm before loading them"},
      {"reward_model.model.use_remove_padding", {}, absl::StrCat("verl's unpadded (varlen) forward, ", kSameResults)},
      {"reward_model.model.use_fused_kernels", {}, absl::StrCat("verl's fused kernels, ", kSameResults)},
      {"reward_model.model.fsdp_config", {}, absl::StrCat("FSDP's sharding and offloading; ", kWholeModels)},
      {"reward_model.micro_batch_size", {"null"}, "verl's deprecated global micro-batch size; set micro_batch_size_per_gpu"},
      {"reward_model.ulysses_sequence_parallel_size", {"1"}, "Ulysses sequence parallelism is not implemented"},
      {"reward_model.profiler", {}, kProfiler},
      {"reward_model.launch_reward_fn_async", {}, "computing verl's Python rewards during the old-log-prob pass; rewards here run in their own threads or processes (reward.isolation)"},
      {"reward_model.sandbox_fusion.url", {"null"}, "verl's Sandbox Fusion service for code rewards is not implemented"},
      {"reward_model.sandbox_fusion.max_concurrent", {}, kSandboxFusion},
      {"reward_model.sandbox_fusion.memory_limit_mb", {}, kSandboxFusion},
      {"custom_reward_function.path", {"null"},
       "Python reward functions cannot be loaded; use a built-in (reward.name) or a C++ plug-in (reward.plugin)"},
      {"custom_reward_function.name", {}, "the function in custom_reward_function.path"},
      // Data and the trainer.
      {"data.return_raw_chat", {},
       "whether verl's dataset hands each prompt's chat messages to its workers (its asynchronous and multi-turn "
       "rollouts and the reward model's re-rendering read them); the controller here sends the chat to every worker "
       "that renders it"},
      {"data.return_raw_input_ids", {"false"},
       "prompt ids in a reward model's tokenizer for verl's older reward model path; the reward model here re-renders "
       "prompt and response itself (reward_model.model.input_tokenizer)"},
      {"data.return_full_prompt", {"false"}, "the chat-formatted prompt text for verl's Python reward functions"},
      {"data.return_multi_modal_inputs", {}, "images and videos in prompts are not implemented"},
      {"data.validation_shuffle", {"false"}, "validation prompts are read in file order"},
      {"data.sampler.class_path", {"null"}, "a Python sampler class cannot be loaded; data.shuffle and data.seed order the prompts"},
      {"data.sampler.class_name", {}, "the class in data.sampler.class_path"},
      {"data.datagen.path", {"null"}, "a Python dataset generator cannot be loaded; prompts are JSON lines"},
      {"data.datagen.name", {}, "the generator in data.datagen.path"},
      {"data.tokenizer", {"null"}, "the tokenizer is the model's (actor.model.tokenizer_path)"},
      {"data.use_shm", {}, "copying the data files through /dev/shm before reading them"},
      {"data.dataloader_num_workers", {}, "PyTorch DataLoader processes; the controller here reads JSON lines itself"},
      {"data.filter_overlong_prompts_workers", {}, "processes for verl's filter; data.filter_overlong_prompts runs here without"},
      {"data.image_key", {}, "the column of images; multimodal prompts are not implemented"},
      {"data.image_patch_size", {}, "the patch size of images in prompts; multimodal prompts are not implemented"},
      {"data.video_key", {}, "the column of videos; multimodal prompts are not implemented"},
      {"data.trust_remote_code", {}, "the tokenizers here are built in; no code from a model directory runs"},
      // verl's SFT trainer.
      {"data.micro_batch_size", {"null"}, "verl's deprecated global micro-batch size; set data.micro_batch_size_per_gpu"},
      {"data.balance_dp_token", {"false"}, "weighting each data-parallel rank's SFT loss by its tokens, a key verl's SFT trainer accepts and does not read"},
      {"data.ignore_input_ids_mismatch", {},
       "verl's multi-turn SFT renders one message at a time and checks that against the whole conversation; "
       "conversations here are the whole rendering, cut at each message, so there is nothing to mismatch"},
      {"data.chat_template", {"null"}, "verl's deprecated SFT chat template; set actor.model.custom_chat_template"},
      {"data.pad_mode", {}, absl::StrCat("how verl's SFT dataset pads its rows, ", kSameResults)},
      {"actor.model.fsdp_config", {},
       absl::StrCat("FSDP's sharding and offloading (verl's SFT trainer); ", kWholeModels, kOptimizerShards,
                    kTrainingPrecision)},
      {"data.custom_cls.path", {"null"}, "a Python dataset class cannot be loaded; prompts are JSON lines"},
      {"data.custom_cls.name", {}, "the class in data.custom_cls.path"},
      {"trainer.esi_redundant_time", {}, "a time reserve for verl's elastic scheduling on Ascend"},
      {"trainer.ray_wait_register_center_timeout", {}, "Ray's registration wait; workers here register within runtime.register_timeout_s"},
      {"trainer.ray_timeline_filename", {"null"}, "Ray's timeline; traces here come from the benchmarks"},
      {"trainer.balance_batch", {}, "reordering the rows so that data-parallel ranks get equal token counts (speed only); rows are split over the ranks in order here"},
      {"trainer.default_hdfs_dir", {"null"}, "copying checkpoints to HDFS is not implemented"},
      {"trainer.use_legacy_worker_impl", {}, "which of verl's worker implementations runs"},
      {"ray_kwargs", {}, "Ray's start-up; workers here are processes the launcher starts"},
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
  std::vector<std::string> keys;
  for (const VerlInertKey& entry : Table()) keys.push_back(entry.key);
  return NamesBelow(key, keys);
}

bool VerlInertKeyAccepts(const VerlInertKey& entry, const std::string& value) {
  if (entry.accepted.empty()) return true;
  double number = 0;
  const bool numeric = absl::SimpleAtod(value, &number);
  for (const std::string& accepted : entry.accepted) {
    double accepted_number = 0;
    if (accepted == value || (numeric && absl::SimpleAtod(accepted, &accepted_number) && accepted_number == number)) {
      return true;
    }
  }
  return false;
}

}  // namespace rollout::config
