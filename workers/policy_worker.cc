#include "workers/policy_worker.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/batch_metrics.h"
#include "common/logging.h"
#include "common/rollout_correction_config.h"
#include "common/status_macros.h"
#include "models/json_prompt.h"
#include "tools/tool_config.h"
#include "workers/memory_metrics.h"
#include "workers/multi_turn_rollout.h"
#include "workers/optimizer_shards.h"
#include "workers/policy_batch.h"
#include "workers/reference_sync.h"
#include "workers/response_scores.h"
#include "workers/role_options.h"
#include "workers/rollout_batch.h"
#include "workers/sft_batch.h"

namespace rollout::workers {
namespace {

// Rows per rank of verl's mini-batch: ppo_mini_batch_size prompts x rollout.n, split
// over the data-parallel world.
absl::StatusOr<int64_t> MiniBatchRowsPerRank(const config::Recipe& recipe, int world) {
  const int64_t rows = int64_t{recipe.actor().ppo_mini_batch_size()} * recipe.rollout().n();
  if (rows % world != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "actor.ppo_mini_batch_size x rollout.n = ", rows, " rows do not split over ", world,
        " actor workers"));
  }
  return rows / world;
}

MultiTurnOptions MultiTurnOptionsOf(const config::Recipe& recipe) {
  const config::MultiTurnConfig& multi_turn = recipe.rollout().multi_turn();
  MultiTurnOptions options;
  options.max_assistant_turns = multi_turn.max_assistant_turns();
  options.max_user_turns = multi_turn.max_user_turns();
  options.max_parallel_calls = multi_turn.max_parallel_calls();
  options.max_tool_response_length = multi_turn.max_tool_response_length();
  options.tool_response_truncate_side = multi_turn.tool_response_truncate_side();
  options.max_response_length = recipe.data().max_response_length();
  return options;
}

// verl's rollout.over_sample_rate for a training rollout of `samples` samples: how many
// must finish before the rest are aborted (int(samples x (1 - rate)), at least one, as
// verl stops at its first completion when that is 0); 0 for no early end.
int64_t FinishTargetOf(double over_sample_rate, size_t samples) {
  if (over_sample_rate <= 0) return 0;
  return std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(samples) * (1 - over_sample_rate)));
}

// algorithm.rollout_correction's weights and rejection for the actor's policy-gradient
// loss (use_policy_gradient), aggregated as actor.loss_agg_mode says.
algorithms::RolloutPolicyGradientOptions RolloutPolicyGradientOf(const config::RolloutCorrectionConfig& correction,
                                                                 const config::ActorConfig& actor) {
  algorithms::RolloutPolicyGradientOptions options;
  if (!correction.rollout_is().empty()) {
    algorithms::RolloutIsOptions& importance = options.importance.emplace();
    importance.level = correction.rollout_is();
    importance.threshold = correction.rollout_is_threshold();
    importance.batch_normalize = correction.rollout_is_batch_normalize();
  }
  if (!correction.rollout_rs().empty() || correction.rollout_token_veto_threshold() > 0) {
    algorithms::RolloutRejectionOptions& rejection = options.rejection.emplace();
    rejection.level = correction.rollout_rs();
    const config::RejectionBounds bounds = config::RolloutRejectionBounds(correction);
    rejection.lower = bounds.lower;
    rejection.upper = bounds.upper;
    rejection.veto_threshold = correction.rollout_token_veto_threshold();
  }
  options.loss_agg_mode = actor.loss_agg_mode();
  if (actor.has_loss_scale_factor()) options.loss_scale_factor = actor.loss_scale_factor();
  return options;
}

// At debug level, where a generate_sequences call's time went on this worker: encoding
// the prompts, the engine (its host time split as EngineStats has it) and building the
// reply; the rest of the controller's timing_s/gen is transport.
void LogGenerateTimes(const engine::EngineStats& before, const engine::EngineStats& after,
                      std::chrono::steady_clock::time_point start,
                      std::chrono::steady_clock::time_point generate_start,
                      std::chrono::steady_clock::time_point generate_end, size_t rows) {
  using Seconds = std::chrono::duration<double>;
  ROLLOUT_LOG(DEBUG) << "generate_sequences: " << rows << " rows; prompts encoded in "
                     << Seconds(generate_start - start).count() << " s, engine "
                     << Seconds(generate_end - generate_start).count() << " s (schedule "
                     << after.schedule_seconds - before.schedule_seconds << ", model "
                     << after.model_seconds - before.model_seconds << " of which prefill steps "
                     << after.prefill_step_seconds - before.prefill_step_seconds << ", output "
                     << after.output_seconds - before.output_seconds << "; "
                     << after.steps - before.steps << " steps), batch built in "
                     << Seconds(std::chrono::steady_clock::now() - generate_end).count() << " s";
}

