#include "engine/decode_graphs.h"

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/core/GradMode.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <algorithm>

#include "common/check.h"

namespace rollout::engine {

struct DecodeGraphs::Graph {
  at::cuda::CUDAGraph graph;
  StepAttention attention;
  SampledTokens outputs;
};

DecodeGraphs::DecodeGraphs(const models::CausalLM& model, PagedKvCache* cache, int64_t max_batch,
                           int64_t max_table_width)
    : model_(model),
      cache_(cache),
      max_batch_(PaddedBatch(max_batch)),
      max_table_width_(max_table_width) {
  ROLLOUT_CHECK(cache->uses_kernel());
  const auto on_device = at::TensorOptions().device(model.device());
  longs_ = at::zeros({5, max_batch_}, on_device.dtype(at::kLong));
  longs_[2].fill_(cache->scratch_slot());
  ints_ = at::zeros({1 + max_batch_ + max_batch_ * max_table_width_}, on_device.dtype(at::kInt));
  ints_[0].fill_(1);
  ints_.narrow(0, 1, max_batch_).copy_(at::arange(max_batch_, on_device.dtype(at::kInt)));
  floats_ = at::ones({3, max_batch_}, on_device.dtype(at::kFloat));
  floats_[2].zero_();
  top_k_ = at::full({max_batch_}, -1, on_device.dtype(at::kLong));
  const c10::cuda::MempoolId_t pool = at::cuda::graph_pool_handle();
  pool_ = {pool.first, pool.second};
}

DecodeGraphs::~DecodeGraphs() = default;

int64_t DecodeGraphs::PaddedBatch(int64_t batch) const {
  if (batch <= 1) return 1;
  if (batch <= 8) {
    int64_t padded = 1;
    while (padded < batch) padded *= 2;
    return padded;
  }
  return (batch + 7) / 8 * 8;
}

bool DecodeGraphs::Serves(const StepInputs& step) const {
  const int64_t batch = static_cast<int64_t>(step.sample_rows.size());
  return step.decode_only && !step.any_filter && batch >= 1 && batch <= max_batch_ &&
         step.max_blocks <= max_table_width_;
}

void DecodeGraphs::CopyInputs(const StepInputs& step, int64_t padded) {
  const int64_t batch = static_cast<int64_t>(step.sample_rows.size());
  const int64_t width = step.max_blocks;
  // Padded rows: token 0 at position 0, KV into the scratch slot, default sampling.
  at::Tensor longs = at::zeros({5, padded}, at::kLong);
  longs[2].fill_(cache_->scratch_slot());
  auto put = [&](int64_t row, const std::vector<int64_t>& values) {
    longs[row].narrow(0, 0, batch).copy_(at::tensor(values, at::kLong));
  };
  put(0, step.input_ids);
  put(1, step.positions);
  put(2, step.slot_mapping);
  put(3, step.seed);
  put(4, step.draw);
  longs_.narrow(1, 0, padded).copy_(longs);

  at::Tensor ints = at::zeros({1 + max_batch_ + padded * width}, at::kInt);
  int32_t* data = ints.data_ptr<int32_t>();
  data[0] = static_cast<int32_t>(width);
  for (int64_t i = 0; i < max_batch_; ++i) data[1 + i] = static_cast<int32_t>(i);
  std::copy(step.block_tables.begin(), step.block_tables.end(), data + 1 + max_batch_);
  ints_.narrow(0, 0, ints.size(0)).copy_(ints);

  at::Tensor floats = at::ones({3, padded}, at::kFloat);
  floats[2].zero_();
  floats[0].narrow(0, 0, batch).copy_(at::tensor(step.temperature, at::kFloat));
  floats_.narrow(1, 0, padded).copy_(floats);
}

SampledTokens DecodeGraphs::Forward(const StepAttention& attention, int64_t padded) {
  cache_->BeginStep(&attention);
  const at::Tensor hidden =
      model_.ForwardStep(longs_[0].narrow(0, 0, padded), attention.positions, *cache_);
  cache_->BeginStep(nullptr);
  SamplingTensors params;
  params.temperature = floats_[0].narrow(0, 0, padded);
  params.top_p = floats_[1].narrow(0, 0, padded);
  params.min_p = floats_[2].narrow(0, 0, padded);
  params.top_k = top_k_.narrow(0, 0, padded);
  params.seed = longs_[3].narrow(0, 0, padded);
  params.step = longs_[4].narrow(0, 0, padded);
  params.any_filter = false;
  return SampleTokens(model_.Logits(hidden), params);
}

DecodeGraphs::Graph& DecodeGraphs::Captured(int64_t padded) {
  std::unique_ptr<Graph>& slot = graphs_[padded];
  if (slot != nullptr) return *slot;
  slot = std::make_unique<Graph>();
  StepAttention& attention = slot->attention;
  attention.positions = longs_[1].narrow(0, 0, padded);
  attention.slot_mapping = longs_[2].narrow(0, 0, padded);
  attention.token_rows = ints_.narrow(0, 1, padded);
  attention.block_tables =
      ints_.narrow(0, 1 + max_batch_, max_batch_ * max_table_width_).view({max_batch_, max_table_width_});
  attention.block_table_width = ints_.narrow(0, 0, 1);
  // Capture on a side stream after one eager run there (library handles, workspaces).
  const c10::Device device = model_.device();
  c10::cuda::device_synchronize();
  {
    c10::cuda::CUDAStreamGuard guard(c10::cuda::getStreamFromPool(false, device.index()));
    Forward(attention, padded);
    c10::cuda::device_synchronize();
    slot->graph.capture_begin(c10::cuda::MempoolId_t{pool_.first, pool_.second});
    slot->outputs = Forward(attention, padded);
    slot->graph.capture_end();
  }
  c10::cuda::device_synchronize();
  return *slot;
}

SampledTokens DecodeGraphs::Run(const StepInputs& step) {
  c10::NoGradGuard no_grad;
  const int64_t batch = static_cast<int64_t>(step.sample_rows.size());
  const int64_t padded = PaddedBatch(batch);
  // Inputs first: capturing runs the step once eagerly, which must see this step's
  // inputs (it writes the same KV the replay writes again).
  CopyInputs(step, padded);
  Graph& graph = Captured(padded);
  graph.graph.replay();
  return {graph.outputs.tokens.narrow(0, 0, batch), graph.outputs.log_probs.narrow(0, 0, batch)};
}

}  // namespace rollout::engine
