// The optimisation loop verl's actor and critic share: ppo_epochs passes over a batch in
// mini-batches, each a sum of micro-batch gradients (gradient accumulation, in float32
// for bfloat16 parameters as verl's FSDP: AdamW::WidenGradients), averaged
// over the data-parallel ranks, clipped, then one optimizer step — skipped when the
// gradient norm is not finite, as verl does, so one bad batch cannot poison the weights.
// With its optimizer state sharded over the data-parallel group (optimizer_shards.h),
// each rank steps its share and the owners copy the stepped weights to the others.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "workers/adamw.h"
#include "workers/communicator.h"
#include "workers/micro_batches.h"

namespace rollout::workers {

struct MiniBatchPlan {
  int64_t mini_batch_rows = 256;
  MicroBatchSize micro_batch;  // a mini-batch's micro-batches (micro_batches.h)
  int64_t epochs = 1;
  double grad_clip = 1.0;
  // The data-parallel group whose ranks each run this loop on their share of the rows
  // (mini_batch_rows and the rows are per rank); null on one rank. Not owned.
  Communicator* data_parallel = nullptr;
  // actor.shuffle / critic.shuffle: each epoch visits the rows in its own order, drawn
  // from shuffle_seed and the epoch alone (EpochRowOrder), before they are cut into
  // mini-batches; otherwise in the batch's order.
  bool shuffle = false;
  uint64_t shuffle_seed = 0;
};

// The order of `rows` rows for `epoch` (0-based) of a shuffled loop: a permutation drawn
// from `seed` and the epoch, the same on every build and rank.
std::vector<int64_t> EpochRowOrder(int64_t rows, uint64_t seed, int64_t epoch);

// InvalidArgument unless every count is >= 1, the token budget >= 0 and grad_clip > 0;
// `what` names the role in the message ("policy actor").
absl::Status CheckMiniBatchPlan(const MiniBatchPlan& plan, const char* what);

// Computes, scales by `share` (its rows over a full mini-batch's) and backpropagates the
// loss of rows [start, start + rows) of the batch.
using MicroBatchStep = std::function<absl::Status(int64_t start, int64_t rows, double share)>;

struct MiniBatchResult {
  std::vector<double> grad_norms;  // one per optimizer step, before clipping
  int64_t skipped_steps = 0;       // steps with a non-finite gradient norm
};

// Called after a mini-batch's micro-batches, before its gradients are averaged and
// applied (e.g. DeferredFiniteChecks::Resolve); an error stops the loop as a step's does.
using MiniBatchCheck = std::function<absl::Status()>;

// With plan.shuffle, called at the start of each epoch with its row order: from then on
// `step`'s row i is the batch's row order[i] (the caller reorders what it slices).
using EpochReorder = std::function<absl::Status(const std::vector<int64_t>& order)>;

// Runs the loop over `rows` rows; `row_tokens` as for MicroBatchRanges (RowTokensFor;
// empty without a token budget), in the batch's order; `check`, when set, once per
// mini-batch; `reorder` as above, required with plan.shuffle. Rows that do not fill the
// last mini-batch form a smaller one, as verl's split leaves them, its micro-batches'
// shares still over a full mini-batch's rows (verl's loss scale), so it steps with a
// proportionally smaller gradient. InvalidArgument for rows < 1; the first error of
// `step`, `check` or `reorder` (after dropping the gradients).
absl::StatusOr<MiniBatchResult> RunMiniBatches(int64_t rows, absl::Span<const int64_t> row_tokens,
                                               const MiniBatchPlan& plan,
                                               const std::vector<at::Tensor*>& trainable,
                                               AdamW& optimizer, const MicroBatchStep& step,
                                               const MiniBatchCheck& check = nullptr,
                                               const EpochReorder& reorder = nullptr);

// Per-micro-batch (or per-step) metric values, and their means as verl's
// reduce_metrics reports them (an empty list gives 0).
using MetricLists = std::map<std::string, std::vector<double>>;
double Mean(const std::vector<double>& values);
std::map<std::string, double> MeanMetrics(const MetricLists& lists);

// The same with each value a 0-dim tensor, all on one device, as a loop collects them
// without waiting for the device; the means are read from it in one copy.
using TensorMetricLists = std::map<std::string, std::vector<at::Tensor>>;
std::map<std::string, double> MeanMetrics(const TensorMetricLists& lists);

// Clips the gradients of `params` in place to a total L2 norm of at most `max_norm`
// (torch.nn.utils.clip_grad_norm_) and returns the norm before clipping, which may be
// inf or NaN (then nothing is scaled).
double ClipGradNorm(const std::vector<at::Tensor*>& params, double max_norm);

}  // namespace rollout::workers
