#include "engine/model_runner.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include <algorithm>
#include <memory>
#include <utility>

#include "common/check.h"
#include "engine/decode_graphs.h"  // defined in CUDA builds only
#include "engine/input_ids.h"
#include "engine/step_upload.h"

#ifdef ROLLOUT_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#endif

namespace rollout::engine {

SampledStep LaunchedStep::Wait() {
  if (copied_) copied_();
  SampledStep out;
  const int64_t* tokens = tokens_.data_ptr<int64_t>();
  const float* log_probs = log_probs_.data_ptr<float>();
  out.tokens.assign(tokens, tokens + tokens_.size(0));
  out.log_probs.assign(log_probs, log_probs + log_probs_.size(0));
  return out;
}

ModelRunner::ModelRunner(const models::CausalLM& model, PagedKvCache* cache,
                         const ModelRunnerOptions& options)
    : model_(model),
      cache_(cache),
      last_samples_(at::zeros({options.max_samples},
                              at::TensorOptions().dtype(at::kLong).device(model.device()))) {
#ifdef ROLLOUT_WITH_CUDA
  if (!options.enforce_eager && cache->uses_kernel()) {
    const int64_t positions = model.config().max_position_embeddings;
    const int64_t width = std::min(cache->num_blocks(),
                                   (positions + cache->block_size() - 1) / cache->block_size());
    graphs_ = {new DecodeGraphs(model, cache, options.max_batch, width, last_samples_),
               [](DecodeGraphs* graphs) { delete graphs; }};
  }
#endif
}

ModelRunner::~ModelRunner() = default;

SampledTokens ModelRunner::RunEager(StepInputs host) {
  StepUpload upload;
  const size_t input_ids = upload.Add(host.input_ids), sources = upload.Add(host.input_sources);
  const size_t positions = upload.Add(host.positions);
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
  const at::Tensor ids = host.any_pending_input
                             ? ResolveInputIds(sent[input_ids], sent[sources], last_samples_)
                             : sent[input_ids];
  const at::Tensor hidden = model_.ForwardStep(ids, attention.positions, *cache_);
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

LaunchedStep ModelRunner::Launch(const StepPlan& plan) {
  c10::NoGradGuard no_grad;
  StepInputs step = LayOutStep(plan, cache_->block_size());
  ROLLOUT_CHECK(static_cast<int64_t>(step.sample_rows.size()) <= last_samples_.size(0))
      << "a step with " << step.sample_rows.size() << " samplers; the runner keeps "
      << last_samples_.size(0);
  cache_->CopyBlocks(plan.copies);
#ifdef ROLLOUT_WITH_CUDA
  if (graphs_ != nullptr && graphs_->Serves(step)) return Return(graphs_->Run(step));
#endif
  return Return(RunEager(std::move(step)));
}

LaunchedStep ModelRunner::Return(const SampledTokens& sampled) {
  const int64_t count = sampled.tokens.size(0);
  last_samples_.narrow(0, 0, count).copy_(sampled.tokens);
  LaunchedStep launched;
  if (!sampled.tokens.is_cuda()) {
    launched.tokens_ = sampled.tokens.contiguous();
    launched.log_probs_ = sampled.log_probs.contiguous();
    return launched;
  }
#ifdef ROLLOUT_WITH_CUDA
  const at::TensorOptions pinned = at::TensorOptions().pinned_memory(true);
  launched.tokens_ = at::empty({count}, pinned.dtype(at::kLong));
  launched.log_probs_ = at::empty({count}, pinned.dtype(at::kFloat));
  launched.tokens_.copy_(sampled.tokens, /*non_blocking=*/true);
  launched.log_probs_.copy_(sampled.log_probs, /*non_blocking=*/true);
  auto copied = std::make_shared<at::cuda::CUDAEvent>();
  copied->record(at::cuda::getCurrentCUDAStream());
  launched.copied_ = [copied] { copied->synchronize(); };
#endif
  return launched;
}

}  // namespace rollout::engine
