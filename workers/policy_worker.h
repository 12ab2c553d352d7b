// The actor, rollout and ref roles of one worker process (verl's ActorRolloutRefWorker):
// the policy model (loaded from actor.model.path, with LoRA adapters when
// actor.model.lora_rank > 0 or lora_adapter_path names a PEFT adapter), its actor
// (updates), its rollout engine (generation, on the same weights: colocated roles share
// them with no copy) and its reference policy
// (with LoRA: the same model with adapters disabled; otherwise a frozen copy, loaded
// only when a KL term needs it).
//
// Methods, by the names the controller calls (inputs and outputs are Batch columns in
// verl's layout, see rollout_batch.h):
//   rollout.generate_sequences  strings prompt, prompt_format ("text" | "chat"), uid,
//                               seed; consecutive rows of one uid are one prompt's
//                               samples (generated as one group from the first row's
//                               seed); meta validate ("1": rollout.val_kwargs sampling)
//                               -> rollout_batch.h's columns, one row per input row;
//                               meta with_prompt_text ("1") adds strings prompt_text
//                               (the prompt's tokens decoded, special tokens skipped).
//                               With rollout.multi_turn the prompts are chats that offer
//                               its tools, and the model calls them between its turns
//                               (multi_turn_rollout.h)
//   actor.compute_log_prob      -> old_log_probs [N, R], entropys [N, R]
//   ref.compute_ref_log_prob    -> ref_log_prob [N, R]
//   actor.update_actor          + old_log_probs, advantages (+ ref_log_prob with
//                               actor.use_kl_loss); meta on_policy_rows (default 0:
//                               the leading rows whose old_log_probs are ignored,
//                               PolicyActor::Update) -> metrics (common/batch_metrics.h)
// With trainer.mode sft the actor fine-tunes instead (sft_learner.h, sft_batch.h), and
// a PPO run with sft_warm_start fine-tunes with these before its first step (its own
// optimizer and LR schedule, from sft_warm_start.optim):
//   actor.sft_update            strings prompt, prompt_format, response -> metrics
//   actor.sft_loss              the same rows -> metrics val/loss, val/weight (tokens)
// With trainer.mode dpo it learns from preference pairs (dpo_learner.h; the reference
// is the base model with LoRA, else a frozen copy):
//   actor.dpo_update            strings prompt, prompt_format, chosen, rejected -> metrics
//   actor.dpo_eval              the same rows -> metrics val/..., val/weight (pairs)
// Checkpoints of the learner this trainer.mode trains (the PPO actor, the SFT or the DPO
// learner; never the warm start's), in workers/checkpoint_io.h's layout:
//   actor.save_checkpoint       meta dir (the role directory, e.g. <staging>/actor) ->
//                               empty; writes actor.checkpoint.save_contents (rank 0
//                               only: the other ranks hold the same state)
//   actor.load_checkpoint       meta dir -> empty; every rank restores
//                               actor.checkpoint.load_contents
//   With meta async "1", actor.save_checkpoint returns once the write has started
//   (background_save.h); actor.wait_checkpoint -> empty once it is done (its error if
//   it failed). Updates and loads wait for it first.
// Weight sync when the rollout runs in another pool than the actor (verl's
// update_weights; policy_worker_weights.cc): the trained tensors — every parameter, or
// with LoRA the adapters alone — as one row, each [1, numel] under its HF / PEFT name:
//   actor.get_weights           -> the actor's trained tensors
//   rollout.update_weights      the same columns -> empty; copies them into the
//                               rollout's model (a process without the actor role)
// or, when the worker belongs to a weight-sync group (weight_broadcast.h), by a
// collective broadcast of the same tensors, which the actor's rank 0 and every rollout
// worker call at the same time (rollout.update_weights is then not registered):
//   actor.broadcast_weights     -> empty; sends them to the group
//   rollout.receive_weights     -> empty; copies them into the rollout's model
// A role this process does not host has no methods.
#pragma once

#include <c10/core/Device.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/batch.h"
#include "engine/engine.h"
#include "models/causal_lm.h"
#include "models/lora.h"
#include "models/tokenizer.h"
#include "proto/recipe.pb.h"
#include "tools/interaction.h"
#include "tools/tool.h"
#include "workers/background_save.h"
#include "workers/checkpoint_io.h"
#include "workers/communicator.h"
#include "workers/dpo_learner.h"
#include "workers/method_registry.h"
#include "workers/policy_actor.h"
#include "workers/prompt_encoding.h"
#include "workers/sft_batch.h"
#include "workers/sft_learner.h"

namespace rollout::workers {

struct PolicyWorkerSetup {
  config::Recipe recipe;
  std::vector<std::string> roles;  // of actor, rollout, ref
  c10::Device device = c10::Device(c10::kCPU);
  int rank = 0;
  int world = 1;
  // With world > 1: the pool's data-parallel group, which averages the learners'
  // gradients. Not owned; outlives the worker.
  Communicator* data_parallel = nullptr;
  // The weight-sync group of an actor's rank 0 and a rollout in another pool
  // (weight_broadcast.h), when this worker belongs to one. Not owned; outlives the
  // worker.
  Communicator* weight_sync = nullptr;
  // The LR schedule's horizon when actor.optim.total_training_steps is -1 (the
  // controller knows it from the data).
  int64_t total_training_steps = 0;
};

class PolicyWorker {
 public:
  // Loads what the hosted roles need. NotFound / DataLoss for model or tokenizer files,
  // InvalidArgument for recipe values that do not fit (e.g. a mini-batch that does not
  // split over the world).
  static absl::StatusOr<std::unique_ptr<PolicyWorker>> Create(const PolicyWorkerSetup& setup);
  ~PolicyWorker();

