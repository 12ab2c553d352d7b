#include "controller/ppo_trainer.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "controller/batch_splits.h"
#include "controller/generation_dump.h"
#include "controller/group_sampling.h"
#include "controller/overlong_prompts.h"
#include "controller/ppo_step.h"
#include "controller/ppo_worker_calls.h"
#include "controller/step_scores.h"
#include "controller/trainer_common.h"
#include "controller/validation_metrics.h"
#include "controller/weight_sync.h"
#include "tools/interaction.h"
#include "tools/tool_config.h"

namespace rollout::controller {
namespace {

// Seeds of a step's prompt groups: group i of step s samples from seed base(s) + i.
constexpr int64_t kSeedStride = 1000003;

// Runs `phase`, adding its wall time to metrics' timing_s/<name> (a step that generates
// several times, with algorithm.filter_groups, sums its rounds).
absl::Status Timed(const std::string& name, std::map<std::string, double>* metrics,
                   const std::function<absl::Status()>& phase) {
  const auto start = std::chrono::steady_clock::now();
  absl::Status status = phase();
  (*metrics)["timing_s/" + name] +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!status.ok()) return absl::Status(status.code(), absl::StrCat(name, ": ", status.message()));
  return absl::OkStatus();
}

// A reward model group exactly with reward_model.enable, and nothing its scores would
// silently skip.
absl::Status CheckRewardModel(const PpoTrainerSetup& setup) {
  const config::Recipe& recipe = setup.recipe;
  if (!recipe.reward_model().enable()) {
    if (setup.reward_model == nullptr) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat("placement.reward_model puts a reward model on pool '",
                                                   setup.reward_model->pool(),
                                                   "', but reward_model.enable is false: set it or remove the placement"));
  }
  if (setup.reward_model == nullptr) {
    return absl::InvalidArgumentError("reward_model.enable needs a reward model group (placement.reward_model)");
  }
  if (recipe.reward().overlong_buffer().enable()) {
    return absl::InvalidArgumentError(
        "reward.overlong_buffer shapes the rule-based scores of reward.*, but with reward_model.enable the reward "
        "model's scores train (verl's DAPO manager returns them unshaped): turn one off");
  }
  return CheckRewardModelBatching(recipe);
}

// The optimal token baseline estimators read sum_pi_squared, which only the actor's
// old-log-prob pass computes.
absl::Status CheckSumPiSquared(const config::Recipe& recipe) {
  const std::string& estimator = recipe.algorithm().adv_estimator();
  if (absl::StrContains(estimator, "optimal_token_baseline") && !recipe.actor().calculate_sum_pi_squared()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "algorithm.adv_estimator=", estimator, " needs each response token's sum_pi_squared from the actor: set "
        "actor.calculate_sum_pi_squared=true"));
  }
  if (recipe.actor().calculate_sum_pi_squared() && recipe.algorithm().rollout_correction().bypass_mode()) {
    return absl::InvalidArgumentError(
        "actor.calculate_sum_pi_squared with algorithm.rollout_correction.bypass_mode: bypass mode skips the "
        "actor's old-log-prob pass, which computes sum_pi_squared; turn one off");
  }
  return absl::OkStatus();
}