// What over-sampling cut from a training rollout: how many samples came back aborted.
void LogAborted(const std::vector<std::vector<RolloutResponse>>& responses, double over_sample_rate) {
  const std::string abort = engine::FinishReasonName(engine::FinishReason::kAbort);
  size_t aborted = 0, samples = 0;
  for (const std::vector<RolloutResponse>& group : responses) {
    samples += group.size();
    for (const RolloutResponse& response : group) aborted += response.finish_reason == abort ? 1 : 0;
  }
  ROLLOUT_LOG(INFO) << "generate_sequences: " << aborted << " of " << samples
                    << " samples aborted, empty (rollout.over_sample_rate " << over_sample_rate << ")";
}

}  // namespace

PolicyWorker::~PolicyWorker() = default;

absl::StatusOr<std::unique_ptr<PolicyWorker>> PolicyWorker::Create(const PolicyWorkerSetup& setup) {
  std::unique_ptr<PolicyWorker> worker(new PolicyWorker(setup));
  RETURN_IF_ERROR(worker->LoadModels());
  if (worker->Hosts("actor")) {
    const config::Recipe& recipe = setup.recipe;
    const std::string& mode = recipe.trainer().mode();
    if (mode == "sft") {
      RETURN_IF_ERROR(worker->CreateSftLearner(recipe.data().train_batch_size(), recipe.actor().optim(),
                                               setup.total_training_steps));
    } else if (mode == "dpo") {
      RETURN_IF_ERROR(worker->CreateDpoLearner());
    } else {
      RETURN_IF_ERROR(worker->CreateActor());
      const config::SftWarmStartConfig& warm = recipe.sft_warm_start();
      if (warm.total_training_steps() > 0) {
        RETURN_IF_ERROR(
            worker->CreateSftLearner(warm.train_batch_size(), warm.optim(), warm.total_training_steps()));
      }
    }
  }
  if (worker->Hosts("actor")) {
    // The learner a checkpoint holds; a PPO run's warm-start learner shards alike.
    const AdamW& optimizer = *worker->ActorCheckpoint().optimizer;
    if (optimizer.sharded()) ROLLOUT_LOG(INFO) << "actor: " << ShareOf(optimizer);
  }
  RETURN_IF_ERROR(worker->CheckReferenceSync());
  // SFT and DPO generate nothing: no KV cache.
  if (worker->Hosts("rollout") && setup.recipe.trainer().mode() == "ppo") {
    RETURN_IF_ERROR(worker->CreateEngine());
  }
  return worker;
}

absl::Status PolicyWorker::CheckReferenceSync() const {
  if (!setup_.recipe.ref().sync_ref_model()) return absl::OkStatus();
  if (TrainsLora(setup_.recipe.actor().model())) {
    return absl::InvalidArgumentError(
        "ref.sync_ref_model with LoRA: the reference is the base model under the adapters, which stays fixed "
        "(TRL refuses it with PEFT too); train without LoRA or turn the refresh off");
  }
  if (setup_.recipe.trainer().mode() == "ppo" && Hosts("actor") != Hosts("ref")) {
    return absl::InvalidArgumentError(
        "ref.sync_ref_model refreshes the reference from the actor's weights in one process: place the ref role "
        "on the actor's pool");
  }
  if (Hosts("actor") && ref_model_ == nullptr) {
    return absl::InvalidArgumentError(
        "ref.sync_ref_model needs a reference model to refresh: a KL term (actor.use_kl_loss or "
        "algorithm.use_kl_in_reward) or trainer.mode dpo");
  }
  return absl::OkStatus();
}

bool PolicyWorker::SyncsReference() const {
  return setup_.recipe.ref().sync_ref_model() && ref_model_ != nullptr;
}

absl::Status PolicyWorker::SyncReferenceIfDue(int64_t updates) {
  if (!SyncsReference() || !ReferenceSyncDue(setup_.recipe.ref(), updates)) return absl::OkStatus();
  return MixIntoReference(*model_, setup_.recipe.ref().ref_model_mixup_alpha(), ref_model_.get());
}

