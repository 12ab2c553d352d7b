// The scheduler's decisions step by step (with the real block manager), and a fuzz
// run over random request mixes and budgets checking that every sample completes,
// every token is computed exactly once in order, and no block leaks.
#include "engine/scheduler.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <random>
#include <vector>

namespace rollout::engine {
namespace {

struct Harness {
  Harness(int32_t num_blocks, int32_t block_size, SchedulerOptions options,
          bool prefix_caching = false)
      : blocks({num_blocks, block_size, prefix_caching}), scheduler(options, &blocks) {}

  Sequence* Add(int64_t prompt_length, int32_t n, int64_t max_tokens, bool share = true) {
    auto& params = params_store.emplace_back(std::make_unique<SamplingParams>());
    params->n = n;
    params->max_tokens = max_tokens;
    Sequence* first = nullptr;
    for (int32_t sample = 0; sample < (share ? 1 : n); ++sample) {
      auto sequence = std::make_unique<Sequence>();
      sequence->params = params.get();
      sequence->sample = sample;
      for (int64_t i = 0; i < prompt_length; ++i) sequence->tokens.push_back(static_cast<int32_t>(i % 7));
      sequence->prompt_length = prompt_length;
      sequence->pending_forks = share ? n - 1 : 0;
      if (first == nullptr) first = sequence.get();
      scheduler.Add(std::move(sequence));
    }
    return first;
  }

  // Runs the step: every sampler gets token 1; those at max_tokens finish.
  void Complete(const StepPlan& plan) {
    scheduler.CompleteStep(plan);
    for (const ScheduledChunk& chunk : plan.chunks) {
      for (Sequence* sampler : chunk.samplers) {
        sampler->tokens.push_back(1);
        if (sampler->num_output() >= sampler->params->max_tokens) {
          scheduler.Finish(sampler, FinishReason::kLength);
        }
      }
    }
  }