// The worker groups against the recipe: each group's batching (controller/batch_splits.h)
// and a critic exactly when the estimator needs one (verl's use_critic: gae).
absl::Status CheckWorkers(const PpoTrainerSetup& setup) {
  const config::Recipe& recipe = setup.recipe;
  RETURN_IF_ERROR(CheckPolicyBatching(recipe, setup.policy->world_size()));
  if (recipe.algorithm().filter_groups().enable() && recipe.algorithm().use_kl_in_reward()) {
    return absl::InvalidArgumentError(
        "algorithm.filter_groups with algorithm.use_kl_in_reward: the KL penalty needs the log-probs of rows "
        "the filter has not chosen yet; use the KL loss (actor.use_kl_loss) or turn one off");
  }
  RETURN_IF_ERROR(CheckRolloutCorrection(recipe.algorithm().rollout_correction()));
  const std::string& estimator = recipe.algorithm().adv_estimator();
  RETURN_IF_ERROR(CheckSumPiSquared(recipe));
  if (recipe.algorithm().use_pf_ppo() && estimator != "gae") {
    return absl::InvalidArgumentError(absl::StrCat("algorithm.use_pf_ppo resamples the batch by its GAE advantages' "
                                                   "scores, as verl does only with adv_estimator=gae; got ", estimator));
  }
  // Validation alone places neither a critic nor a reward model (placement.h).
  if (recipe.trainer().val_only()) return absl::OkStatus();
  if (estimator == "gae" && setup.critic == nullptr) {
    return absl::InvalidArgumentError(
        "algorithm.adv_estimator=gae needs a critic, and the placement has none (placement.critic)");
  }
  if (estimator != "gae" && setup.critic != nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "placement.critic puts a critic on pool '", setup.critic->pool(), "', but algorithm.adv_estimator=",
        estimator, " does not use one: remove placement.critic or use gae"));
  }
  RETURN_IF_ERROR(CheckRewardModel(setup));
  if (setup.critic == nullptr) return absl::OkStatus();
  return CheckCriticBatching(recipe, setup.critic->world_size());
}

}  // namespace