bool PolicyWorker::Hosts(const std::string& role) const {
  return std::find(setup_.roles.begin(), setup_.roles.end(), role) != setup_.roles.end();
}

absl::Status PolicyWorker::LoadModels() {
  const config::ModelConfig& model = setup_.recipe.actor().model();
  if (model.path().empty()) return absl::InvalidArgumentError("actor.model.path is not set");
  models::LoadOptions load;
  load.device = setup_.device;
  load.dtype = DtypeOf(model.dtype());
  ASSIGN_OR_RETURN(model_, models::CausalLM::Load(model.path(), load));
  model_->set_activation_checkpointing(model.enable_gradient_checkpointing());
  ASSIGN_OR_RETURN(tokenizer_, LoadActorTokenizer(setup_.recipe));
  if (!model.lora_adapter_path().empty()) {
    // verl's lora_adapter_path: the adapter's own configuration replaces the recipe's.
    ASSIGN_OR_RETURN(models::LoraConfig loaded, models::LoadLoraAdapter(*model_, model.lora_adapter_path()));
    ROLLOUT_LOG(INFO) << "LoRA starts from the adapter in " << model.lora_adapter_path() << " (r "
                      << loaded.options.rank << ", alpha " << loaded.options.alpha << ")";
    lora_ = std::move(loaded);
  } else if (model.lora_rank() > 0) {
    models::LoraConfig& lora = lora_.emplace();
    lora.options.rank = model.lora_rank();
    lora.options.alpha = model.lora_alpha();
    lora.options.dropout = model.lora_dropout();
    // A recipe from the loader always lists them; an empty list (a recipe built in code)
    // means the loader's default.
    if (model.target_modules_size() > 0) {
      lora.target_modules.assign(model.target_modules().begin(), model.target_modules().end());
    }
    lora.exclude_modules = model.exclude_modules();
    RETURN_IF_ERROR(models::AddLoraAdapters(*model_, lora, static_cast<uint64_t>(setup_.recipe.trainer().seed())));
  }
  const bool dpo = setup_.recipe.trainer().mode() == "dpo";
  const bool needs_ref = setup_.recipe.actor().use_kl_loss() || setup_.recipe.algorithm().use_kl_in_reward();
  if (((Hosts("ref") && needs_ref) || (Hosts("actor") && dpo)) && !lora_.has_value()) {
    ASSIGN_OR_RETURN(ref_model_, models::CausalLM::Load(model.path(), load));
  }
  prompt_encoding_.max_prompt_length = setup_.recipe.data().max_prompt_length();
  prompt_encoding_.truncation = setup_.recipe.data().truncation();
  return absl::OkStatus();
}

absl::Status PolicyWorker::CreateActor() {
  const config::ActorConfig& actor = setup_.recipe.actor();
  PolicyActorOptions options;
  ASSIGN_OR_RETURN(options.plan.mini_batch_rows, MiniBatchRowsPerRank(setup_.recipe, setup_.world));
  options.plan.micro_batch = MicroBatchSizeOf(config::UpdateActorBatching(setup_.recipe));
  options.plan.epochs = actor.ppo_epochs();
  options.plan.grad_clip = actor.grad_clip();
  options.plan.data_parallel = setup_.data_parallel;
  options.plan.shuffle = actor.shuffle();
  options.plan.shuffle_seed = static_cast<uint64_t>(
      actor.has_data_loader_seed() ? actor.data_loader_seed() : setup_.recipe.trainer().seed());
  options.temperature = setup_.recipe.rollout().temperature() > 0 ? setup_.recipe.rollout().temperature() : 1.0;
  options.policy_loss.loss_mode = actor.policy_loss().loss_mode();
  options.policy_loss.kl_cov_ratio = actor.policy_loss().kl_cov_ratio();
  options.policy_loss.ppo_kl_coef = actor.policy_loss().ppo_kl_coef();
  options.policy_loss.clip_cov_ratio = actor.policy_loss().clip_cov_ratio();
  options.policy_loss.clip_cov_lb = actor.policy_loss().clip_cov_lb();
  options.policy_loss.clip_cov_ub = actor.policy_loss().clip_cov_ub();
  options.seed = static_cast<uint64_t>(setup_.recipe.trainer().seed());
  const config::RolloutCorrectionConfig& correction = setup_.recipe.algorithm().rollout_correction();
  if (correction.use_policy_gradient()) options.rollout_policy_gradient = RolloutPolicyGradientOf(correction, actor);
  options.policy_loss.clip_ratio = actor.clip_ratio();
  options.policy_loss.clip_ratio_low = actor.clip_ratio_low();
  options.policy_loss.clip_ratio_high = actor.clip_ratio_high();
  options.policy_loss.clip_ratio_c = actor.clip_ratio_c();
  options.policy_loss.tau_pos = actor.tau_pos();
  options.policy_loss.tau_neg = actor.tau_neg();
  options.policy_loss.loss_agg_mode = actor.loss_agg_mode();
  if (actor.has_loss_scale_factor()) options.policy_loss.loss_scale_factor = actor.loss_scale_factor();
  options.entropy_coeff = actor.entropy_coeff();
  options.use_kl_loss = actor.use_kl_loss();
  options.kl_loss_coef = actor.kl_loss_coef();
  options.kl_loss_type = actor.kl_loss_type();
  options.adamw = AdamWFrom(actor.optim());
  options.lr_schedule = ScheduleFrom(actor.optim(), setup_.total_training_steps);
  ASSIGN_OR_RETURN(actor_, PolicyActor::Create(model_.get(), Trainable(), options));
  return absl::OkStatus();
}

