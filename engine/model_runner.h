// Runs one scheduled step on the model: lays out the plan's tokens (engine/
// step_inputs.h), performs the copy-on-write block copies, runs CausalLM::ForwardStep
// over the paged cache, applies the LM head to the rows that sample and draws their
// tokens with the sampler — on the model's device. The step's inputs go there in one
// transfer the host does not wait for (engine/step_upload.h), and its samples come back
// the same way: Launch() returns once the step is queued (on CUDA), and the host waits
// for the samples only when it asks for them, so it can plan and launch the next step
// meanwhile. That step's inputs may be the tokens this one drew (kPendingToken): the
// runner keeps the newest step's samples on the device and fills them in there. On
// CUDA, decode steps replay CUDA graphs (engine/decode_graphs.h) unless
// `enforce_eager`.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <functional>

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

// A launched step's samples on their way to the host.
class LaunchedStep {
 public:
  // Waits until the samples are on the host and returns them. Call once.
  SampledStep Wait();

 private:
  friend class ModelRunner;
  at::Tensor tokens_;     // [S] int64, host
  at::Tensor log_probs_;  // [S] float32, host
  std::function<void()> copied_;  // waits for the device-to-host copies; empty: done
};

struct ModelRunnerOptions {
  bool enforce_eager = false;  // no CUDA graphs
  int64_t max_batch = 256;     // largest decode batch served by a graph
  int64_t max_samples = 1024;  // samplers a step can have at most (max_num_seqs)
};

class ModelRunner {
 public:
  // `model` and `cache` must outlive the runner.
  ModelRunner(const models::CausalLM& model, PagedKvCache* cache,
              const ModelRunnerOptions& options);
  ~ModelRunner();

  // Queues the step after the previously launched one. Its pending input tokens are
  // that step's samples (Sequence::pending_source).
  LaunchedStep Launch(const StepPlan& plan);

 private:
  SampledTokens RunEager(StepInputs step);
  // Keeps the samples on the device for the next step and starts their copy to the host.
  LaunchedStep Return(const SampledTokens& sampled);

  const models::CausalLM& model_;
  PagedKvCache* cache_;
  // [max_samples] int64 on the model's device: the newest launched step's sampled
  // tokens (first S entries), where pending input tokens are read from.
  at::Tensor last_samples_;
  // CUDA builds, CUDA model, not enforce_eager. The deleter is set where the graphs are
  // made, so CPU builds (which do not compile engine/decode_graphs.cc) never need it.
  std::unique_ptr<DecodeGraphs, void (*)(DecodeGraphs*)> graphs_{nullptr, nullptr};
};

}  // namespace rollout::engine
