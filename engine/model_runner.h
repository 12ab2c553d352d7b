// Runs one scheduled step on the model: lays out the plan's tokens (engine/
// step_inputs.h), performs the copy-on-write block copies, runs CausalLM::ForwardStep
// over the paged cache, applies the LM head to the rows that sample and draws their
// tokens with the sampler — on the model's device. The step's inputs go there in one
// transfer the host does not wait for (engine/step_upload.h); the host waits only at
// the end, for the sampled tokens and their log-probs. On CUDA, decode steps replay
// CUDA graphs (engine/decode_graphs.h) unless `enforce_eager`.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/paged_kv_cache.h"
#include "engine/sampler.h"
#include "engine/scheduler.h"
#include "engine/step_inputs.h"
#include "models/causal_lm.h"

namespace rollout::engine {

class DecodeGraphs;

// One entry per sampler of the plan, in plan order (chunks, then their samplers).
struct SampledStep {
  std::vector<int32_t> tokens;
  std::vector<float> log_probs;
};

struct ModelRunnerOptions {
  bool enforce_eager = false;  // no CUDA graphs
  int64_t max_batch = 256;     // largest decode batch served by a graph
};

class ModelRunner {
 public:
  // `model` and `cache` must outlive the runner.
  ModelRunner(const models::CausalLM& model, PagedKvCache* cache,
              const ModelRunnerOptions& options);
  ~ModelRunner();

  SampledStep Run(const StepPlan& plan);

 private:
  SampledTokens RunEager(StepInputs step);

  const models::CausalLM& model_;
  PagedKvCache* cache_;
  // CUDA builds, CUDA model, not enforce_eager. The deleter is set where the graphs are
  // made, so CPU builds (which do not compile engine/decode_graphs.cc) never need it.
  std::unique_ptr<DecodeGraphs, void (*)(DecodeGraphs*)> graphs_{nullptr, nullptr};
};

}  // namespace rollout::engine