NamedTensors PolicyWorker::NamedTrainable() {
  return lora_.has_value() ? models::NamedLoraParameters(*model_) : model_->NamedParameters();
}

std::vector<at::Tensor*> PolicyWorker::Trainable() {
  std::vector<at::Tensor*> trainable;
  for (auto& [name, tensor] : NamedTrainable()) trainable.push_back(tensor);
  return trainable;
}

absl::Status PolicyWorker::CreateSftLearner(int64_t batch, const config::OptimConfig& optim,
                                            int64_t total_training_steps) {
  const config::ActorConfig& actor = setup_.recipe.actor();
  if (batch % setup_.world != 0) {
    return absl::InvalidArgumentError(absl::StrCat("the SFT batch of ", batch, " rows does not split over ",
                                                   setup_.world, " workers"));
  }
  SftOptions options;
  options.plan.mini_batch_rows = batch / setup_.world;  // one optimizer step per batch
  options.plan.micro_batch = MicroBatchSizeOf(config::UpdateActorBatching(setup_.recipe));
  options.plan.grad_clip = actor.grad_clip();
  options.plan.data_parallel = setup_.data_parallel;
  options.adamw = AdamWFrom(optim);
  options.lr_schedule = ScheduleFrom(optim, total_training_steps);
  ASSIGN_OR_RETURN(sft_, SftLearner::Create(model_.get(), Trainable(), options));
  return absl::OkStatus();
}

absl::Status PolicyWorker::CreateDpoLearner() {
  const config::ActorConfig& actor = setup_.recipe.actor();
  const int64_t batch = setup_.recipe.data().train_batch_size();
  if (batch % setup_.world != 0) {
    return absl::InvalidArgumentError(absl::StrCat("data.train_batch_size (", batch,
                                                   ") does not split over ", setup_.world, " workers"));
  }
  const config::DpoConfig& dpo = setup_.recipe.algorithm().dpo();
  DpoOptions options;
  options.plan.mini_batch_rows = batch / setup_.world;  // one optimizer step per batch of pairs
  options.plan.micro_batch.rows = actor.ppo_micro_batch_size_per_gpu();
  options.plan.grad_clip = actor.grad_clip();
  options.plan.data_parallel = setup_.data_parallel;
  options.loss.set_beta(dpo.beta()).set_loss_type(dpo.loss_type()).set_label_smoothing(dpo.label_smoothing());
  options.rpo_alpha = dpo.rpo_alpha();
  options.adamw = AdamWFrom(actor.optim());
  options.lr_schedule = ScheduleFrom(actor.optim(), setup_.total_training_steps);
  ASSIGN_OR_RETURN(dpo_, DpoLearner::Create(model_.get(), Trainable(), options));
  return absl::OkStatus();
}