absl::StatusOr<std::unique_ptr<PpoTrainer>> PpoTrainer::Create(const PpoTrainerSetup& setup) {
  const config::Recipe& recipe = setup.recipe;
  if (setup.policy == nullptr || setup.reward == nullptr) {
    return absl::InvalidArgumentError("PpoTrainer needs a policy worker group and a reward runner");
  }
  PpoTrainerSetup groups = setup;
  if (groups.rollout == nullptr) groups.rollout = groups.policy;
  if (groups.ref == nullptr) groups.ref = groups.policy;
  RETURN_IF_ERROR(CheckWorkers(groups));
  std::unique_ptr<PpoTrainer> trainer(new PpoTrainer(groups));
  trainer->rollout_weights_stale_ = groups.rollout != groups.policy;
  DatasetOptions options = DatasetOptionsFrom(recipe.data());
  // The multi-turn rollout's tools: every prompt offers them (the workers run them).
  ASSIGN_OR_RETURN(tools::ToolSet loaded_tools, tools::LoadMultiTurnTools(recipe.rollout().multi_turn()));
  const auto tool_set = std::make_shared<const tools::ToolSet>(std::move(loaded_tools));
  options.offered_tools = tool_set->schemas();
  options.check_tools_kwargs = [tool_set](const nlohmann::ordered_json& tools_kwargs,
                                          const std::vector<std::string>& offered) {
    return tool_set->CheckToolsKwargs(tools_kwargs, offered);
  };
  ASSIGN_OR_RETURN(tools::InteractionSet loaded_interactions,
                   tools::LoadMultiTurnInteractions(recipe.rollout().multi_turn()));
  if (!loaded_interactions.empty()) {
    const auto interactions = std::make_shared<const tools::InteractionSet>(std::move(loaded_interactions));
    options.check_interaction_kwargs = [interactions](const nlohmann::ordered_json& interaction_kwargs) {
      return interactions->CheckInteractionKwargs(interaction_kwargs);
    };
  }
  options.single_turn_by_default = recipe.rollout().agent().default_agent_loop() == "single_turn_agent";
  ASSIGN_OR_RETURN(trainer->train_, LoadPromptDataset(Files(recipe.data().train_files()), options));
  LogSkippedRows(trainer->train_, "training");
  CapRows(recipe.data().train_max_samples(), recipe.data(), "training", &trainer->train_);
  if (recipe.data().val_files_size() > 0) {
    ASSIGN_OR_RETURN(trainer->val_, LoadPromptDataset(Files(recipe.data().val_files()), options));
    LogSkippedRows(trainer->val_, "validation");
    CapRows(recipe.data().val_max_samples(), recipe.data(), "validation", &trainer->val_);
  }
  if (recipe.data().filter_overlong_prompts()) {
    const int64_t max_length = recipe.data().max_prompt_length();
    RETURN_IF_ERROR(DropOverlongPrompts(*groups.rollout, max_length, "training", &trainer->train_));
    if (!trainer->val_.examples.empty()) {
      RETURN_IF_ERROR(DropOverlongPrompts(*groups.rollout, max_length, "validation", &trainer->val_));
    }
  }
  DataLoaderOptions loader;
  // With dynamic sampling the loader hands out generation rounds (verl's DAPO trainer).
  loader.batch_size = recipe.algorithm().filter_groups().enable() && recipe.data().gen_batch_size() > 0
                          ? recipe.data().gen_batch_size()
                          : recipe.data().train_batch_size();
  loader.shuffle = recipe.data().shuffle();
  loader.seed = recipe.data().seed();
  ASSIGN_OR_RETURN(DataLoader created, DataLoader::Create(static_cast<int64_t>(trainer->train_.examples.size()), loader));
  trainer->loader_ = std::make_unique<DataLoader>(std::move(created));
  trainer->total_steps_ = TotalTrainingSteps(recipe.trainer(), trainer->loader_->steps_per_epoch());
  if (recipe.algorithm().use_kl_in_reward()) {
    const config::KlControlConfig& kl = recipe.algorithm().kl_ctrl();
    ASSIGN_OR_RETURN(trainer->kl_controller_,
                     algorithms::MakeKlController(algorithms::KlControlOptions()
                                                      .set_type(kl.type())
                                                      .set_kl_coef(kl.kl_coef())
                                                      .set_horizon(kl.horizon())
                                                      .set_target_kl(kl.target_kl())));
  }
  // Each pool once: colocated roles are initialised together in their processes, and a
  // separate rollout's workers join the weight-sync group with the actor's.
  std::vector<WorkerGroup*> pools;
  for (WorkerGroup* group : {groups.policy, groups.rollout, groups.ref, groups.critic, groups.reward_model}) {
    if (group != nullptr && std::find(pools.begin(), pools.end(), group) == pools.end()) pools.push_back(group);
  }
  ASSIGN_OR_RETURN(trainer->weight_transport_,
                   InitRolesWithWeightSync(pools, *groups.policy, *groups.rollout, trainer->total_steps_));
  std::vector<CheckpointedRole> roles = {{"actor", groups.policy}};
  if (groups.critic != nullptr) roles.push_back({"critic", groups.critic});
  ASSIGN_OR_RETURN(trainer->checkpoints_, TrainerCheckpoints::Create(recipe, std::move(roles)));
  ASSIGN_OR_RETURN(trainer->rollout_skip_, RolloutSkip::Create(recipe));
  RETURN_IF_ERROR(trainer->Resume());
  return trainer;
}

absl::Status PpoTrainer::Resume() {
  ASSIGN_OR_RETURN(const std::optional<TrainerState> state, checkpoints_->Resume());
  if (!state.has_value()) return absl::OkStatus();
  RETURN_IF_ERROR(loader_->Restore(state->data_position));
  if (kl_controller_ != nullptr && state->kl_coef.has_value()) {
    RETURN_IF_ERROR(kl_controller_->RestoreValue(*state->kl_coef));
  }
  global_step_ = state->global_step;
  resumed_ = true;
  return absl::OkStatus();
}

