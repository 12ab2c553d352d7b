#include "engine/step_inputs.h"

#include <algorithm>

#include "common/check.h"

namespace rollout::engine {

uint64_t SampleStream(uint64_t seed, int32_t sample) {
  return seed ^ (static_cast<uint64_t>(sample) * 0x9E3779B97F4A7C15ull);
}

StepInputs LayOutStep(const StepPlan& plan, int64_t block_size) {
  StepInputs step;
  for (const ScheduledChunk& chunk : plan.chunks) {
    step.max_blocks = std::max<int64_t>(step.max_blocks, chunk.sequence->blocks.blocks.size());
  }
  step.row_token_begin.push_back(0);
  for (size_t row = 0; row < plan.chunks.size(); ++row) {
    const ScheduledChunk& chunk = plan.chunks[row];
    const Sequence& sequence = *chunk.sequence;
    const std::vector<BlockId>& blocks = sequence.blocks.blocks;
    for (int64_t p = chunk.start; p < chunk.start + chunk.num_tokens; ++p) {
      const bool pending = sequence.tokens[p] == kPendingToken;
      ROLLOUT_CHECK(!pending || p + 1 == static_cast<int64_t>(sequence.tokens.size()))
          << "a pending token before the end of sequence " << sequence.id;
      step.input_ids.push_back(pending ? 0 : sequence.tokens[p]);
      step.input_sources.push_back(pending ? sequence.pending_source : -1);
      step.any_pending_input |= pending;
      step.positions.push_back(p);
      step.slot_mapping.push_back(int64_t{blocks[p / block_size]} * block_size + p % block_size);
      step.token_rows.push_back(static_cast<int32_t>(row));
    }
    step.block_tables.insert(step.block_tables.end(), blocks.begin(), blocks.end());
    step.block_tables.resize((row + 1) * step.max_blocks, 0);
    step.row_token_begin.push_back(static_cast<int64_t>(step.input_ids.size()));
    step.row_context.push_back(chunk.start + chunk.num_tokens);
    step.decode_only &= chunk.num_tokens == 1 && chunk.samplers.size() == 1;
    for (const Sequence* sampler : chunk.samplers) {
      const SamplingParams& params = *sampler->params;
      step.sample_rows.push_back(static_cast<int64_t>(step.input_ids.size()) - 1);
      step.temperature.push_back(static_cast<float>(params.temperature));
      step.top_k.push_back(params.top_k);
      step.top_p.push_back(static_cast<float>(params.top_p));
      step.min_p.push_back(static_cast<float>(params.min_p));
      step.seed.push_back(static_cast<int64_t>(SampleStream(params.seed, sampler->sample)));
      step.draw.push_back(sampler->num_output());
      step.any_filter |= params.top_k > 0 || params.top_p < 1 || params.min_p > 0;
    }
  }
  return step;
}

}  // namespace rollout::engine
