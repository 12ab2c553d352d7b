#include "engine/model_runner.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include <algorithm>
#include <utility>

#include "engine/decode_graphs.h"  // defined in CUDA builds only
#include "engine/step_upload.h"

namespace rollout::engine {

ModelRunner::ModelRunner(const models::CausalLM& model, PagedKvCache* cache,
                         const ModelRunnerOptions& options)
    : model_(model), cache_(cache) {
#ifdef ROLLOUT_WITH_CUDA
  if (!options.enforce_eager && cache->uses_kernel()) {
    const int64_t positions = model.config().max_position_embeddings;
    const int64_t width = std::min(cache->num_blocks(),
                                   (positions + cache->block_size() - 1) / cache->block_size());
    graphs_ = {new DecodeGraphs(model, cache, options.max_batch, width),
               [](DecodeGraphs* graphs) { delete graphs; }};
  }
#endif
}

ModelRunner::~ModelRunner() = default;

SampledTokens ModelRunner::RunEager(StepInputs host) {
  StepUpload upload;
  const size_t input_ids = upload.Add(host.input_ids), positions = upload.Add(host.positions);
  const size_t slots = upload.Add(host.slot_mapping), rows = upload.Add(host.token_rows);
  const size_t tables = upload.Add(host.block_tables), sample_rows = upload.Add(host.sample_rows);
  const size_t temperature = upload.Add(host.temperature), top_k = upload.Add(host.top_k);
  const size_t top_p = upload.Add(host.top_p), min_p = upload.Add(host.min_p);
  const size_t seed = upload.Add(host.seed), draw = upload.Add(host.draw);
  const std::vector<at::Tensor> sent = upload.Send(model_.device());

  StepAttention attention;
  attention.slot_mapping = sent[slots];
  attention.positions = sent[positions];
  attention.token_rows = sent[rows];
  attention.block_tables = sent[tables].view({-1, host.max_blocks});
  attention.one_token_per_row = host.decode_only;
  attention.row_token_begin = std::move(host.row_token_begin);
  attention.row_context = std::move(host.row_context);
  attention.host_block_tables = std::move(host.block_tables);  // sent above

  cache_->BeginStep(&attention);
  const at::Tensor hidden = model_.ForwardStep(sent[input_ids], attention.positions, *cache_);
  cache_->BeginStep(nullptr);
  const at::Tensor logits = model_.Logits(hidden.index_select(0, sent[sample_rows]));
  SamplingTensors params;
  params.temperature = sent[temperature];
  params.top_k = sent[top_k];
  params.top_p = sent[top_p];
  params.min_p = sent[min_p];
  params.seed = sent[seed];
  params.step = sent[draw];
  params.any_filter = host.any_filter;
  return SampleTokens(logits, params);
}

SampledStep ModelRunner::Run(const StepPlan& plan) {
  c10::NoGradGuard no_grad;
  StepInputs step = LayOutStep(plan, cache_->block_size());
  cache_->CopyBlocks(plan.copies);
#ifdef ROLLOUT_WITH_CUDA
  const SampledTokens sampled =
      graphs_ != nullptr && graphs_->Serves(step) ? graphs_->Run(step) : RunEager(std::move(step));
#else
  const SampledTokens sampled = RunEager(std::move(step));
#endif
  const at::Tensor tokens = sampled.tokens.to(at::kCPU);
  const at::Tensor log_probs = sampled.log_probs.to(at::kCPU);
  const int64_t* token_data = tokens.data_ptr<int64_t>();
  const float* log_prob_data = log_probs.data_ptr<float>();
  SampledStep out;
  out.tokens.assign(token_data, token_data + tokens.size(0));
  out.log_probs.assign(log_prob_data, log_prob_data + tokens.size(0));
  return out;
}

}  // namespace rollout::engine
