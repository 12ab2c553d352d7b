#include "engine/model_runner.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include <algorithm>

#include "engine/decode_graphs.h"  // defined in CUDA builds only

namespace rollout::engine {
namespace {

template <typename T>
at::Tensor ToDevice(const std::vector<T>& values, at::ScalarType dtype, c10::Device device) {
  return at::tensor(values, at::TensorOptions().dtype(dtype)).to(device);
}

}  // namespace

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

SampledTokens ModelRunner::RunEager(const StepInputs& host) {
  const c10::Device device = model_.device();
  StepAttention attention;
  attention.slot_mapping = ToDevice(host.slot_mapping, at::kLong, device);
  attention.positions = ToDevice(host.positions, at::kLong, device);
  attention.token_rows = ToDevice(host.token_rows, at::kInt, device);
  attention.block_tables =
      ToDevice(host.block_tables, at::kInt, device).view({-1, host.max_blocks});
  attention.one_token_per_row = host.decode_only;
  attention.row_token_begin = host.row_token_begin;
  attention.row_context = host.row_context;
  attention.row_blocks = host.row_blocks;

  cache_->BeginStep(&attention);
  const at::Tensor hidden =
      model_.ForwardStep(ToDevice(host.input_ids, at::kLong, device), attention.positions, *cache_);
  cache_->BeginStep(nullptr);
  const at::Tensor logits =
      model_.Logits(hidden.index_select(0, ToDevice(host.sample_rows, at::kLong, device)));
  SamplingTensors params;
  params.temperature = ToDevice(host.temperature, at::kFloat, device);
  params.top_k = ToDevice(host.top_k, at::kLong, device);
  params.top_p = ToDevice(host.top_p, at::kFloat, device);
  params.min_p = ToDevice(host.min_p, at::kFloat, device);
  params.seed = ToDevice(host.seed, at::kLong, device);
  params.step = ToDevice(host.draw, at::kLong, device);
  params.any_filter = host.any_filter;
  return SampleTokens(logits, params);
}

SampledStep ModelRunner::Run(const StepPlan& plan) {
  c10::NoGradGuard no_grad;
  const StepInputs step = LayOutStep(plan, cache_->block_size());
  cache_->CopyBlocks(plan.copies);
#ifdef ROLLOUT_WITH_CUDA
  const SampledTokens sampled =
      graphs_ != nullptr && graphs_->Serves(step) ? graphs_->Run(step) : RunEager(step);
#else
  const SampledTokens sampled = RunEager(step);
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
