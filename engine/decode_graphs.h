// CUDA graphs of the decode step (CUDA builds only): every sequence computes one token
// and samples one, so a step is the same kernels for a given batch size. The graph of
// a padded batch size (1, 2, 4, 8, then multiples of 8) is captured on first use —
// input ids (pending ones read from the previous step's samples), forward, LM head and
// the fused sampler — and replayed with the step's inputs copied into static device
// buffers: one host-to-device copy and one launch instead of hundreds of kernel
// launches.
//
// Padded rows compute a dummy token at position 0 and write its KV into the cache's
// scratch block; their samples are ignored. Steps with top-k/top-p/min-p rows, prefill
// chunks or wider block tables than captured run eagerly (engine/model_runner.h).
#pragma once

#include <cstdint>
#include <map>
#include <memory>

#include "engine/paged_kv_cache.h"
#include "engine/sampler.h"
#include "engine/step_inputs.h"
#include "models/causal_lm.h"

namespace rollout::engine {

class DecodeGraphs {
 public:
  // `model` and `cache` (which must use the paged attention kernel) outlive this.
  // Serves batches up to `max_batch` with block tables up to `max_table_width` wide.
  // `last_samples` ([S] int64, device, a fixed buffer) holds the previous step's sampled
  // tokens when a step runs (engine/model_runner.h); a step's input sources index it.
  // S may be smaller than a padded batch: padded rows read no source.
  DecodeGraphs(const models::CausalLM& model, PagedKvCache* cache, int64_t max_batch,
               int64_t max_table_width, const at::Tensor& last_samples);
  ~DecodeGraphs();

  bool Serves(const StepInputs& step) const;
  // Tokens and log-probs [batch] on the device, as SampleTokens would give them.
  SampledTokens Run(const StepInputs& step);

 private:
  struct Graph;
  int64_t PaddedBatch(int64_t batch) const;
  void CopyInputs(const StepInputs& step, int64_t padded);
  SampledTokens Forward(const StepAttention& attention, int64_t padded);
  Graph& Captured(int64_t padded);

  const models::CausalLM& model_;
  PagedKvCache* cache_;
  int64_t max_batch_;
  int64_t max_table_width_;
  // Static inputs: views into one device buffer filled by a single copy per step from
  // pinned host memory (layout in the constructor).
  at::Tensor staging_;  // uint8, device
  // [6, max_batch] int64: input ids, positions, cache slots, seeds, draws, input sources
  at::Tensor longs_;
  at::Tensor floats_;  // [3, max_batch] float32: temperature, top_p, min_p
  // [0] table width, then token rows [max_batch], then tables [max_batch * width].
  at::Tensor ints_;    // int32
  at::Tensor top_k_;   // [max_batch] int64, -1 (the fast path ignores it)
  at::Tensor last_samples_;
  std::map<int64_t, std::unique_ptr<Graph>> graphs_;
  std::pair<unsigned long long, unsigned long long> pool_;  // shared graph memory pool
};

}  // namespace rollout::engine