absl::StatusOr<Batch> PpoTrainer::PromptRows(const std::vector<const PromptExample*>& examples, int n,
                                             const std::vector<std::string>& uids,
                                             int64_t seed_base) const {
  std::vector<std::string> prompts, formats, uid_column, seeds;
  for (size_t i = 0; i < examples.size(); ++i) {
    for (int s = 0; s < n; ++s) {
      prompts.push_back(examples[i]->prompt.content);
      formats.push_back(examples[i]->prompt.format == Prompt::Format::kChat ? "chat" : "text");
      uid_column.push_back(uids[i]);
      seeds.push_back(absl::StrCat(seed_base + static_cast<int64_t>(i)));
    }
  }
  Batch rows;
  RETURN_IF_ERROR(rows.AddStrings("prompt", std::move(prompts)));
  RETURN_IF_ERROR(rows.AddStrings("prompt_format", std::move(formats)));
  RETURN_IF_ERROR(rows.AddStrings("uid", std::move(uid_column)));
  RETURN_IF_ERROR(rows.AddStrings("seed", std::move(seeds)));
  return rows;
}

absl::StatusOr<Batch> PpoTrainer::GenerateAndScore(const std::vector<const PromptExample*>& examples,
                                                   const std::vector<std::string>& uids, int64_t seed_base,
                                                   std::map<std::string, double>* metrics,
                                                   std::vector<double>* filter_metric) const {
  const config::Recipe& recipe = setup_.recipe;
  const int n = recipe.rollout().n();
  const int64_t step = global_step_ + 1;
  Batch rows;
  Batch batch;
  const bool dump = !recipe.trainer().rollout_data_dir().empty();
  std::optional<ReplayedGeneration> replay;
  std::vector<const PromptExample*> step_examples = examples;
  RETURN_IF_ERROR(Timed("gen", metrics, [&]() -> absl::Status {
    if (rollout_skip_ != nullptr) {
      ASSIGN_OR_RETURN(replay, rollout_skip_->Replay(step, examples.size()));
      if (replay.has_value()) {
        step_examples.clear();
        for (const PromptExample& example : replay->examples) step_examples.push_back(&example);
      }
    }
    ASSIGN_OR_RETURN(rows, PromptRows(step_examples, n, uids, seed_base));
    // A dump for rollout.skip keeps the prompt text that trainer.rollout_data_dir may
    // want when it is replayed.
    if (dump || rollout_skip_ != nullptr) rows.SetMeta("with_prompt_text", "1");
    if (replay.has_value()) {
      batch = replay->generated;
    } else {
      ASSIGN_OR_RETURN(batch, setup_.rollout->CallDpSplit("rollout.generate_sequences", rows));
      if (rollout_skip_ != nullptr && rollout_skip_->Dumps(step)) {
        RETURN_IF_ERROR(rollout_skip_->Dump(step, step_examples, batch));
      }
    }
    ASSIGN_OR_RETURN(const Batch uid, rows.Select({"uid"}));
    return batch.Union(uid);
  }));
  RETURN_IF_ERROR(Timed("reward", metrics, [&]() -> absl::Status {
    // The reward model's scores when there is one (verl's reward managers return them).
    ASSIGN_OR_RETURN(const std::vector<rewards::ScoredSample> scored,
                     setup_.reward_model != nullptr
                         ? ScoreWithRewardModel(*setup_.reward_model, batch, rows)
                         : ScoreWithRewardRunner(*setup_.reward, batch, step_examples, n, metrics));
    if (dump) RETURN_IF_ERROR(AddGenerationDumpColumns(step_examples, n, scored, &batch));
    std::vector<double> scores;
    for (const rewards::ScoredSample& sample : scored) scores.push_back(sample.output.score);
    ASSIGN_OR_RETURN(const at::Tensor response_mask, batch.Tensor("response_mask"));
    ASSIGN_OR_RETURN(const at::Tensor attention_mask, batch.Tensor("attention_mask"));
    const at::Tensor response_attention =
        attention_mask.narrow(1, attention_mask.size(1) - response_mask.size(1), response_mask.size(1));
    ASSIGN_OR_RETURN(scores, ShapeOverlong(recipe, scores, response_attention, metrics));
    if (filter_metric != nullptr) {
      ASSIGN_OR_RETURN(*filter_metric, FilterMetricValues(recipe.algorithm().filter_groups().metric(), scored, scores));
    }
    ASSIGN_OR_RETURN(const at::Tensor token_scores, TokenLevelScores(scores, response_mask));
    return batch.AddTensor("token_level_scores", token_scores);
  }));
  return batch;
}

