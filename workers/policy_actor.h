// The actor's computations on one device (verl's DataParallelPPOActor without the data
// parallelism): the log-probs of rollout responses under the policy, and the PPO /
// GRPO policy update — mini-batches x micro-batches x ppo_epochs with gradient
// accumulation, entropy bonus, KL loss, gradient clipping, AdamW and the LR schedule.
//
// Batches use verl's layout (policy_batch.h). Metrics carry verl's names and are means
// over micro-batches (losses, clip fractions, entropy) or optimizer steps (grad_norm),
// as verl's reduce_metrics reports them.
//
// Thread-compatible; the model must outlive the actor and only the actor changes it.
#pragma once

#include <ATen/core/Tensor.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "algorithms/policy_loss.h"
#include "algorithms/rollout_policy_gradient.h"
#include "models/causal_lm.h"
#include "models/shared_prompt_packing.h"
#include "models/token_scores.h"
#include "workers/adamw.h"
#include "workers/lr_schedule.h"
#include "workers/minibatch_loop.h"
#include "workers/policy_batch.h"
#include "workers/response_scores.h"

namespace rollout::workers {

struct PolicyActorOptions {
  // mini_batch_rows: verl's ppo_mini_batch_size x rollout.n; micro_batch_rows:
  // ppo_micro_batch_size_per_gpu; max_micro_batch_tokens: ppo_max_token_len_per_gpu
  // with use_dynamic_bsz, else 0; epochs: ppo_epochs; grad_clip.
  MiniBatchPlan plan;
  double temperature = 1.0;  // the rollout's: logits are divided by it when scoring
  // Whether scoring computes each prompt once for its run of rows
  // (workers/response_scores.h); the default is right outside tests.
  PromptSharing prompt_sharing = PromptSharing::kWhereFast;
  // Its selection_seed is ignored: each micro-batch's is derived from `seed`.
  algorithms::PolicyLossOptions policy_loss;
  // algorithm.rollout_correction.use_policy_gradient: the loss is this instead of
  // policy_loss (old_log_probs are then the rollout's).
  std::optional<algorithms::RolloutPolicyGradientOptions> rollout_policy_gradient;
  // trainer.seed: with the update count and the micro-batch's place in the update it
  // seeds clip_cov's choice of tokens, so a resumed run chooses the same ones.
  uint64_t seed = 0;
  double entropy_coeff = 0;
  bool use_kl_loss = false;
  double kl_loss_coef = 0.001;
  std::string kl_loss_type = "low_var_kl";
  AdamWOptions adamw;  // lr is the schedule's
  LrScheduleOptions lr_schedule;
};

class PolicyActor {
 public:
  // `trainable`: the tensors the optimizer updates (all parameters, or the LoRA
  // adapters); they get requires_grad. InvalidArgument for bad batch sizes or a bad
  // LR schedule.
  static absl::StatusOr<std::unique_ptr<PolicyActor>> Create(models::CausalLM* model,
                                                             std::vector<at::Tensor*> trainable,
                                                             const PolicyActorOptions& options);

  // Log-probs (and the `extras`) of the responses, [B, R] float32, computed one
  // micro-batch at a time without gradients. InvalidArgument for a batch whose tensors
  // do not fit together, or a bad micro-batch size (ScoreResponsesNoGrad).
  absl::StatusOr<models::TokenScores> ComputeLogProbs(const PolicyBatch& batch,
                                                      const MicroBatchSize& micro_batch,
                                                      models::ScoreExtras extras) const;

  // One update_actor call: RunMiniBatches (minibatch_loop.h) over the batch (the last
  // mini-batch may be smaller), then one LR-schedule step. A step whose gradient norm
  // is not finite is skipped (counted in actor/grad_norm_nonfinite). Metrics: actor/pg_loss,
  // actor/pg_clipfrac, actor/pg_clipfrac_lower, actor/ppo_kl, actor/entropy,
  // actor/kl_loss and actor/kl_coef (with use_kl_loss), actor/grad_norm, actor/lr.
  //
  // The first `on_policy_rows` rows (at most a mini-batch, and only with one epoch) are
  // trained before any optimizer step, under the weights that sampled them: their ratio
  // is anchored to this forward's own log-probs, detached, and their old_log_probs are
  // ignored (the controller skips scoring them; verl's on_policy case, TRL's
  // num_iterations = 1). InvalidArgument for a count outside that range.
  absl::StatusOr<std::map<std::string, double>> Update(const PolicyBatch& batch,
                                                       int64_t on_policy_rows = 0);

  int64_t updates() const { return updates_; }
  // For checkpoints (workers/checkpoint_io.h): the optimizer, and the number of updates
  // so far (the LR schedule's position).
  AdamW& optimizer() { return optimizer_; }
  int64_t* mutable_updates() { return &updates_; }

 private:
  PolicyActor(models::CausalLM* model, std::vector<at::Tensor*> trainable,
              const PolicyActorOptions& options, LrSchedule schedule);
  // Loss of one micro-batch, scaled by its share of the mini-batch, backpropagated; its
  // forward runs through `packed` (PackForScoring) when given, else padded; its first
  // `on_policy_rows` rows take their old log-probs from that forward (Update). Appends
  // its metrics as device tensors and does not wait for the device itself (Update
  // defers the losses' finiteness checks).
  // The micro-batch's policy-gradient term: options_.policy_loss's, or the rollout
  // correction's policy gradient (whose rollout_corr/* metrics go to `metrics`).
  absl::StatusOr<algorithms::PolicyLossResult> PolicyGradientLoss(const PolicyBatch& micro,
                                                                 const at::Tensor& old_log_probs,
                                                                 const at::Tensor& log_probs,
                                                                 uint64_t selection_seed,
                                                                 TensorMetricLists* metrics) const;
  absl::Status AccumulateMicroBatch(const PolicyBatch& micro,
                                    std::optional<models::SharedPromptPacking> packed,
                                    int64_t on_policy_rows, double share,
                                    uint64_t selection_seed, TensorMetricLists* metrics);

  models::CausalLM* const model_;
  std::vector<at::Tensor*> trainable_;
  const PolicyActorOptions options_;
  LrSchedule schedule_;
  AdamW optimizer_;
  int64_t updates_ = 0;
};

}  // namespace rollout::workers