  KvBlockManager blocks;
  Scheduler scheduler;
  std::vector<std::unique_ptr<SamplingParams>> params_store;
};

SchedulerOptions Budget(int32_t max_num_seqs, int64_t max_num_batched_tokens) {
  SchedulerOptions options;
  options.max_num_seqs = max_num_seqs;
  options.max_num_batched_tokens = max_num_batched_tokens;
  return options;
}

TEST(Scheduler, PrefillsThenDecodesOneTokenPerSequence) {
  Harness h(64, 4, Budget(8, 100));
  h.Add(10, 1, 3);
  h.Add(6, 1, 3);
  StepPlan first = h.scheduler.Schedule();
  ASSERT_EQ(first.chunks.size(), 2u);
  EXPECT_EQ(first.chunks[0].num_tokens, 10);
  EXPECT_EQ(first.chunks[1].num_tokens, 6);
  EXPECT_EQ(first.num_tokens, 16);
  h.Complete(first);
  StepPlan second = h.scheduler.Schedule();
  ASSERT_EQ(second.chunks.size(), 2u);
  EXPECT_EQ(second.chunks[0].start, 10);
  EXPECT_EQ(second.chunks[0].num_tokens, 1);
  EXPECT_EQ(second.chunks[1].start, 6);
}

TEST(Scheduler, ChunksALongPromptByTheTokenBudget) {
  Harness h(64, 4, Budget(8, 8));
  h.Add(20, 1, 2);
  std::vector<int64_t> chunk_sizes;
  for (int i = 0; i < 3; ++i) {
    StepPlan plan = h.scheduler.Schedule();
    ASSERT_EQ(plan.chunks.size(), 1u);
    chunk_sizes.push_back(plan.chunks[0].num_tokens);
    EXPECT_EQ(plan.chunks[0].samplers.empty(), i < 2) << "only the last chunk samples";
    h.Complete(plan);
  }
  EXPECT_EQ(chunk_sizes, (std::vector<int64_t>{8, 8, 4}));
}

TEST(Scheduler, GroupLeaderForksItsSamplesWhenThePromptIsDone) {
  Harness h(64, 4, Budget(8, 100));
  h.Add(10, 4, 2);
  StepPlan plan = h.scheduler.Schedule();
  ASSERT_EQ(plan.chunks.size(), 1u);
  ASSERT_EQ(plan.chunks[0].samplers.size(), 4u);
  for (int32_t i = 0; i < 4; ++i) EXPECT_EQ(plan.chunks[0].samplers[i]->sample, i);
  EXPECT_EQ(h.blocks.num_used_blocks(), 3);  // 10 tokens in blocks of 4, shared by all 4
  EXPECT_EQ(h.blocks.ref_count(plan.chunks[0].sequence->blocks.blocks[0]), 4);
  h.Complete(plan);
  StepPlan decode = h.scheduler.Schedule();
  EXPECT_EQ(decode.chunks.size(), 4u);
  // The shared partial block (tokens 8, 9) is copied for all but the last writer.
  EXPECT_EQ(decode.copies.size(), 3u);
}

TEST(Scheduler, PreemptsTheNewestSequenceWhenBlocksRunOut) {
  Harness h(6, 2, Budget(8, 100));
  Sequence* old = h.Add(4, 1, 4);    // grows to 8 tokens: 4 blocks
  Sequence* young = h.Add(4, 1, 4);
  h.Complete(h.scheduler.Schedule());  // 2 + 2 blocks used
  h.Complete(h.scheduler.Schedule());  // 5 tokens each: 3 + 3 blocks
  StepPlan plan = h.scheduler.Schedule();  // 6 tokens each fit in the same blocks
  h.Complete(plan);
  plan = h.scheduler.Schedule();  // 7 tokens each would need 8 blocks
  EXPECT_EQ(plan.num_preempted, 1);
  ASSERT_EQ(plan.chunks.size(), 1u);
  EXPECT_EQ(plan.chunks[0].sequence, old);
  EXPECT_EQ(young->status, SequenceStatus::kWaiting);
  EXPECT_EQ(young->num_computed, 0);
}

TEST(Scheduler, RespectsMaxNumSeqsIncludingGroupSeats) {
  Harness h(64, 4, Budget(4, 100));
  h.Add(3, 3, 2);
  h.Add(3, 2, 2);  // would make 5 sequences
  StepPlan plan = h.scheduler.Schedule();
  EXPECT_EQ(plan.chunks.size(), 1u);
  EXPECT_EQ(h.scheduler.num_waiting(), 1);
}

// Random mixes; every step is checked against a shadow count of computed tokens.
TEST(Scheduler, SequenceAtItsLengthCapWaitsForItsLastToken) {
  Harness h(64, 4, Budget(8, 100));
  Sequence* capped = h.Add(5, 1, 10);
  capped->max_length = 6;  // one output token
  Sequence* other = h.Add(5, 1, 10);
  const StepPlan prefill = h.scheduler.Schedule();
  ASSERT_EQ(prefill.chunks.size(), 2u);
  h.scheduler.CompleteStep(prefill);
  // The engine has launched the step: both samplers' tokens are still on the device.
  capped->tokens.push_back(kPendingToken);
  other->tokens.push_back(kPendingToken);
  const StepPlan next = h.scheduler.Schedule();
  ASSERT_EQ(next.chunks.size(), 1u);
  EXPECT_EQ(next.chunks[0].sequence, other);
  h.scheduler.Finish(capped, FinishReason::kLength);
  h.scheduler.Finish(other, FinishReason::kEos);
  EXPECT_EQ(h.blocks.num_used_blocks(), 0);
}

// The engine applies step k's samples after it launched step k + 1: a sequence can
// finish (freeing its blocks) between Schedule() and CompleteStep() of a plan naming it.
TEST(Scheduler, CompleteStepSkipsASequenceThatFinishedMeanwhile) {
  Harness h(64, 4, Budget(8, 100), /*prefix_caching=*/true);
  Sequence* ending = h.Add(9, 1, 10);
  Sequence* going_on = h.Add(6, 1, 10);
  h.Complete(h.scheduler.Schedule());
  const StepPlan plan = h.scheduler.Schedule();
  ASSERT_EQ(plan.chunks.size(), 2u);
  h.scheduler.Finish(ending, FinishReason::kEos);
  h.scheduler.CompleteStep(plan);
  EXPECT_EQ(going_on->num_computed, 7);
  EXPECT_EQ(h.scheduler.num_running(), 1);
  EXPECT_EQ(h.scheduler.TakeFinished().size(), 1u);
  h.scheduler.Finish(going_on, FinishReason::kEos);
  EXPECT_EQ(h.blocks.num_used_blocks(), 0);
}

TEST(Scheduler, FuzzCompletesEverySampleWithoutLeakingBlocks) {
  for (uint32_t seed = 0; seed < 200; ++seed) {
    std::mt19937 rng(seed);
    auto uniform = [&](int64_t lo, int64_t hi) {
      return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
    };
    const int32_t block_size = static_cast<int32_t>(uniform(1, 8));
    const int64_t max_prompt = uniform(1, 40), max_new = uniform(1, 30);
    const int32_t max_n = static_cast<int32_t>(uniform(1, 4));
    const int64_t longest_blocks = (max_prompt + max_new + block_size - 1) / block_size;
    const int32_t num_blocks = static_cast<int32_t>(longest_blocks + uniform(0, 3 * longest_blocks));
    Harness h(num_blocks, block_size,
              Budget(static_cast<int32_t>(uniform(max_n, 16)), uniform(1, 64)),
              /*prefix_caching=*/uniform(0, 1) == 1);
    int64_t expected_samples = 0;
    const int64_t requests = uniform(1, 12);
    for (int64_t r = 0; r < requests; ++r) {
      const int32_t n = static_cast<int32_t>(uniform(1, max_n));
      h.Add(uniform(1, max_prompt), n, uniform(1, max_new), /*share=*/uniform(0, 1) == 1);
      expected_samples += n;
    }
    int64_t finished = 0;
    for (int step = 0; h.scheduler.HasUnfinished(); ++step) {
      ASSERT_LT(step, 100000) << "seed " << seed << ": no progress";
      StepPlan plan = h.scheduler.Schedule();
      ASSERT_FALSE(plan.empty()) << "seed " << seed;
      for (const ScheduledChunk& chunk : plan.chunks) {
        ASSERT_EQ(chunk.start, chunk.sequence->num_computed) << "seed " << seed;
        ASSERT_GE(chunk.sequence->blocks.num_tokens, chunk.start + chunk.num_tokens);
      }
      h.Complete(plan);
      for (const auto& done : h.scheduler.TakeFinished()) {
        EXPECT_EQ(done->num_output(), done->params->max_tokens) << "seed " << seed;
        ++finished;
      }
    }
    EXPECT_EQ(finished, expected_samples) << "seed " << seed;
    EXPECT_EQ(h.blocks.num_used_blocks(), 0) << "seed " << seed;
  }
}

}  // namespace
}  // namespace rollout::engine