absl::StatusOr<PreferenceBatch> PolicyWorker::PreferenceBatchFrom(const Batch& input) const {
  SftRows chosen;
  ASSIGN_OR_RETURN(chosen.prompts, input.Strings("prompt"));
  ASSIGN_OR_RETURN(chosen.formats, input.Strings("prompt_format"));
  ASSIGN_OR_RETURN(chosen.response_formats, input.Strings("response_format"));
  SftRows rejected = chosen;
  ASSIGN_OR_RETURN(chosen.responses, input.Strings("chosen"));
  ASSIGN_OR_RETURN(rejected.responses, input.Strings("rejected"));
  PreferenceBatch pairs;
  ASSIGN_OR_RETURN(pairs.chosen, BoundedSftBatch(chosen));
  ASSIGN_OR_RETURN(pairs.rejected, BoundedSftBatch(rejected));
  pairs.chosen = MoveTo(pairs.chosen, setup_.device);
  pairs.rejected = MoveTo(pairs.rejected, setup_.device);
  const int64_t micro = setup_.recipe.actor().ppo_micro_batch_size_per_gpu();
  // The reference: the frozen copy, or (LoRA) this model without its adapters.
  std::optional<models::ScopedAdaptersDisabled> base;
  if (ref_model_ == nullptr) base.emplace(*model_);
  const models::CausalLM& reference = ref_model_ != nullptr ? *ref_model_ : *model_;
  ASSIGN_OR_RETURN(pairs.reference_chosen_logps, SequenceLogProbs(reference, pairs.chosen, micro));
  ASSIGN_OR_RETURN(pairs.reference_rejected_logps, SequenceLogProbs(reference, pairs.rejected, micro));
  return pairs;
}

absl::StatusOr<Batch> PolicyWorker::DpoUpdate(const Batch& input) {
  RETURN_IF_ERROR(pending_save_.Wait());
  ASSIGN_OR_RETURN(const PreferenceBatch pairs, PreferenceBatchFrom(input));
  ASSIGN_OR_RETURN(const auto metrics, dpo_->Update(pairs));
  RETURN_IF_ERROR(SyncReferenceIfDue(dpo_->updates()));
  Batch output;
  SetBatchMetrics(metrics, &output);
  return output;
}

absl::StatusOr<Batch> PolicyWorker::DpoEval(const Batch& input) const {
  ASSIGN_OR_RETURN(const PreferenceBatch pairs, PreferenceBatchFrom(input));
  ASSIGN_OR_RETURN(auto metrics, dpo_->Evaluate(pairs, setup_.recipe.actor().ppo_micro_batch_size_per_gpu()));
  metrics["val/weight"] = static_cast<double>(pairs.chosen.input_ids.size(0));
  Batch output;
  SetBatchMetrics(metrics, &output);
  return output;
}

absl::StatusOr<PolicyBatch> PolicyWorker::BoundedSftBatch(const SftRows& rows) const {
  const config::DataConfig& data = setup_.recipe.data();
  if (data.max_length() > 0) return BuildSftBatchWithin(*tokenizer_, rows, data.max_length(), data.truncation());
  return BuildSftBatch(*tokenizer_, rows, prompt_encoding_, data.max_response_length());
}

absl::StatusOr<PolicyBatch> PolicyWorker::SftBatchFrom(const Batch& input) const {
  SftRows rows;
  ASSIGN_OR_RETURN(rows.prompts, input.Strings("prompt"));
  ASSIGN_OR_RETURN(rows.formats, input.Strings("prompt_format"));
  ASSIGN_OR_RETURN(rows.responses, input.Strings("response"));
  ASSIGN_OR_RETURN(rows.response_formats, input.Strings("response_format"));
  ASSIGN_OR_RETURN(const PolicyBatch batch, BoundedSftBatch(rows));
  return MoveTo(batch, setup_.device);
}

absl::StatusOr<Batch> PolicyWorker::SftUpdate(const Batch& input) {
  RETURN_IF_ERROR(pending_save_.Wait());
  ASSIGN_OR_RETURN(const PolicyBatch batch, SftBatchFrom(input));
  ASSIGN_OR_RETURN(const auto metrics, sft_->Update(batch));
  WeightsChanged();
  Batch output;
  SetBatchMetrics(metrics, &output);
  return output;
}

absl::StatusOr<Batch> PolicyWorker::SftLoss(const Batch& input) const {
  ASSIGN_OR_RETURN(const PolicyBatch batch, SftBatchFrom(input));
  ASSIGN_OR_RETURN(const double loss, sft_->Loss(batch, setup_.recipe.actor().ppo_micro_batch_size_per_gpu()));
  Batch output;
  SetBatchMetrics({{"val/loss", loss}, {"val/weight", batch.response_mask.sum().item<double>()}}, &output);
  return output;
}

