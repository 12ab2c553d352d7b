// The critic role of one worker process (verl's CriticWorker): the value model, loaded
// from critic.model.path (default: actor.model.path, as in verl; a causal LM gets a
// fresh value head, a reward model keeps its score head, see models/value_model.h) in critic.model.dtype, and the PPO value
// update (value_critic.h) with its own AdamW and LR schedule (critic.optim.*). The
// critic keeps its own weights, so it runs the same colocated with the policy roles in
// one process or alone in its own pool's process.
//
// Methods, by the names the controller calls (Batch columns in verl's layout, see
// policy_batch.h):
//   critic.compute_values  input_ids, attention_mask, position_ids, response_mask
//                          -> values [N, R] float32, 0 at masked response positions
//   critic.update_critic   + values, returns [N, R] -> metrics (common/batch_metrics.h):
//                          critic/vf_loss, critic/vf_clipfrac, critic/vpred_mean,
//                          critic/grad_norm, critic/lr
// Each update_critic call takes mini-batches of critic.ppo_mini_batch_size x rollout.n
// rows (split over the pool's ranks; the last may be smaller),
// critic.ppo_micro_batch_size_per_gpu rows at a time, critic.ppo_epochs times.
//   critic.save_checkpoint meta dir (the role directory, e.g. <staging>/critic) ->
//                          empty; writes critic.checkpoint.save_contents
//                          (workers/checkpoint_io.h; rank 0 only)
//   critic.load_checkpoint meta dir -> empty; every rank restores
//                          critic.checkpoint.load_contents
//   critic.wait_checkpoint -> empty once an asynchronous save (save_checkpoint with
//                          meta async "1", background_save.h) is written
//
// Thread-compatible (the MethodRegistry runs one method at a time).
#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <memory>
#include <utility>

#include "absl/status/statusor.h"
#include "common/batch.h"
#include "models/value_model.h"
#include "proto/recipe.pb.h"
#include "workers/background_save.h"
#include "workers/checkpoint_io.h"
#include "workers/communicator.h"
#include "workers/method_registry.h"
#include "workers/value_critic.h"

namespace rollout::workers {

struct CriticWorkerSetup {
  config::Recipe recipe;
  c10::Device device = c10::Device(c10::kCPU);
  int rank = 0;
  int world = 1;
  // With world > 1: the pool's data-parallel group. Not owned; outlives the worker.
  Communicator* data_parallel = nullptr;
  // The LR schedule's horizon when critic.optim.total_training_steps is -1.
  int64_t total_training_steps = 0;
};

class CriticWorker {
 public:
  // Loads the value model. NotFound / DataLoss for model files; InvalidArgument for
  // recipe values that do not fit (no model path, a mini-batch that does not split over
  // the world); Unimplemented for a LoRA critic (critic.model.lora_rank > 0).
  static absl::StatusOr<std::unique_ptr<CriticWorker>> Create(const CriticWorkerSetup& setup);

  // Registers the critic.* methods above; `this` must outlive the registry's use.
  absl::Status RegisterMethods(MethodRegistry* registry);

  absl::StatusOr<Batch> ComputeValues(const Batch& input) const;
  absl::StatusOr<Batch> UpdateCritic(const Batch& input);
  absl::StatusOr<Batch> SaveCheckpoint(const Batch& input);
  absl::StatusOr<Batch> LoadCheckpoint(const Batch& input);
  absl::StatusOr<Batch> WaitCheckpoint(const Batch& input);

  models::ValueModel& model() { return *model_; }

 private:
  CriticWorker(const CriticWorkerSetup& setup, std::unique_ptr<models::ValueModel> model)
      : setup_(setup), model_(std::move(model)) {}
  // The ValueBatch of the input's columns on this worker's device; with `for_update`
  // also values and returns.
  absl::StatusOr<ValueBatch> ValueBatchFrom(const Batch& input, bool for_update) const;
  RoleCheckpoint CriticCheckpoint();

  const CriticWorkerSetup setup_;
  std::unique_ptr<models::ValueModel> model_;
  std::unique_ptr<ValueCritic> critic_;
  // Last: destroyed (waiting for a pending write) before what the write reads.
  BackgroundSave pending_save_;
};

}  // namespace rollout::workers