absl::Status PpoTrainer::PrepareUpdates(Batch* batch, std::map<std::string, double>* metrics) {
  const config::Recipe& recipe = setup_.recipe;
  WorkerGroup& policy = *setup_.policy;
  if (recipe.algorithm().rollout_correction().bypass_mode()) {
    // The rollout's log-probs anchor the ratio (verl's bypass mode): no forward here.
    ASSIGN_OR_RETURN(const at::Tensor rollout_log_probs, batch->Tensor("rollout_log_probs"));
    RETURN_IF_ERROR(batch->AddTensor("old_log_probs", rollout_log_probs));
  } else {
    RETURN_IF_ERROR(Timed("old_log_prob", metrics, [&]() -> absl::Status {
      ASSIGN_OR_RETURN(const std::optional<double> entropy,
                       ComputeOldLogProbs(policy, OnPolicyRowsPerRank(recipe, policy.world_size()), batch));
      // Without scored rows actor/entropy comes from the update.
      if (entropy.has_value()) (*metrics)["actor/entropy"] = *entropy;
      return absl::OkStatus();
    }));
    RETURN_IF_ERROR(ApplyRolloutCorrection(recipe.algorithm().rollout_correction(), batch, metrics));
  }
  if (recipe.actor().use_kl_loss() || recipe.algorithm().use_kl_in_reward()) {
    RETURN_IF_ERROR(Timed("ref", metrics, [&] { return ComputeRefLogProbs(*setup_.ref, batch); }));
  }
  if (setup_.critic != nullptr) {
    RETURN_IF_ERROR(Timed("values", metrics, [&] { return ComputeValues(*setup_.critic, batch); }));
  }
  return Timed("adv", metrics, [&]() -> absl::Status {
    AdvantageStep step;
    step.adv_estimator = recipe.algorithm().adv_estimator();
    step.options.gamma = recipe.algorithm().gamma();
    step.options.lam = recipe.algorithm().lam();
    step.options.norm_adv_by_std_in_grpo = recipe.algorithm().norm_adv_by_std_in_grpo();
    step.use_kl_in_reward = recipe.algorithm().use_kl_in_reward();
    step.kl_penalty = recipe.algorithm().kl_penalty();
    step.kl_controller = kl_controller_.get();
    ASSIGN_OR_RETURN(const auto kl_metrics, ComputeAdvantageColumns(step, batch));
    metrics->insert(kl_metrics.begin(), kl_metrics.end());
    return ResampleForPfPpo(recipe.algorithm(), static_cast<uint64_t>(recipe.trainer().seed()), global_step_, batch);
  });
}

absl::Status PpoTrainer::UpdateModels(const Batch& batch, std::map<std::string, double>* metrics) {
  if (checkpoints_->save_pending()) {
    // The updates change what an asynchronous save is writing.
    RETURN_IF_ERROR(Timed("save_checkpoint_wait", metrics, [&] { return checkpoints_->FinishSave(); }));
  }
  if (setup_.critic != nullptr) {
    RETURN_IF_ERROR(Timed("update_critic", metrics, [&]() -> absl::Status {
      ASSIGN_OR_RETURN(const auto critic_metrics, UpdateCritic(*setup_.critic, batch));
      metrics->insert(critic_metrics.begin(), critic_metrics.end());
      return absl::OkStatus();
    }));
  }
  if (!ActorUpdatesAt(global_step_ + 1, setup_.recipe.trainer().critic_warmup())) return absl::OkStatus();
  return Timed("update_actor", metrics, [&]() -> absl::Status {
    const int64_t on_policy_rows = OnPolicyRowsPerRank(setup_.recipe, setup_.policy->world_size());
    ASSIGN_OR_RETURN(const auto actor_metrics, UpdateActor(*setup_.policy, batch,
                                                           setup_.recipe.actor().use_kl_loss(), on_policy_rows));
    metrics->insert(actor_metrics.begin(), actor_metrics.end());
    rollout_weights_stale_ = setup_.rollout != setup_.policy;
    return absl::OkStatus();
  });
}

