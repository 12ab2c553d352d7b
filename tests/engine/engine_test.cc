// The rollout engine on the tiny Qwen2 fixture (float32, CPU): its outputs against
// plain full-forward decoding, and the invariance of outputs under group prefix
// sharing, preemption, chunked prefill and prefix caching.
#include "engine/engine.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <set>
#include <vector>

#include "tests/engine/tiny_engine_fixture.h"

namespace rollout::engine {
namespace {

using ::testing::HasSubstr;

class EngineTest : public TinyEngineTest {
 protected:
  // Greedy decoding by recomputing the whole sequence with CausalLM::Forward per token.
  static std::vector<int32_t> ReferenceGreedy(std::vector<int32_t> tokens, int64_t max_tokens) {
    c10::NoGradGuard no_grad;
    std::vector<int32_t> out;
    for (int64_t step = 0; step < max_tokens; ++step) {
      const int64_t length = static_cast<int64_t>(tokens.size());
      const at::Tensor ids = at::tensor(std::vector<int64_t>(tokens.begin(), tokens.end())).view({1, -1});
      const at::Tensor positions = at::arange(length).view({1, -1});
      const at::Tensor hidden = model_->Forward(ids, positions, at::Tensor());
      const int32_t next =
          static_cast<int32_t>(model_->Logits(hidden[0][length - 1]).argmax().item<int64_t>());
      out.push_back(next);
      tokens.push_back(next);
    }
    return out;
  }