  // Registers the hosted roles' methods; `this` must outlive the registry's use.
  absl::Status RegisterMethods(MethodRegistry* registry);

  absl::StatusOr<Batch> GenerateSequences(const Batch& input);
  absl::StatusOr<Batch> ComputeLogProb(const Batch& input) const;
  absl::StatusOr<Batch> ComputeRefLogProb(const Batch& input) const;
  absl::StatusOr<Batch> UpdateActor(const Batch& input);
  absl::StatusOr<Batch> SftUpdate(const Batch& input);
  absl::StatusOr<Batch> SftLoss(const Batch& input) const;
  absl::StatusOr<Batch> DpoUpdate(const Batch& input);
  absl::StatusOr<Batch> DpoEval(const Batch& input) const;
  absl::StatusOr<Batch> SaveCheckpoint(const Batch& input);
  absl::StatusOr<Batch> LoadCheckpoint(const Batch& input);
  absl::StatusOr<Batch> WaitCheckpoint(const Batch& input);
  absl::StatusOr<Batch> GetWeights();
  // InvalidArgument naming the tensor for a missing, extra or misshapen column.
  absl::StatusOr<Batch> UpdateWeights(const Batch& input);
  // FailedPrecondition when the rollout's tensors differ from the actor's (on every
  // rank of the group: weight_broadcast.h).
  absl::StatusOr<Batch> BroadcastWeights();
  absl::StatusOr<Batch> ReceiveWeights();

  models::CausalLM& model() { return *model_; }

 private:
  explicit PolicyWorker(const PolicyWorkerSetup& setup) : setup_(setup) {}
  bool Hosts(const std::string& role) const;
  absl::Status LoadModels();
  absl::Status CreateActor();
  // One optimizer step per `batch` rows (split over the workers), LR schedule over
  // `total_training_steps`.
  absl::Status CreateSftLearner(int64_t batch, const config::OptimConfig& optim, int64_t total_training_steps);
  absl::Status CreateDpoLearner();
  // Chosen and rejected halves with the reference's sequence log-probs.
  absl::StatusOr<PreferenceBatch> PreferenceBatchFrom(const Batch& input) const;
  // The tensors the optimizer updates: every parameter, or the LoRA adapters; with
  // their names (HF or PEFT), in the same order.
  std::vector<at::Tensor*> Trainable();
  NamedTensors NamedTrainable();
  // What the actor's checkpoints hold (policy_worker_checkpoint.cc).
  RoleCheckpoint ActorCheckpoint();
  // ref.sync_ref_model (reference_sync.h): InvalidArgument unless this worker can
  // refresh its reference (full fine-tuning, a reference copy, the ref role beside the
  // actor); whether it does; and the refresh after the update that made `updates`.
  absl::Status CheckReferenceSync() const;
  bool SyncsReference() const;
  absl::Status SyncReferenceIfDue(int64_t updates);
  absl::StatusOr<PolicyBatch> SftBatchFrom(const Batch& input) const;
  // SFT or DPO rows bounded as the recipe says: by data.max_length as a whole when set,
  // else by data.max_prompt_length and data.max_response_length each (sft_batch.h).
  absl::StatusOr<PolicyBatch> BoundedSftBatch(const SftRows& rows) const;
  absl::Status CreateEngine();
  // The weight-sync methods the hosted roles take part in (policy_worker_weights.cc).
  absl::Status RegisterWeightSyncMethods(MethodRegistry* registry);
  // After every change of the policy's weights (updates, checkpoint loads).
  void WeightsChanged();
  engine::SamplingParams SamplingFor(bool validate, int32_t n, uint64_t seed) const;

  const PolicyWorkerSetup setup_;
  std::unique_ptr<models::CausalLM> model_;
  std::optional<models::LoraConfig> lora_;  // when TrainsLora(actor.model) (role_options.h)
  std::unique_ptr<models::CausalLM> ref_model_;  // without LoRA, when a KL term needs it
  std::unique_ptr<models::Tokenizer> tokenizer_;
  std::unique_ptr<PolicyActor> actor_;
  std::unique_ptr<SftLearner> sft_;  // trainer.mode sft, or ppo with sft_warm_start
  std::unique_ptr<DpoLearner> dpo_;  // instead of actor_ with trainer.mode dpo
  std::unique_ptr<engine::Engine> engine_;
  // rollout.multi_turn's tools and simulated users; both empty: single-turn rollouts.
  tools::ToolSet tools_;
  tools::InteractionSet interactions_;
  PromptEncoding prompt_encoding_;
  // Last: destroyed (waiting for a pending write) before what the write reads.
  BackgroundSave pending_save_;
};

}  // namespace rollout::workers