absl::Status PpoTrainer::SyncRolloutWeights(std::map<std::string, double>* metrics) {
  if (!rollout_weights_stale_) return absl::OkStatus();
  RETURN_IF_ERROR(Timed("update_weights", metrics,
                        [&] { return SendWeights(*setup_.policy, *setup_.rollout, weight_transport_); }));
  rollout_weights_stale_ = false;
  return absl::OkStatus();
}

absl::StatusOr<std::optional<Batch>> PpoTrainer::StepBatch(std::map<std::string, double>* metrics) {
  const config::Recipe& recipe = setup_.recipe;
  const config::FilterGroupsConfig& filter = recipe.algorithm().filter_groups();
  KeptGroups kept(recipe.data().train_batch_size(), recipe.rollout().n());
  for (int64_t round = 1;; ++round) {
    // verl's DAPO loop ends with the data's epochs, wherever the step stands.
    if (filter.enable() && loader_->position().epoch >= recipe.trainer().total_epochs()) return std::nullopt;
    // Seeds and uids follow the loader's batch: the same on resume, distinct per round.
    const DataLoader::Position position = loader_->position();
    const int64_t batch_index = position.epoch * loader_->steps_per_epoch() + position.batch_in_epoch;
    std::vector<const PromptExample*> examples;
    std::vector<std::string> uids;
    for (int64_t index : loader_->Next()) {
      examples.push_back(&train_.examples[static_cast<size_t>(index)]);
      uids.push_back(filter.enable() ? absl::StrCat("step", global_step_ + 1, "-", round, "-", examples.size() - 1)
                                     : absl::StrCat("step", global_step_ + 1, "-", examples.size() - 1));
    }
    const int64_t seed_base = int64_t{recipe.rollout().seed()} * kSeedStride +
                              (batch_index + 1) * static_cast<int64_t>(examples.size());
    std::vector<double> filter_metric;
    ASSIGN_OR_RETURN(Batch generated, GenerateAndScore(examples, uids, seed_base, metrics,
                                                       filter.enable() ? &filter_metric : nullptr));
    if (!filter.enable()) return std::optional<Batch>(std::move(generated));
    RETURN_IF_ERROR(kept.Add(generated, filter_metric));
    (*metrics)["train/num_gen_batches"] = static_cast<double>(round);
    if (kept.full()) {
      ASSIGN_OR_RETURN(Batch batch, kept.Take());
      return std::optional<Batch>(std::move(batch));
    }
    if (filter.max_num_gen_batches() > 0 && round >= filter.max_num_gen_batches()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "after ", round, " generation rounds (algorithm.filter_groups.max_num_gen_batches) only ",
          kept.kept_prompts(), " of the step's ", recipe.data().train_batch_size(),
          " prompts have responses that differ in ", filter.metric(),
          ": the data are too easy or too hard for the policy"));
    }
  }
}