absl::Status PolicyWorker::CreateEngine() {
  const config::RolloutConfig& rollout = setup_.recipe.rollout();
  // As verl's rollout asserts: otherwise the engine would stop responses at the model's
  // context, short of max_response_length, without a word.
  const config::DataConfig& data = setup_.recipe.data();
  const int64_t sequence = int64_t{data.max_prompt_length()} + data.max_response_length();
  const int64_t positions = model_->config().max_position_embeddings;
  if (sequence > positions) {
    return absl::InvalidArgumentError(absl::StrCat(
        "data.max_prompt_length (", data.max_prompt_length(), ") + data.max_response_length (",
        data.max_response_length(), ") = ", sequence, " exceeds the ", positions,
        " positions of the model in actor.model.path (max_position_embeddings)"));
  }
  engine::EngineOptions options;
  options.block_size = rollout.block_size();
  options.gpu_memory_utilization = rollout.gpu_memory_utilization();
  options.cpu_kv_cache_bytes = static_cast<int64_t>(rollout.cpu_kv_cache_gib() * double(int64_t{1} << 30));
  options.max_num_seqs = rollout.max_num_seqs();
  options.max_num_batched_tokens = rollout.max_num_batched_tokens();
  options.enable_chunked_prefill = rollout.enable_chunked_prefill();
  options.enable_prefix_caching = rollout.enable_prefix_caching();
  options.enforce_eager = rollout.enforce_eager();
  ASSIGN_OR_RETURN(engine_, engine::Engine::Create(*model_, tokenizer_.get(), options));
  ASSIGN_OR_RETURN(tools_, tools::LoadMultiTurnTools(rollout.multi_turn()));
  ASSIGN_OR_RETURN(interactions_, tools::LoadMultiTurnInteractions(rollout.multi_turn()));
  return absl::OkStatus();
}

engine::SamplingParams PolicyWorker::SamplingFor(bool validate, int32_t n, uint64_t seed) const {
  const config::RolloutConfig& rollout = setup_.recipe.rollout();
  engine::SamplingParams params;
  params.n = n;
  params.max_tokens = setup_.recipe.data().max_response_length();
  params.ignore_eos = rollout.ignore_eos();
  params.seed = seed;
  if (validate) {
    const config::SamplingParams& val = rollout.val_kwargs();
    params.temperature = val.do_sample() ? val.temperature() : 0.0;
    params.top_k = val.top_k();
    params.top_p = val.top_p();
  } else {
    params.temperature = rollout.do_sample() ? rollout.temperature() : 0.0;
    params.top_k = rollout.top_k();
    params.top_p = rollout.top_p();
    params.min_p = rollout.min_p();
  }
  return params;
}