  // Sampled requests of assorted prompt lengths, n samples each, EOS ignored.
  static std::vector<GenerationRequest> SampledRequests(int32_t n, int64_t max_tokens) {
    std::vector<GenerationRequest> requests;
    const int64_t lengths[] = {5, 17, 32, 9};
    for (int32_t i = 0; i < 4; ++i) {
      GenerationRequest request;
      request.prompt = Prompt(lengths[i], i);
      request.params.n = n;
      request.params.temperature = 1.0;
      request.params.max_tokens = max_tokens;
      request.params.ignore_eos = true;
      request.params.seed = 1000 + i;
      requests.push_back(request);
    }
    return requests;
  }
};

TEST_F(EngineTest, GreedyMatchesFullForwardDecoding) {
  auto engine = MakeEngine(EngineOptions());
  std::vector<GenerationRequest> requests;
  for (int32_t i = 0; i < 3; ++i) {
    GenerationRequest request;
    request.prompt = Prompt(4 + 9 * i, i);
    request.params.temperature = 0;
    request.params.max_tokens = 16;
    request.params.ignore_eos = true;
    request.params.n = 2;
    requests.push_back(request);
  }
  const std::vector<RequestOutput> outputs = Run(*engine, requests);
  ASSERT_EQ(outputs.size(), 3u);
  for (size_t i = 0; i < requests.size(); ++i) {
    const std::vector<int32_t> expected = ReferenceGreedy(requests[i].prompt, 16);
    for (const Completion& sample : outputs[i].samples) {
      EXPECT_EQ(sample.tokens, expected) << "request " << i;
      EXPECT_EQ(sample.finish_reason, FinishReason::kLength);
      EXPECT_EQ(sample.log_probs.size(), 16u);
    }
  }
  EXPECT_EQ(engine->used_blocks(), 0);
}

TEST_F(EngineTest, GroupSharingGivesSameSamplesWithOnePrefillAndFewerBlocks) {
  EngineOptions shared_options;
  EngineOptions separate_options;
  separate_options.share_group_prefix = false;
  auto shared = MakeEngine(shared_options);
  auto separate = MakeEngine(separate_options);
  const auto requests = SampledRequests(/*n=*/4, /*max_tokens=*/6);
  const auto with_sharing = Run(*shared, requests);
  const auto without_sharing = Run(*separate, requests);
  ExpectSameOutputs(with_sharing, without_sharing);
  // Different samples of one prompt differ (they draw from different streams).
  EXPECT_NE(with_sharing[2].samples[0].tokens, with_sharing[2].samples[1].tokens);

  const int64_t prompt_tokens = 5 + 17 + 32 + 9;
  EXPECT_EQ(shared->stats().prompt_tokens_computed, prompt_tokens);
  EXPECT_EQ(separate->stats().prompt_tokens_computed, 4 * prompt_tokens);
  EXPECT_LT(shared->stats().peak_used_blocks, separate->stats().peak_used_blocks);
  EXPECT_EQ(shared->used_blocks(), 0);
  EXPECT_EQ(separate->used_blocks(), 0);
}

TEST_F(EngineTest, SamplesReproduceWithTheSameSeeds) {
  auto engine = MakeEngine(EngineOptions());
  const auto requests = SampledRequests(3, 8);
  ExpectSameOutputs(Run(*engine, requests), Run(*engine, requests));
  auto reseeded = requests;
  reseeded[0].params.seed += 1;
  EXPECT_NE(Run(*engine, reseeded)[0].samples[0].tokens, Run(*engine, requests)[0].samples[0].tokens);
}

TEST_F(EngineTest, PreemptionUnderATinyKvBudgetKeepsOutputs) {
  EngineOptions large;
  large.block_size = 4;
  EngineOptions tiny = large;
  tiny.num_blocks = 14;  // one sample needs at most ceil((32 + 20) / 4) = 13
  const auto requests = SampledRequests(3, 20);
  auto reference = MakeEngine(large);
  auto constrained = MakeEngine(tiny);
  ExpectSameOutputs(Run(*reference, requests), Run(*constrained, requests));
  EXPECT_GT(constrained->stats().preemptions, 0);
  EXPECT_EQ(reference->stats().preemptions, 0);
  EXPECT_EQ(constrained->used_blocks(), 0);
}

TEST_F(EngineTest, ChunkedPrefillKeepsOutputs) {
  EngineOptions chunked;
  chunked.max_num_batched_tokens = 7;
  const auto requests = SampledRequests(2, 5);
  auto reference = MakeEngine(EngineOptions());
  auto engine = MakeEngine(chunked);
  ExpectSameOutputs(Run(*reference, requests), Run(*engine, requests));
  EXPECT_GT(engine->stats().steps, reference->stats().steps);
}

// Samples that stop at different steps while others go on (the engine learns a step's
// tokens only after launching the next, so a stopping sample has one more row computed
// and dropped): each ends exactly where its free run first draws a stop token, under an
// ample cache, a tiny one (preemption), a small token budget (chunked prefill), without
// group sharing and with prefix caching, and every block is free at the end.
TEST_F(EngineTest, SamplesStoppingAtDifferentStepsKeepTheirOutputsUnderEveryBudget) {
  EngineOptions ample;
  ample.block_size = 4;
  auto requests = SampledRequests(3, 20);
  const std::vector<RequestOutput> free_run = Run(*MakeEngine(ample), requests);
  std::vector<RequestOutput> want = free_run;
  for (size_t r = 0; r < requests.size(); ++r) {
    // Stop tokens from two samples at different depths; a sample stops at the first.
    const int32_t early = free_run[r].samples[0].tokens[2 + r];
    const int32_t late = free_run[r].samples[1].tokens[9 + r];
    requests[r].params.stop_token_ids = {early, late};
    for (Completion& sample : want[r].samples) {
      const auto stop = std::find_first_of(sample.tokens.begin(), sample.tokens.end(),
                                           requests[r].params.stop_token_ids.begin(),
                                           requests[r].params.stop_token_ids.end());
      if (stop == sample.tokens.end()) continue;
      const size_t kept = static_cast<size_t>(stop - sample.tokens.begin()) + 1;
      sample.tokens.resize(kept);
      sample.log_probs.resize(kept);
      sample.finish_reason = FinishReason::kStop;
    }
  }
  std::vector<size_t> stopped_at;
  for (const RequestOutput& request : want) {
    for (const Completion& sample : request.samples) {
      if (sample.finish_reason == FinishReason::kStop) stopped_at.push_back(sample.tokens.size());
    }
  }
  // Early and late stops, and samples that run to max_tokens.
  ASSERT_GE(std::set<size_t>(stopped_at.begin(), stopped_at.end()).size(), 3u);
  ASSERT_LT(stopped_at.size(), 12u);
  EngineOptions tiny = ample;
  tiny.num_blocks = 14;
  EngineOptions chunked = ample;
  chunked.max_num_batched_tokens = 7;
  EngineOptions unshared = ample;
  unshared.share_group_prefix = false;
  EngineOptions cached = ample;
  cached.enable_prefix_caching = true;
  int64_t preemptions = 0;
  for (const EngineOptions& options : {ample, tiny, chunked, unshared, cached}) {
    auto engine = MakeEngine(options);
    const std::vector<RequestOutput> got = Run(*engine, requests);
    ExpectSameOutputs(got, want);
    for (size_t r = 0; r < got.size(); ++r) {
      for (size_t i = 0; i < got[r].samples.size(); ++i) {
        EXPECT_EQ(got[r].samples[i].finish_reason, want[r].samples[i].finish_reason)
            << "request " << r << " sample " << i;
      }
    }
    EXPECT_EQ(engine->used_blocks(), 0);
    preemptions += engine->stats().preemptions;
  }
  EXPECT_GT(preemptions, 0);
}

// finish_target (verl's rollout.over_sample_rate): requests whose samples run to
// different lengths; once a step leaves the target finished, the rest come back empty
// as aborted, the finished keep what a full run gives them, every block is free and the
// engine serves the next call in full. Under a tiny cache (preemption) as well.
TEST_F(EngineTest, FinishTargetAbortsTheRestOnceEnoughSamplesFinished) {
  std::vector<GenerationRequest> requests = SampledRequests(2, 20);
  const int64_t max_tokens[] = {2, 4, 12, 20};
  for (size_t r = 0; r < requests.size(); ++r) requests[r].params.max_tokens = max_tokens[r];
  EngineOptions ample;
  ample.block_size = 4;
  EngineOptions tiny = ample;
  tiny.num_blocks = 14;
  const std::vector<RequestOutput> full = Run(*MakeEngine(ample), requests);
  for (const EngineOptions& options : {ample, tiny}) {
    auto engine = MakeEngine(options);
    auto cut = engine->Generate(requests, nullptr, /*finish_target=*/3);
    ASSERT_TRUE(cut.ok()) << cut.status();
    // Requests 0 and 1 finish first (2 and 4 tokens); the step finishing request 1's
    // samples reaches the target, so all four of theirs are kept.
    for (size_t r = 0; r < 2; ++r) {
      for (size_t i = 0; i < 2; ++i) {
        EXPECT_EQ((*cut)[r].samples[i].tokens, full[r].samples[i].tokens) << "request " << r << " sample " << i;
        EXPECT_EQ((*cut)[r].samples[i].finish_reason, FinishReason::kLength);
      }
    }
    for (size_t r = 2; r < 4; ++r) {
      for (const Completion& sample : (*cut)[r].samples) {
        EXPECT_EQ(sample.finish_reason, FinishReason::kAbort) << "request " << r;
        EXPECT_TRUE(sample.tokens.empty());
        EXPECT_TRUE(sample.log_probs.empty());
        EXPECT_EQ(sample.text, "");
      }
    }
    EXPECT_EQ(engine->used_blocks(), 0);
    ExpectSameOutputs(Run(*engine, requests), full);
    auto whole = engine->Generate(requests, nullptr, /*finish_target=*/8);
    ASSERT_TRUE(whole.ok()) << whole.status();
    ExpectSameOutputs(*whole, full);
  }
}

TEST_F(EngineTest, PrefixCacheReusesPromptBlocksAcrossCalls) {
  EngineOptions options;
  options.enable_prefix_caching = true;
  options.block_size = 4;
  auto engine = MakeEngine(options);
  auto reference = MakeEngine(EngineOptions());
  const auto requests = SampledRequests(2, 5);
  const auto first = Run(*engine, requests);
  const int64_t first_prefill = engine->stats().prompt_tokens_computed;
  const auto second = Run(*engine, requests);
  const int64_t second_prefill = engine->stats().prompt_tokens_computed - first_prefill;
  ExpectSameOutputs(first, second);
  ExpectSameOutputs(first, Run(*reference, requests));
  // Every full block but a prompt's last token comes from the cache.
  EXPECT_LT(second_prefill, first_prefill / 2);
}

// The sum of |log-prob| differences between two runs' samples.
double LogProbDistance(const std::vector<RequestOutput>& a, const std::vector<RequestOutput>& b) {
  double distance = 0;
  for (size_t r = 0; r < a.size() && r < b.size(); ++r) {
    for (size_t s = 0; s < a[r].samples.size() && s < b[r].samples.size(); ++s) {
      const auto& x = a[r].samples[s].log_probs;
      const auto& y = b[r].samples[s].log_probs;
      for (size_t t = 0; t < x.size() && t < y.size(); ++t) distance += std::abs(x[t] - y[t]);
    }
  }
  return distance;
}

TEST_F(EngineTest, DroppedPrefixCacheRecomputesPromptsAfterAWeightChange) {
  auto loaded = models::CausalLM::Load(kFixture, models::LoadOptions());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  models::CausalLM& model = **loaded;
  EngineOptions options;
  options.enable_prefix_caching = true;
  options.block_size = 4;
  options.num_blocks = 512;
  auto dropped = Engine::Create(model, tokenizer_, options);
  auto kept = Engine::Create(model, tokenizer_, options);
  ASSERT_TRUE(dropped.ok() && kept.ok());
  const auto requests = SampledRequests(2, 5);
  Run(**dropped, requests);  // both cache the prompts' blocks under the old weights
  Run(**kept, requests);
  {
    c10::NoGradGuard no_grad;
    at::manual_seed(7);
    for (auto& [name, tensor] : model.NamedParameters()) tensor->add_(at::randn_like(*tensor) * 0.05);
  }
  (*dropped)->DropPrefixCache();
  auto fresh = Engine::Create(model, tokenizer_, options);
  ASSERT_TRUE(fresh.ok());
  const auto expected = Run(**fresh, requests);
  ExpectSameOutputs(Run(**dropped, requests), expected);
  // What the drop prevents: prompts continuing from KV of the old weights.
  EXPECT_GT(LogProbDistance(Run(**kept, requests), expected), 1e-2);
}

TEST_F(EngineTest, StopsAtEosStopTokenStopStringAndLength) {
  auto engine = MakeEngine(EngineOptions());
  GenerationRequest free_run;
  free_run.prompt = Prompt(6, 1);
  free_run.params.temperature = 0;
  free_run.params.max_tokens = 12;
  free_run.params.ignore_eos = true;
  const Completion full = Run(*engine, {free_run})[0].samples[0];
  ASSERT_EQ(full.tokens.size(), 12u);

  GenerationRequest stop_token = free_run;
  stop_token.params.stop_token_ids = {full.tokens[3]};
  const Completion stopped = Run(*engine, {stop_token})[0].samples[0];
  EXPECT_EQ(stopped.finish_reason, FinishReason::kStop);
  EXPECT_EQ(stopped.tokens.back(), full.tokens[3]);
  EXPECT_LE(stopped.tokens.size(), 4u);

  const std::string text = tokenizer_->Decode(full.tokens, /*skip_special_tokens=*/true);
  ASSERT_GE(text.size(), 4u);
  GenerationRequest stop_string = free_run;
  stop_string.params.stop = {text.substr(text.size() / 2, 2)};
  const Completion by_string = Run(*engine, {stop_string})[0].samples[0];
  EXPECT_EQ(by_string.finish_reason, FinishReason::kStop);
  EXPECT_EQ(by_string.text, text.substr(0, text.find(stop_string.params.stop[0])));

  GenerationRequest eos = free_run;
  eos.params.ignore_eos = false;
  eos.params.max_tokens = 200;
  const Completion until_eos = Run(*engine, {eos})[0].samples[0];
  if (until_eos.finish_reason == FinishReason::kEos) {
    EXPECT_EQ(until_eos.tokens.back(), 2);  // the fixture's eos_token_id
  } else {
    EXPECT_EQ(until_eos.finish_reason, FinishReason::kLength);
    EXPECT_EQ(until_eos.tokens.size(), 200u);
  }
}

TEST_F(EngineTest, RejectsRequestsWithAClearError) {
  EngineOptions options;
  options.num_blocks = 4;
  options.block_size = 4;
  auto engine = MakeEngine(options);
  GenerationRequest good;
  good.prompt = Prompt(3, 0);
  good.params.max_tokens = 2;

  GenerationRequest empty = good;
  empty.prompt.clear();
  auto status = engine->Generate({good, empty}).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("request 1: the prompt is empty"));

  GenerationRequest out_of_vocab = good;
  out_of_vocab.prompt[1] = 514;
  EXPECT_THAT(engine->Generate({out_of_vocab}).status().message(),
              HasSubstr("token id 514 is outside the vocabulary [0, 514)"));

  GenerationRequest too_long = good;
  too_long.params.max_tokens = 30;  // 33 tokens need 9 blocks of 4; the cache has 4
  EXPECT_THAT(engine->Generate({too_long}).status().message(),
              HasSubstr("needs 9 KV blocks"));

  GenerationRequest bad_params = good;
  bad_params.params.top_p = 0;
  EXPECT_THAT(engine->Generate({bad_params}).status().message(), HasSubstr("top_p"));
  EXPECT_TRUE(engine->Generate({good}).ok());
}

}  // namespace
}  // namespace rollout::engine