absl::StatusOr<bool> PpoTrainer::Step(MetricsLogger& logger) {
  const config::Recipe& recipe = setup_.recipe;
  std::map<std::string, double> metrics;
  const int64_t epoch = loader_->position().epoch;
  const auto step_start = std::chrono::steady_clock::now();
  RETURN_IF_ERROR(SyncRolloutWeights(&metrics));
  ASSIGN_OR_RETURN(std::optional<Batch> step_batch, StepBatch(&metrics));
  if (!step_batch.has_value()) return false;
  Batch& batch = *step_batch;
  RETURN_IF_ERROR(PrepareUpdates(&batch, &metrics));
  RETURN_IF_ERROR(UpdateModels(batch, &metrics));
  ASSIGN_OR_RETURN(const auto data_metrics, DataMetrics(batch));
  metrics.insert(data_metrics.begin(), data_metrics.end());
  ASSIGN_OR_RETURN(const auto proxy_metrics, VarianceProxyMetrics(batch, metrics));
  metrics.insert(proxy_metrics.begin(), proxy_metrics.end());
  ++global_step_;
  const double step_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - step_start).count();
  ASSIGN_OR_RETURN(const at::Tensor attention_mask, batch.Tensor("attention_mask"));
  const double tokens = attention_mask.sum().item<double>();
  metrics["timing_s/step"] = step_seconds;
  metrics["perf/total_num_tokens"] = tokens;
  metrics["perf/throughput"] = tokens / step_seconds / setup_.policy->world_size();
  metrics["training/global_step"] = static_cast<double>(global_step_);
  metrics["training/epoch"] = static_cast<double>(epoch);
  if (const std::string& dir = recipe.trainer().rollout_data_dir(); !dir.empty()) {
    RETURN_IF_ERROR(Timed("dump_rollout_generations", &metrics, [&]() -> absl::Status {
      ASSIGN_OR_RETURN(const std::vector<GenerationRecord> records, GenerationRecordsOf(batch));
      return WriteGenerationDump(dir, global_step_, records);
    }));
  }
  if (checkpoints_->SaveDue(global_step_, total_steps_)) {
    const std::optional<double> kl_coef =
        kl_controller_ != nullptr ? std::optional<double>(kl_controller_->value()) : std::nullopt;
    RETURN_IF_ERROR(Timed("save_checkpoint", &metrics, [&] {
      return checkpoints_->Save(TrainerStateOf(recipe, global_step_, loader_->position(), kl_coef));
    }));
  }
  std::vector<GenerationSample> generations;
  if (!val_.examples.empty() && ValidatesAfter(recipe.trainer(), global_step_, total_steps_)) {
    RETURN_IF_ERROR(Timed("testing", &metrics, [&]() -> absl::Status {
      ASSIGN_OR_RETURN(const auto val_metrics, Validate(&generations));
      metrics.insert(val_metrics.begin(), val_metrics.end());
      return absl::OkStatus();
    }));
  }
  RETURN_IF_ERROR(logger.Log(global_step_, metrics));
  RETURN_IF_ERROR(logger.LogGenerations(global_step_, generations));
  return true;
}

absl::Status PpoTrainer::Fit(MetricsLogger& logger) {
  if (global_step_ >= total_steps_) {
    ROLLOUT_LOG(INFO) << "nothing left to train: resumed at step " << global_step_ << " of " << total_steps_;
    return absl::OkStatus();
  }
  if (setup_.recipe.trainer().val_before_train() && !val_.examples.empty()) {
    std::vector<GenerationSample> generations;
    ASSIGN_OR_RETURN(const auto val_metrics, Validate(&generations));
    // At the step training starts from (0, or the resumed checkpoint's), as verl logs it.
    RETURN_IF_ERROR(logger.Log(global_step_, val_metrics));
    RETURN_IF_ERROR(logger.LogGenerations(global_step_, generations));
  }
  while (global_step_ < total_steps_) {
    const int64_t step = global_step_ + 1;
    const absl::StatusOr<bool> trained = Step(logger);
    if (!trained.ok()) {
      return absl::Status(trained.status().code(), absl::StrCat("step ", step, ": ", trained.status().message()));
    }
    if (!*trained) {
      ROLLOUT_LOG(INFO) << "the data's " << setup_.recipe.trainer().total_epochs()
                        << " epoch(s) (trainer.total_epochs) ended during step " << step << " of " << total_steps_
                        << ": dynamic sampling (algorithm.filter_groups) had kept too few prompts for it when the data ran out";
      break;
    }
  }
  return checkpoints_->FinishSave();
}