absl::StatusOr<Batch> PolicyWorker::GenerateSequences(const Batch& input) {
  const auto start = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(const std::vector<std::string> prompts, input.Strings("prompt"));
  ASSIGN_OR_RETURN(const std::vector<std::string> formats, input.Strings("prompt_format"));
  ASSIGN_OR_RETURN(const std::vector<std::string> uids, input.Strings("uid"));
  ASSIGN_OR_RETURN(const std::vector<std::string> seeds, input.Strings("seed"));
  const bool validate = input.Meta("validate") == "1";
  // Consecutive rows of one uid are one prompt's group: one request with n samples, so
  // the engine prefills the prompt once for all of them.
  std::vector<engine::GenerationRequest> requests;
  std::vector<std::vector<int32_t>> prompt_ids;
  const bool multi_turn = !tools_.empty() || !interactions_.empty();
  std::vector<models::ChatPrompt> conversations;  // multi-turn rollouts: each request's
  for (size_t row = 0; row < prompts.size(); ++row) {
    if (row > 0 && uids[row] == uids[row - 1]) {
      ++requests.back().params.n;
      continue;
    }
    const std::string where = absl::StrCat("prompt row ", row, " (uid ", uids[row], ")");
    if (formats[row] != "text" && formats[row] != "chat") {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": prompt_format '", formats[row], "'; expected text or chat"));
    }
    uint64_t seed = 0;
    if (!absl::SimpleAtoi(seeds[row], &seed)) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": seed '", seeds[row], "' is not an integer"));
    }
    ASSIGN_OR_RETURN(std::vector<int32_t> ids,
                     EncodePrompt(*tokenizer_, prompts[row], formats[row] == "chat", prompt_encoding_, where));
    if (multi_turn) {
      // EncodePrompt accepted the chat prompt; the controller gave it the tools.
      if (formats[row] != "chat") {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": a multi-turn rollout needs chat prompts, not text"));
      }
      ASSIGN_OR_RETURN(models::ChatPrompt conversation, models::ParseChatPromptText(prompts[row]));
      conversations.push_back(std::move(conversation));
    }
    engine::GenerationRequest request;
    request.prompt = ids;
    request.params = SamplingFor(validate, /*n=*/1, seed);
    requests.push_back(std::move(request));
    prompt_ids.push_back(std::move(ids));
  }
  const engine::EngineStats before = engine_->stats();
  const auto generate_start = std::chrono::steady_clock::now();
  std::vector<std::vector<RolloutResponse>> responses;
  const int64_t finish_target =
      validate ? 0 : FinishTargetOf(setup_.recipe.rollout().over_sample_rate(), prompts.size());
  if (!multi_turn) {
    ASSIGN_OR_RETURN(const std::vector<engine::RequestOutput> outputs,
                     engine_->Generate(requests, nullptr, finish_target));
    responses = ResponsesOf(outputs);
  } else {
    const GenerateReplies generate = [this](const std::vector<engine::GenerationRequest>& turn) {
      return engine_->Generate(turn);
    };
    MultiTurnOptions options = MultiTurnOptionsOf(setup_.recipe);
    options.finish_target = finish_target;
    ASSIGN_OR_RETURN(responses,
                     GenerateMultiTurn(generate, *tokenizer_, tools_, interactions_, conversations, requests, options));
  }
  const auto generate_end = std::chrono::steady_clock::now();
  if (finish_target > 0) LogAborted(responses, setup_.recipe.rollout().over_sample_rate());
  RolloutLayout layout;
  layout.max_prompt_length = setup_.recipe.data().max_prompt_length();
  layout.max_response_length = setup_.recipe.data().max_response_length();
  layout.pad_token_id = tokenizer_->pad_token_id().value_or(0);
  ASSIGN_OR_RETURN(Batch batch, BuildRolloutBatch(prompt_ids, responses, layout));
  if (input.Meta("with_prompt_text") == "1") {
    // What verl's generation dumps call the input: the prompt as the model saw it.
    std::vector<std::string> prompt_texts;
    for (size_t i = 0; i < prompt_ids.size(); ++i) {
      const std::string text = tokenizer_->Decode(prompt_ids[i], /*skip_special_tokens=*/true);
      prompt_texts.insert(prompt_texts.end(), responses[i].size(), text);
    }
    RETURN_IF_ERROR(batch.AddStrings("prompt_text", std::move(prompt_texts)));
  }
  LogGenerateTimes(before, engine_->stats(), start, generate_start, generate_end, prompts.size());
  return batch;
}


absl::StatusOr<Batch> PolicyWorker::ComputeLogProb(const Batch& input) const {
  ASSIGN_OR_RETURN(const PolicyBatch batch, PolicyBatchFromColumns(input));
  models::ScoreExtras extras = models::kWithEntropy;
  extras.sum_pi_squared = setup_.recipe.actor().calculate_sum_pi_squared();
  ASSIGN_OR_RETURN(const models::TokenScores scores,
                   actor_->ComputeLogProbs(MoveTo(batch, setup_.device),
                                           MicroBatchSizeOf(config::OldLogProbBatching(setup_.recipe)), extras));
  Batch output;
  RETURN_IF_ERROR(output.AddTensor("old_log_probs", scores.log_probs.cpu()));
  RETURN_IF_ERROR(output.AddTensor("entropys", scores.entropy.cpu()));
  if (extras.sum_pi_squared) RETURN_IF_ERROR(output.AddTensor("sum_pi_squared", scores.sum_pi_squared.cpu()));
  return output;
}

