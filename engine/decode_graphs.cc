#include "engine/decode_graphs.h"

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/core/GradMode.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <algorithm>

#include "common/check.h"
#include "engine/input_ids.h"

namespace rollout::engine {

struct DecodeGraphs::Graph {
  at::cuda::CUDAGraph graph;
  StepAttention attention;
  SampledTokens outputs;
};

namespace {

constexpr int64_t kLongRows = 6, kFloatRows = 3;

}  // namespace

DecodeGraphs::DecodeGraphs(const models::CausalLM& model, PagedKvCache* cache, int64_t max_batch,
                           int64_t max_table_width, const at::Tensor& last_samples)
    : model_(model),
      cache_(cache),
      max_batch_(PaddedBatch(max_batch)),
      max_table_width_(max_table_width),
      last_samples_(last_samples) {
  ROLLOUT_CHECK(cache->uses_kernel());
  ROLLOUT_CHECK(last_samples.size(0) >= 1 && last_samples.scalar_type() == at::kLong);
  // One staging layout on both sides: longs [6, B] int64 | floats [3, B] float32 |
  // ints [1 + B + B * width] int32 — the block tables last, so a step copies only the
  // rows it uses.
  const int64_t b = max_batch_;
  const int64_t long_bytes = 8 * kLongRows * b, float_bytes = 4 * kFloatRows * b;
  const int64_t bytes = long_bytes + float_bytes + 4 * (1 + b + b * max_table_width_);
  staging_ = at::zeros({bytes}, at::TensorOptions().dtype(at::kByte).device(model.device()));
  longs_ = staging_.narrow(0, 0, long_bytes).view(at::kLong).view({kLongRows, b});
  floats_ = staging_.narrow(0, long_bytes, float_bytes).view(at::kFloat).view({kFloatRows, b});
  ints_ = staging_.narrow(0, long_bytes + float_bytes, bytes - long_bytes - float_bytes)
              .view(at::kInt);
  top_k_ = at::full({b}, -1, at::TensorOptions().dtype(at::kLong).device(model.device()));
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
  const int64_t b = max_batch_;
  const int64_t batch = static_cast<int64_t>(step.sample_rows.size());
  const int64_t width = step.max_blocks;
  const int64_t long_bytes = 8 * kLongRows * b, float_bytes = 4 * kFloatRows * b;
  const int64_t used = long_bytes + float_bytes + 4 * (1 + b + padded * width);
  // A pinned buffer of this step's own: the previous step's copy may not have run yet
  // (steps are pipelined). PyTorch's caching host allocator reuses it only after the
  // copy below ran. Entries past `padded` in each section are left unset: the graph of
  // `padded` rows never reads them.
  const at::Tensor host_staging =
      at::empty({used}, at::TensorOptions().dtype(at::kByte).pinned_memory(true));
  uint8_t* host = host_staging.data_ptr<uint8_t>();
  int64_t* longs = reinterpret_cast<int64_t*>(host);
  float* floats = reinterpret_cast<float*>(host + long_bytes);
  int32_t* ints = reinterpret_cast<int32_t*>(host + long_bytes + float_bytes);
  // Padded rows: token 0 at position 0, KV into the scratch slot, default sampling.
  for (int64_t i = 0; i < padded; ++i) {
    const bool real = i < batch;
    longs[0 * b + i] = real ? step.input_ids[i] : 0;
    longs[1 * b + i] = real ? step.positions[i] : 0;
    longs[2 * b + i] = real ? step.slot_mapping[i] : cache_->scratch_slot();
    longs[3 * b + i] = real ? step.seed[i] : 0;
    longs[4 * b + i] = real ? step.draw[i] : 0;
    longs[5 * b + i] = real ? step.input_sources[i] : -1;
    floats[0 * b + i] = real ? step.temperature[i] : 1.f;
    floats[1 * b + i] = 1.f;  // top_p: off
    floats[2 * b + i] = 0.f;  // min_p: off
    ints[1 + i] = static_cast<int32_t>(i);
  }
  ints[0] = static_cast<int32_t>(width);
  int32_t* tables = ints + 1 + b;
  std::copy(step.block_tables.begin(), step.block_tables.end(), tables);
  std::fill(tables + batch * width, tables + padded * width, 0);
  // Asynchronous, ordered before the replay on the stream.
  staging_.narrow(0, 0, used).copy_(host_staging, /*non_blocking=*/true);
}

SampledTokens DecodeGraphs::Forward(const StepAttention& attention, int64_t padded) {
  cache_->BeginStep(&attention);
  const at::Tensor ids = ResolveInputIds(longs_[0].narrow(0, 0, padded),
                                         longs_[5].narrow(0, 0, padded), last_samples_);
  const at::Tensor hidden = model_.ForwardStep(ids, attention.positions, *cache_);
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
  attention.one_token_per_row = true;  // Serves() takes decode-only steps
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
