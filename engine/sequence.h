// One sample being generated: its tokens (prompt, then output), how many of them have
// their KV in the cache, and the blocks holding that KV. The scheduler owns sequences;
// the engine appends sampled tokens and decides when one finishes.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/kv_block_manager.h"
#include "engine/sampling_params.h"

namespace rollout::engine {

enum class SequenceStatus { kWaiting, kRunning, kFinished };

struct Sequence {
  int64_t id = 0;          // engine-wide, increasing in arrival order (the priority)
  int64_t request = 0;     // index of the request in its Generate() call
  int32_t sample = 0;      // which of the request's n samples
  const SamplingParams* params = nullptr;  // the request's; outlives the sequence

  std::vector<int32_t> tokens;  // prompt, then output
  int64_t prompt_length = 0;
  std::vector<float> log_probs;  // one per output token
  // Tokens whose KV is in `blocks`; tokens[num_computed..] are computed by the next
  // step that schedules this sequence (all of them after a preemption).
  int64_t num_computed = 0;
  // A group leader (group prefix sharing) forks this many more samples off itself
  // when its prompt prefill completes; 0 otherwise.
  int32_t pending_forks = 0;

  BlockTable blocks;
  SequenceStatus status = SequenceStatus::kWaiting;
  FinishReason finish_reason = FinishReason::kNone;

  int64_t num_output() const { return static_cast<int64_t>(tokens.size()) - prompt_length; }
};

}  // namespace rollout::engine
