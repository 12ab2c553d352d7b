// The critic's computations on one device (verl's DataParallelPPOCritic without the
// data parallelism): values of the response positions, and the PPO value update with
// the clipped value loss, over the shared mini-batch loop (minibatch_loop.h).
// Metrics carry verl's names: critic/vf_loss, critic/vf_clipfrac, critic/vpred_mean
// (means over micro-batches), critic/grad_norm (mean over optimizer steps), critic/lr.
//
// Thread-compatible; the model must outlive the critic and only the critic changes it.
#pragma once

#include <ATen/core/Tensor.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "algorithms/value_loss.h"
#include "models/value_model.h"
#include "workers/adamw.h"
#include "workers/lr_schedule.h"
#include "workers/micro_batches.h"
#include "workers/minibatch_loop.h"

namespace rollout::workers {

// verl's layout, as PolicyBatch (policy_actor.h): prompt left-padded, response right-padded.
struct ValueBatch {
  at::Tensor input_ids;       // [B, T] int64
  at::Tensor attention_mask;  // [B, T]
  at::Tensor position_ids;    // [B, T] int64
  at::Tensor response_mask;   // [B, R], the last R positions; 0 < R < T
  // For Update only, [B, R] floating:
  at::Tensor values;   // the critic's values when the batch was collected
  at::Tensor returns;  // regression targets
};

struct ValueCriticOptions {
  MiniBatchPlan plan;  // critic.ppo_mini_batch_size x rollout.n, micro-batch, epochs, grad_clip
  algorithms::ValueLossOptions value_loss;
  AdamWOptions adamw;  // lr is the schedule's
  LrScheduleOptions lr_schedule;
};

class ValueCritic {
 public:
  // Every parameter of `model` is trained. InvalidArgument for a bad plan or schedule.
  static absl::StatusOr<std::unique_ptr<ValueCritic>> Create(models::ValueModel* model,
                                                             const ValueCriticOptions& options);

  // [B, R] float32: the value of each response token's position (verl takes the values
  // at the R positions before the last, as the actor's log-probs), without gradients;
  // 0 where response_mask is 0 (verl: only action tokens have values). Micro-batches of
  // `micro_batch` rows or tokens (micro_batches.h); InvalidArgument for a row over its
  // token budget.
  absl::StatusOr<at::Tensor> ComputeValues(const ValueBatch& batch, const MicroBatchSize& micro_batch) const;

  // One update_critic call: the mini-batch loop, then one LR-schedule step.
  absl::StatusOr<std::map<std::string, double>> Update(const ValueBatch& batch);

  // For checkpoints (workers/checkpoint_io.h): the optimizer, and the number of updates
  // so far (the LR schedule's position).
  AdamW& optimizer() { return optimizer_; }
  int64_t* mutable_updates() { return &updates_; }

 private:
  ValueCritic(models::ValueModel* model, std::vector<at::Tensor*> trainable,
              const ValueCriticOptions& options, LrSchedule schedule);
  at::Tensor Predict(const ValueBatch& batch) const;  // [rows, R], with gradients when enabled

  models::ValueModel* const model_;
  std::vector<at::Tensor*> trainable_;
  const ValueCriticOptions options_;
  LrSchedule schedule_;
  AdamW optimizer_;
  int64_t updates_ = 0;
};

}  // namespace rollout::workers