absl::Status PpoTrainer::ValidateOnly(MetricsLogger& logger) {
  if (val_.examples.empty()) {
    return absl::InvalidArgumentError("trainer.val_only needs validation prompts: data.val_files has none");
  }
  std::vector<GenerationSample> generations;
  ASSIGN_OR_RETURN(const auto metrics, Validate(&generations));
  RETURN_IF_ERROR(logger.Log(global_step_, metrics));
  return logger.LogGenerations(global_step_, generations);
}

absl::StatusOr<std::map<std::string, double>> PpoTrainer::Validate(std::vector<GenerationSample>* to_log) {
  const config::Recipe& recipe = setup_.recipe;
  const int n = std::max(1, recipe.rollout().val_kwargs().n());
  std::map<std::string, double> metrics;
  RETURN_IF_ERROR(SyncRolloutWeights(&metrics));
  ASSIGN_OR_RETURN(const auto batches, ValidationBatches(static_cast<int64_t>(val_.examples.size()),
                                                          recipe.data().val_batch_size()));
  std::map<std::string, std::vector<PromptSamples>> by_source;
  std::map<std::string, double> failures;
  // The responses as records, for trainer.validation_data_dir and log_val_generations.
  const std::string& dump_dir = recipe.trainer().validation_data_dir();
  const bool keep = !dump_dir.empty() || recipe.trainer().log_val_generations() > 0;
  std::vector<GenerationRecord> kept;
  for (const std::vector<int64_t>& indices : batches) {
    std::vector<const PromptExample*> examples;
    std::vector<std::string> uids;
    for (int64_t index : indices) {
      examples.push_back(&val_.examples[static_cast<size_t>(index)]);
      uids.push_back(absl::StrCat("val-", index));
    }
    // The same seeds every time, so validations compare the policy, not the dice.
    ASSIGN_OR_RETURN(Batch rows, PromptRows(examples, n, uids, int64_t{recipe.rollout().seed()} * kSeedStride + indices.front()));
    rows.SetMeta("validate", "1");
    if (keep) rows.SetMeta("with_prompt_text", "1");
    ASSIGN_OR_RETURN(const Batch generated, setup_.rollout->CallDpSplit("rollout.generate_sequences", rows));
    ASSIGN_OR_RETURN(const std::vector<rewards::ScoredSample> scored,
                     ScoreWithRewardRunner(*setup_.reward, generated, examples, n, &failures));
    ASSIGN_OR_RETURN(const std::vector<std::string> texts, generated.Strings("response_text"));
    if (keep) {
      ASSIGN_OR_RETURN(const std::vector<std::string> inputs, generated.Strings("prompt_text"));
      for (size_t row = 0; row < scored.size(); ++row) {
        const PromptExample& example = *examples[row / static_cast<size_t>(n)];
        kept.push_back({inputs[row], texts[row], example.ground_truth, scored[row].output.score,
                        scored[row].output.extra});
      }
    }
    for (size_t i = 0; i < examples.size(); ++i) {
      PromptSamples samples;
      for (int s = 0; s < n; ++s) {
        const size_t row = i * static_cast<size_t>(n) + static_cast<size_t>(s);
        samples.scores.push_back(scored[row].output.score);
        const auto acc = scored[row].output.extra.find("acc");
        if (acc != scored[row].output.extra.end()) samples.accs.push_back(acc->second);
        samples.texts.push_back(std::string(absl::StripAsciiWhitespace(texts[row])));
      }
      by_source[examples[i]->data_source.empty() ? "unknown" : examples[i]->data_source].push_back(std::move(samples));
    }
  }
  metrics.merge(ValidationMetrics(by_source, n));
  if (!dump_dir.empty()) RETURN_IF_ERROR(WriteGenerationDump(dump_dir, global_step_, kept));
  *to_log = GenerationsToLog(kept, recipe.trainer().log_val_generations());
  metrics["val/reward_timeouts"] = failures["reward/timeouts"];
  metrics["val/reward_errors"] = failures["reward/errors"];
  return metrics;
}

}  // namespace rollout::controller
