// A step plan flattened into the arrays the model step consumes (host side): the
// tokens of every chunk one after another, where their KV goes, each chunk's block
// table, and one sampling row per sampler. engine/model_runner.h copies them to the
// device (eagerly, or into the static buffers of a CUDA graph).
#pragma once

#include <cstdint>
#include <vector>

#include "engine/scheduler.h"

namespace rollout::engine {

struct StepInputs {
  // Per token (N). A token still on the device (kPendingToken, engine/sequence.h) has
  // input id 0 and its index among the previous step's samples in input_sources; the
  // others have input source -1.
  std::vector<int64_t> input_ids, input_sources, positions, slot_mapping;
  bool any_pending_input = false;
  std::vector<int32_t> token_rows;  // the token's chunk
  // Per chunk (R): block tables padded with 0 to `max_blocks` columns, and the
  // host-side layout the gathering attention path uses (engine/paged_kv_cache.h).
  std::vector<BlockId> block_tables;
  int64_t max_blocks = 1;
  std::vector<int64_t> row_token_begin;  // R + 1
  std::vector<int64_t> row_context;
  // Per sampler (S), in plan order.
  std::vector<int64_t> sample_rows;  // the token whose hidden state gives the logits
  std::vector<float> temperature, top_p, min_p;
  std::vector<int64_t> top_k, seed, draw;
  bool any_filter = false;
  // Every chunk computes one token and samples one sequence: a plain decode step.
  bool decode_only = true;
};

StepInputs LayOutStep(const StepPlan& plan, int64_t block_size);

// Sample i of a request seeded `seed` draws from this random stream.
uint64_t SampleStream(uint64_t seed, int32_t sample);

}  // namespace rollout::engine
