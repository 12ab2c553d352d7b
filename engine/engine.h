// The rollout engine: generates samples for a batch of prompts with continuous
// batching over a paged KV cache (engine/scheduler.h, engine/kv_block_manager.h),
// group prefix sharing (each prompt prefilled once, forked into its n samples) and
// on-device sampling (engine/sampler.h).
//
//   ASSIGN_OR_RETURN(auto engine, Engine::Create(model, &tokenizer, options));
//   ASSIGN_OR_RETURN(std::vector<RequestOutput> out, engine->Generate(requests));
//
// The engine borrows the model (colocated with the actor: no weight copy) and owns
// the KV cache, sized once at creation. Generate() runs until every sample finished;
// one call at a time (not thread-safe). Steps are pipelined: the host plans and
// launches step k + 1 before it fetches step k's tokens (those feed step k + 1 on the
// device), so the device does not wait for the host's bookkeeping. A sample that ends
// at step k (EOS, stop) has one more row computed in step k + 1, which is dropped.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "engine/sampling_params.h"
#include "engine/stop_checker.h"
#include "models/causal_lm.h"
#include "models/tokenizer.h"

namespace rollout::engine {

class KvBlockManager;
class ModelRunner;
class PagedKvCache;
class Scheduler;
struct SampledStep;
struct Sequence;
struct StepPlan;

// verl's rollout.* keys where they exist.
struct EngineOptions {
  int32_t block_size = 16;
  double gpu_memory_utilization = 0.5;        // CUDA: fraction of free memory for KV
  int64_t cpu_kv_cache_bytes = int64_t{1} << 30;  // CPU: the KV budget
  int64_t num_blocks = 0;                     // > 0: exactly this many (tests, benchmarks)
  int32_t max_num_seqs = 1024;
  int64_t max_num_batched_tokens = 8192;
  bool enable_chunked_prefill = true;
  bool enable_prefix_caching = false;
  // Prefill each prompt once and fork it into its n samples. Off: n independent
  // sequences (same samples, n prefills) — for comparisons.
  bool share_group_prefix = true;
  // No CUDA graphs for decode steps (verl's rollout.enforce_eager).
  bool enforce_eager = false;
};

struct GenerationRequest {
  std::vector<int32_t> prompt;
  SamplingParams params;
};

struct Completion {
  std::vector<int32_t> tokens;   // generated ids, the EOS / stop token included
  std::vector<float> log_probs;  // per token, see engine/sampler.h
  FinishReason finish_reason = FinishReason::kNone;
  // Decoded tokens (special tokens skipped), cut before a matched stop string; empty
  // without a tokenizer.
  std::string text;
};

struct RequestOutput {
  std::vector<Completion> samples;  // params.n of them, by sample index
};

// Counters since the engine was created.
struct EngineStats {
  int64_t steps = 0;
  int64_t prompt_tokens_computed = 0;  // prefill work (recomputation after preemption included)
  int64_t output_tokens = 0;
  int64_t preemptions = 0;
  int64_t peak_used_blocks = 0;
  int64_t num_blocks = 0;
  int64_t block_size = 0;
  // Where Generate()'s host time goes: scheduling, the model (launching steps and
  // waiting for their samples, so device time the host could not overlap is in it) and
  // output handling.
  double schedule_seconds = 0, model_seconds = 0, output_seconds = 0;
  // The model time of steps that compute prompt tokens (prefill chunks, possibly mixed
  // with decode tokens), and how many such steps there were.
  double prefill_step_seconds = 0;
  int64_t prefill_steps = 0;
};

class Engine {
 public:
  // `model` (and `tokenizer`, which may be null: no text, no stop strings) must
  // outlive the engine. ResourceExhausted when the budget gives no KV block.
  static absl::StatusOr<std::unique_ptr<Engine>> Create(const models::CausalLM& model,
                                                        const models::Tokenizer* tokenizer,
                                                        const EngineOptions& options);
  ~Engine();

  // Called after every step with (finished samples, all samples).
  using Progress = std::function<void(int64_t, int64_t)>;
  // One output per request, in order. InvalidArgument naming the request when one is
  // malformed or can never fit in the cache; nothing is generated then.
  // `finish_target` > 0: once a step leaves at least that many samples finished, the
  // others stop there and come back empty with FinishReason::kAbort (verl's
  // rollout.over_sample_rate, which waits for the first finished ones only); 0 generates
  // every sample to its end.
  absl::StatusOr<std::vector<RequestOutput>> Generate(absl::Span<const GenerationRequest> requests,
                                                      const Progress& progress = nullptr,
                                                      int64_t finish_target = 0);

  const EngineStats& stats() const { return stats_; }
  // Zeroes the counters (benchmarks: after a warm-up call).
  void ResetStats();
  // Forgets the prefix cache (EngineOptions::enable_prefix_caching): call after the
  // model's weights change, or later prompts would reuse KV the old weights computed.
  // Between Generate() calls only.
  void DropPrefixCache();
  // Blocks currently held (0 between Generate() calls unless prefix caching keeps some
  // registered: those count as free).
  int64_t used_blocks() const;

 private:
  Engine(const models::CausalLM& model, const models::Tokenizer* tokenizer,
         const EngineOptions& options, int64_t num_blocks);
  using StopCheckers = std::map<const Sequence*, StopChecker>;
  absl::Status Validate(absl::Span<const GenerationRequest> requests) const;
  // One sequence per sample, or one group leader per request when sharing.
  void Enqueue(absl::Span<const GenerationRequest> requests, Scheduler& scheduler) const;
  // A launched step whose samples the host has not applied yet (engine.cc).
  struct InFlightStep;
  // Launches the plan's step and marks its samplers' next tokens pending.
  InFlightStep Launch(StepPlan plan);
  // Applies a step's samples (one per sampler of `plan`, in order): tokens, log-probs,
  // finished samples.
  void Apply(const StepPlan& plan, const SampledStep& sampled, Scheduler& scheduler,
             StopCheckers& stop_checkers);
  // Fills in the sequence's first pending token; the reason the sequence ends with it,
  // or kNone.
  FinishReason ApplyToken(Sequence& sequence, int32_t token, float log_prob,
                          StopCheckers& stop_checkers) const;
  Completion MakeCompletion(Sequence& done, StopCheckers& stop_checkers) const;

  const models::CausalLM& model_;
  const models::Tokenizer* tokenizer_;
  EngineOptions options_;
  std::vector<int32_t> eos_ids_;
  std::unique_ptr<KvBlockManager> blocks_;
  std::unique_ptr<PagedKvCache> cache_;
  std::unique_ptr<ModelRunner> runner_;
  EngineStats stats_;
};

}  // namespace rollout::engine