absl::StatusOr<Batch> PolicyWorker::ComputeRefLogProb(const Batch& input) const {
  ASSIGN_OR_RETURN(const PolicyBatch batch, PolicyBatchFromColumns(input));
  const double temperature =
      setup_.recipe.rollout().temperature() > 0 ? setup_.recipe.rollout().temperature() : 1.0;
  const MicroBatchSize micro = MicroBatchSizeOf(config::RefLogProbBatching(setup_.recipe));
  if (ref_model_ == nullptr && !lora_.has_value()) {
    return absl::FailedPreconditionError(
        "ref.compute_ref_log_prob: no reference policy was loaded; it is loaded when "
        "actor.use_kl_loss or algorithm.use_kl_in_reward is set");
  }
  absl::StatusOr<models::TokenScores> scores;
  if (ref_model_ != nullptr) {
    scores = ScoreResponsesNoGrad(*ref_model_, MoveTo(batch, setup_.device), micro, models::kLogProbsOnly, temperature);
  } else {
    // LoRA: the reference is the base model, i.e. this model without its adapters.
    models::ScopedAdaptersDisabled base(*model_);
    scores = ScoreResponsesNoGrad(*model_, MoveTo(batch, setup_.device), micro, models::kLogProbsOnly, temperature);
  }
  if (!scores.ok()) return scores.status();
  Batch output;
  RETURN_IF_ERROR(output.AddTensor("ref_log_prob", scores->log_probs.cpu()));
  return output;
}

absl::StatusOr<Batch> PolicyWorker::UpdateActor(const Batch& input) {
  RETURN_IF_ERROR(pending_save_.Wait());
  ASSIGN_OR_RETURN(const PolicyBatch batch,
                   PolicyBatchFromColumns(input, /*for_update=*/true, setup_.recipe.actor().use_kl_loss()));
  int64_t on_policy_rows = 0;
  const std::string on_policy = input.Meta("on_policy_rows");
  if (!on_policy.empty() && !absl::SimpleAtoi(on_policy, &on_policy_rows)) {
    return absl::InvalidArgumentError(
        absl::StrCat("actor.update_actor: meta on_policy_rows '", on_policy, "' is not an integer"));
  }
  ASSIGN_OR_RETURN(auto metrics, actor_->Update(MoveTo(batch, setup_.device), on_policy_rows));
  WeightsChanged();
  RETURN_IF_ERROR(SyncReferenceIfDue(actor_->updates()));
  AddMemoryMetrics(setup_.device, &metrics);
  Batch output;
  SetBatchMetrics(metrics, &output);
  return output;
}

void PolicyWorker::WeightsChanged() {
  // The rollout reads the actor's weights directly; only KV cached under the old
  // weights would outlive an update.
  if (engine_ != nullptr) engine_->DropPrefixCache();
}

absl::Status PolicyWorker::RegisterMethods(MethodRegistry* registry) {
  if (engine_ != nullptr) {
    RETURN_IF_ERROR(registry->Register("rollout.generate_sequences",
                                       [this](const Batch& in) { return GenerateSequences(in); }));
  }
  if (dpo_ != nullptr) {
    RETURN_IF_ERROR(registry->Register("actor.dpo_update", [this](const Batch& in) { return DpoUpdate(in); }));
    RETURN_IF_ERROR(registry->Register("actor.dpo_eval", [this](const Batch& in) { return DpoEval(in); }));
  }
  // SFT runs, and PPO runs with an SFT warm start.
  if (sft_ != nullptr) {
    RETURN_IF_ERROR(registry->Register("actor.sft_update", [this](const Batch& in) { return SftUpdate(in); }));
    RETURN_IF_ERROR(registry->Register("actor.sft_loss", [this](const Batch& in) { return SftLoss(in); }));
  }
  if (actor_ != nullptr) {
    RETURN_IF_ERROR(registry->Register("actor.compute_log_prob",
                                       [this](const Batch& in) { return ComputeLogProb(in); }));
    RETURN_IF_ERROR(registry->Register("actor.update_actor",
                                       [this](const Batch& in) { return UpdateActor(in); }));
  }
  if (Hosts("actor")) {
    RETURN_IF_ERROR(registry->Register("actor.save_checkpoint",
                                       [this](const Batch& in) { return SaveCheckpoint(in); }));
    RETURN_IF_ERROR(registry->Register("actor.load_checkpoint",
                                       [this](const Batch& in) { return LoadCheckpoint(in); }));
    RETURN_IF_ERROR(registry->Register("actor.wait_checkpoint",
                                       [this](const Batch& in) { return WaitCheckpoint(in); }));
  }
  RETURN_IF_ERROR(RegisterWeightSyncMethods(registry));
  if (Hosts("ref")) {
    RETURN_IF_ERROR(registry->Register("ref.compute_ref_log_prob",
                                       [this](const Batch& in) { return ComputeRefLogProb(in); }));
  }
  return absl::OkStatus();
}

}  // namespace rollout::workers
