#include "workers/response_scores.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace rollout::workers {

namespace {

bool SharesPrompts(const models::CausalLM& model, PromptSharing sharing) {
  switch (sharing) {
    case PromptSharing::kNever: return false;
    case PromptSharing::kAlways: return true;
    case PromptSharing::kWhereFast:
      return models::PackedSegmentAttention::UsesFlashKernel(model.device(), model.dtype(),
                                                             model.config().head_dim);
  }
  return false;
}

}  // namespace

std::optional<models::SharedPromptPacking> PackForScoring(const models::CausalLM& model,
                                                          const at::Tensor& input_ids,
                                                          const at::Tensor& attention_mask,
                                                          const at::Tensor& position_ids,
                                                          int64_t response_length,
                                                          PromptSharing sharing) {
  if (!SharesPrompts(model, sharing)) return std::nullopt;
  return models::PackSharedPrompts(input_ids, attention_mask, position_ids, response_length,
                                   model.device());
}

models::TokenScores ScorePackedResponses(const models::CausalLM& model,
                                         models::SharedPromptPacking& packed, int64_t rows,
                                         int64_t response_length, models::ScoreExtras extras,
                                         double temperature) {
  const at::Tensor hidden = model.ForwardStep(packed.input_ids, packed.positions, packed.attention);
  const models::TokenScores flat =
      models::ScoreTokens(model, hidden.index_select(0, packed.score_rows).unsqueeze(0),
                          packed.score_targets.unsqueeze(0), extras, temperature);
  // Into [rows, R], 0 where no token is.
  auto scatter = [&](const at::Tensor& values) {
    return at::zeros({rows * response_length}, values.options())
        .scatter(0, packed.score_slots, values.view(-1))
        .view({rows, response_length});
  };
  models::TokenScores scores;
  scores.log_probs = scatter(flat.log_probs);
  if (extras.entropy) scores.entropy = scatter(flat.entropy);
  if (extras.sum_pi_squared) scores.sum_pi_squared = scatter(flat.sum_pi_squared);
  return scores;
}

models::TokenScores ScoreResponses(const models::CausalLM& model, const at::Tensor& input_ids,
                                   const at::Tensor& position_ids, const at::Tensor& attention_mask,
                                   const at::Tensor& responses, models::ScoreExtras extras,
                                   double temperature, PromptSharing sharing) {
  const int64_t total = input_ids.size(1);
  const int64_t response = responses.size(1);
  if (std::optional<models::SharedPromptPacking> packed =
          PackForScoring(model, input_ids, attention_mask, position_ids, response, sharing)) {
    return ScorePackedResponses(model, *packed, input_ids.size(0), response, extras,
                                temperature);
  }
  const at::Tensor hidden = model.Forward(input_ids, position_ids, attention_mask);
  return models::ScoreTokens(model, hidden.narrow(1, total - response - 1, response), responses,
                             extras, temperature);
}

absl::StatusOr<models::TokenScores> ScoreResponsesNoGrad(const models::CausalLM& model,
                                                         const PolicyBatch& batch,
                                                         const MicroBatchSize& micro_batch,
                                                         models::ScoreExtras extras, double temperature,
                                                         PromptSharing sharing) {
  RETURN_IF_ERROR(CheckPolicyBatch(batch));
  if (micro_batch.rows < 1 || micro_batch.max_tokens < 0) {
    return absl::InvalidArgumentError(absl::StrCat("micro-batch rows is ", micro_batch.rows,
                                                   " and token budget ", micro_batch.max_tokens,
                                                   "; must be >= 1 and >= 0"));
  }
  c10::NoGradGuard no_grad;
  const int64_t rows = batch.input_ids.size(0), response = batch.responses.size(1);
  const bool shares = SharesPrompts(model, sharing);
  // Token counts and packings come from one host copy of the batch's layout, made before
  // the first forward, so the forwards queue on the device without waiting for the host.
  at::Tensor ids, mask, positions;
  if (shares || micro_batch.max_tokens > 0) mask = batch.attention_mask.cpu();
  ASSIGN_OR_RETURN(const std::vector<RowRange> ranges,
                   MicroBatchRanges(0, rows, micro_batch, RowTokensFor(micro_batch, mask)));
  std::vector<PolicyBatch> micros;
  for (const RowRange& range : ranges) micros.push_back(SliceRows(batch, range.start, range.rows));
  std::vector<std::optional<models::SharedPromptPacking>> packed(micros.size());
  if (shares) {
    ids = batch.input_ids.cpu();
    positions = batch.position_ids.cpu();
    for (size_t i = 0; i < micros.size(); ++i) {
      const RowRange& range = ranges[i];
      packed[i] = PackForScoring(model, ids.narrow(0, range.start, range.rows),
                                 mask.narrow(0, range.start, range.rows),
                                 positions.narrow(0, range.start, range.rows), response, sharing);
    }
  }
  std::vector<models::TokenScores> scored;
  for (size_t i = 0; i < micros.size(); ++i) {
    const PolicyBatch& micro = micros[i];
    scored.push_back(packed[i] ? ScorePackedResponses(model, *packed[i], micro.input_ids.size(0), response, extras,
                                                      temperature)
                               : ScoreResponses(model, micro.input_ids, micro.position_ids, micro.attention_mask,
                                                micro.responses, extras, temperature, PromptSharing::kNever));
  }
  return models::ConcatScores(scored, extras,
                              at::zeros({0, response}, batch.input_ids.options().dtype(at::kFloat)));
}

}  // namespace rollout::workers
