// One sample being generated: its tokens (prompt, then output), how many of them have
// their KV in the cache, and the blocks holding that KV. The scheduler owns sequences;
// the engine appends sampled tokens and decides when one finishes.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "engine/kv_block_manager.h"
#include "engine/sampling_params.h"

namespace rollout::engine {

enum class SequenceStatus { kWaiting, kRunning, kFinished };

// An output token drawn on the device whose value the host has not fetched yet.
constexpr int32_t kPendingToken = -1;

struct Sequence {
  int64_t id = 0;          // engine-wide, increasing in arrival order (the priority)
  int64_t request = 0;     // index of the request in its Generate() call
  int32_t sample = 0;      // which of the request's n samples
  const SamplingParams* params = nullptr;  // the request's; outlives the sequence

  // Prompt, then output. The engine launches a step before it fetches the previous
  // step's samples, so the outputs past the first log_probs.size() are kPendingToken
  // (at most two: one per launched step whose samples are not applied yet); when the
  // scheduler plans a step, only the last one can be, and its value is at index
  // `pending_source` of the newest launched step's samples, on the device.
  std::vector<int32_t> tokens;
  int64_t prompt_length = 0;
  std::vector<float> log_probs;  // one per output token the host knows
  int32_t pending_source = -1;
  // The length at which the sequence stops for good (prompt + max_tokens, within the
  // model's positions): the scheduler computes nothing for one that has reached it.
  int64_t max_length = std::numeric_limits<int64_t>::max();
  // Tokens whose KV is in `blocks`; tokens[num_computed..] are computed by the next
  // step that schedules this sequence (all of them after a preemption).
  int64_t num_computed = 0;
  // A group leader (group prefix sharing) forks this many more samples off itself
  // when its prompt prefill completes; 0 otherwise.
  int32_t pending_forks = 0;

  BlockTable blocks;
  SequenceStatus status = SequenceStatus::kWaiting;
  FinishReason finish_reason = FinishReason::kNone;

  // Output tokens drawn, pending ones included.
  int64_t num_output() const { return static_cast<int64_t>(tokens.size()) - prompt_length; }
};

}  // namespace rollout::engine
