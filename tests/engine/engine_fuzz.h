// The engine fuzz trials, shared by the CPU test (tests/engine/engine_fuzz_test.cc)
// and the CUDA one (tests/gpu/engine_cuda_test.cc). Each trial draws prompts (some
// repeated, for the prefix cache), sampling settings, stop tokens and (with a
// tokenizer) stop strings, runs them on an
// ample engine, checks that every sample ends where its stop conditions say, and then
// asks engines with random block sizes, cache sizes (down to one sample's need:
// preemption), sequence and token budgets (chunked prefill; on a GPU, decode graphs of
// assorted padded sizes), with and without group sharing, prefix caching and CUDA
// graphs, for the same samples — twice on one engine, so the second call meets its
// prefix cache — and for every block back at the end.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "models/causal_lm.h"
#include "models/tokenizer.h"

namespace rollout::engine::fuzz {

inline int64_t Uniform(std::mt19937& rng, int64_t low, int64_t high) {
  return std::uniform_int_distribution<int64_t>(low, high)(rng);
}

// `length` ids in [3, 503) (inside the tiny fixture's vocabulary, clear of its
// special tokens).
inline std::vector<int32_t> RandomPrompt(std::mt19937& rng, int64_t length) {
  std::vector<int32_t> prompt;
  for (int64_t i = 0; i < length; ++i) prompt.push_back(static_cast<int32_t>(Uniform(rng, 3, 502)));
  return prompt;
}

// 1-4 requests: prompts of 1-24 ids (a third repeat an earlier prompt, possibly
// extended), n 1-3, 1-12 new tokens, greedy or sampled with assorted filters, EOS
// honoured or ignored. No stop tokens yet.
inline std::vector<GenerationRequest> RandomRequests(std::mt19937& rng) {
  std::vector<GenerationRequest> requests(static_cast<size_t>(Uniform(rng, 1, 4)));
  for (size_t i = 0; i < requests.size(); ++i) {
    GenerationRequest& request = requests[i];
    if (i > 0 && Uniform(rng, 0, 2) == 0) {
      request.prompt = requests[static_cast<size_t>(Uniform(rng, 0, int64_t(i) - 1))].prompt;
      const std::vector<int32_t> more = RandomPrompt(rng, Uniform(rng, 0, 6));
      request.prompt.insert(request.prompt.end(), more.begin(), more.end());
    } else {
      request.prompt = RandomPrompt(rng, Uniform(rng, 1, 24));
    }
    SamplingParams& params = request.params;
    params.n = static_cast<int32_t>(Uniform(rng, 1, 3));
    params.max_tokens = Uniform(rng, 1, 12);
    const double temperatures[] = {0.0, 0.7, 1.0};
    params.temperature = temperatures[Uniform(rng, 0, 2)];
    const int64_t top_ks[] = {-1, 5, 50};
    params.top_k = top_ks[Uniform(rng, 0, 2)];
    params.top_p = Uniform(rng, 0, 1) == 0 ? 1.0 : 0.9;
    params.min_p = Uniform(rng, 0, 2) == 0 ? 0.05 : 0.0;
    params.ignore_eos = Uniform(rng, 0, 1) == 0;
    params.seed = static_cast<uint64_t>(Uniform(rng, 0, 1 << 30));
  }
  return requests;
}

// Gives about half the requests one or two stop tokens drawn from their free run and,
// with a tokenizer, a third of them a stop string of 1-3 ASCII characters cut from a
// free-run sample's text.
inline void AddStops(std::mt19937& rng, const std::vector<RequestOutput>& free_run,
                     const models::Tokenizer* tokenizer, std::vector<GenerationRequest>& requests) {
  for (size_t r = 0; r < requests.size(); ++r) {
    const auto& samples = free_run[r].samples;
    auto any_sample = [&]() -> const std::vector<int32_t>& {
      return samples[static_cast<size_t>(Uniform(rng, 0, int64_t(samples.size()) - 1))].tokens;
    };
    if (Uniform(rng, 0, 1) == 1) {
      for (int64_t k = Uniform(rng, 1, 2); k > 0; --k) {
        const std::vector<int32_t>& tokens = any_sample();
        requests[r].params.stop_token_ids.push_back(
            tokens[static_cast<size_t>(Uniform(rng, 0, int64_t(tokens.size()) - 1))]);
      }
    }
    if (tokenizer != nullptr && Uniform(rng, 0, 2) == 0) {
      const std::string text = tokenizer->Decode(any_sample(), /*skip_special_tokens=*/true);
      if (text.empty()) continue;
      const size_t start = static_cast<size_t>(Uniform(rng, 0, int64_t(text.size()) - 1));
      const std::string stop = text.substr(start, static_cast<size_t>(Uniform(rng, 1, 3)));
      if (std::all_of(stop.begin(), stop.end(), [](char c) { return c > 0 && c < 0x7f; })) {
        requests[r].params.stop.push_back(stop);
      }
    }
  }
}

inline bool ContainsAny(const std::string& text, const std::vector<std::string>& stops) {
  return std::any_of(stops.begin(), stops.end(),
                     [&](const std::string& stop) { return text.find(stop) != std::string::npos; });
}

// Each sample of `stopped` is its free-run counterpart cut where the first stop
// condition holds, with the finish reason that says why it ended: after the first stop
// token, or after the first token whose text completes a stop string (the sample's
// text then ends before it). Returns how many samples a stop string ended.
inline int64_t ExpectStopsWhereTheFreeRunSays(const std::vector<GenerationRequest>& requests,
                                           const models::Tokenizer* tokenizer,
                                           const std::vector<RequestOutput>& free_run,
                                           const std::vector<RequestOutput>& stopped) {
  int64_t string_stops = 0;
  EXPECT_EQ(stopped.size(), requests.size());
  for (size_t r = 0; r < requests.size() && r < stopped.size(); ++r) {
    const SamplingParams& params = requests[r].params;
    EXPECT_EQ(stopped[r].samples.size(), static_cast<size_t>(params.n));
    if (stopped[r].samples.size() != static_cast<size_t>(params.n)) continue;
    for (size_t s = 0; s < stopped[r].samples.size(); ++s) {
      SCOPED_TRACE(::testing::Message() << "request " << r << " sample " << s);
      const Completion& free = free_run[r].samples[s];
      const Completion& got = stopped[r].samples[s];
      const auto stop = std::find_first_of(free.tokens.begin(), free.tokens.end(),
                                           params.stop_token_ids.begin(),
                                           params.stop_token_ids.end());
      std::vector<int32_t> by_tokens(free.tokens.begin(),
                                     stop == free.tokens.end() ? stop : stop + 1);
      FinishReason reason = free.finish_reason;
      // A stop token that is also a (heeded) EOS id ends the free run the same way.
      if (stop != free.tokens.end() && !(stop + 1 == free.tokens.end() &&
                                         free.finish_reason == FinishReason::kEos)) {
        reason = FinishReason::kStop;
      }
      EXPECT_LE(got.tokens.size(), static_cast<size_t>(params.max_tokens));
      EXPECT_EQ(got.log_probs.size(), got.tokens.size());
      if (params.stop.empty()) {
        EXPECT_EQ(got.tokens, by_tokens);
        EXPECT_EQ(got.finish_reason, reason);
      } else {
        // A stop string can only end the sample earlier, at the first token completing
        // it; on the token a stop id or EOS ends it, those win (as in vLLM) and the text
        // stays whole.
        EXPECT_LE(got.tokens.size(), by_tokens.size());
        if (got.tokens.size() > by_tokens.size()) continue;
        EXPECT_TRUE(std::equal(got.tokens.begin(), got.tokens.end(), by_tokens.begin()));
        const std::vector<int32_t> before(got.tokens.begin(), got.tokens.end() - (got.tokens.empty() ? 0 : 1));
        EXPECT_FALSE(ContainsAny(tokenizer->Decode(before, true), params.stop));
        const bool completes = ContainsAny(tokenizer->Decode(got.tokens, true), params.stop);
        const bool token_ends = got.tokens.size() == by_tokens.size() &&
                                (reason == FinishReason::kEos || reason == FinishReason::kStop);
        const bool by_string = completes && !token_ends;
        if (got.tokens.size() < by_tokens.size()) {
          EXPECT_TRUE(by_string);
        }
        EXPECT_EQ(got.finish_reason, by_string ? FinishReason::kStop : reason);
        if (by_string) {
          EXPECT_FALSE(ContainsAny(got.text, params.stop)) << got.text;
        }
        string_stops += by_string ? 1 : 0;
      }
      if (got.finish_reason == FinishReason::kLength) {
        EXPECT_EQ(got.tokens.size(), static_cast<size_t>(params.max_tokens));
      }
    }
  }
  return string_stops;
}

// Random budgets under which every request still fits: a cache of at least one
// sample's worth of blocks, max_num_seqs at least the largest shared group; CUDA
// graphs or eager decode steps (no graphs on the CPU either way).
inline EngineOptions RandomBudget(std::mt19937& rng, const std::vector<GenerationRequest>& requests) {
  EngineOptions options;
  const int32_t block_sizes[] = {1, 2, 4, 16};
  options.block_size = block_sizes[Uniform(rng, 0, 3)];
  options.share_group_prefix = Uniform(rng, 0, 1) == 0;
  options.enable_prefix_caching = Uniform(rng, 0, 1) == 0;
  int64_t need = 1, largest_group = 1;
  for (const GenerationRequest& request : requests) {
    const int64_t length = int64_t(request.prompt.size()) + request.params.max_tokens;
    need = std::max(need, (length + options.block_size - 1) / options.block_size);
    largest_group = std::max<int64_t>(largest_group, request.params.n);
  }
  options.num_blocks = need + Uniform(rng, 0, 3 * need);
  options.max_num_seqs = static_cast<int32_t>(Uniform(rng, 1, 10));
  if (options.share_group_prefix) {
    options.max_num_seqs = std::max<int32_t>(options.max_num_seqs, static_cast<int32_t>(largest_group));
  }
  options.max_num_batched_tokens = Uniform(rng, 1, 40);
  options.enforce_eager = Uniform(rng, 0, 3) == 0;
  return options;
}

inline std::string Describe(const EngineOptions& o) {
  return "block_size " + std::to_string(o.block_size) + ", num_blocks " +
         std::to_string(o.num_blocks) + ", max_num_seqs " + std::to_string(o.max_num_seqs) +
         ", max_num_batched_tokens " + std::to_string(o.max_num_batched_tokens) +
         ", sharing " + std::to_string(o.share_group_prefix) + ", prefix caching " +
         std::to_string(o.enable_prefix_caching) + ", eager " + std::to_string(o.enforce_eager);
}

inline std::vector<RequestOutput> Run(Engine& engine, const std::vector<GenerationRequest>& requests) {
  auto outputs = engine.Generate(requests);
  EXPECT_TRUE(outputs.ok()) << outputs.status();
  return outputs.ok() ? *outputs : std::vector<RequestOutput>();
}

// Same tokens, finish reasons and text per sample, log-probs within `tolerance`.
inline void ExpectSameSamples(const std::vector<RequestOutput>& got,
                              const std::vector<RequestOutput>& want, double tolerance) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t r = 0; r < got.size(); ++r) {
    ASSERT_EQ(got[r].samples.size(), want[r].samples.size());
    for (size_t s = 0; s < got[r].samples.size(); ++s) {
      const Completion& a = got[r].samples[s];
      const Completion& b = want[r].samples[s];
      EXPECT_EQ(a.tokens, b.tokens) << "request " << r << " sample " << s;
      EXPECT_EQ(a.finish_reason, b.finish_reason) << "request " << r << " sample " << s;
      EXPECT_EQ(a.text, b.text) << "request " << r << " sample " << s;
      ASSERT_EQ(a.log_probs.size(), b.log_probs.size());
      for (size_t t = 0; t < a.log_probs.size(); ++t) {
        EXPECT_NEAR(a.log_probs[t], b.log_probs[t], tolerance) << "request " << r << " sample " << s;
      }
    }
  }
}

// `trials` trials of `budgets_per_trial` random budgets each on `model` (tokenizer may
// be null: no text, no stop strings). Expects some budget to have preempted and, with a
// tokenizer, some stop string to have ended a sample.
inline void RunTrials(const models::CausalLM& model, const models::Tokenizer* tokenizer,
                      int trials, int budgets_per_trial, double log_prob_tolerance) {
  EngineOptions ample_options;
  ample_options.num_blocks = 512;
  auto created_ample = Engine::Create(model, tokenizer, ample_options);
  ASSERT_TRUE(created_ample.ok()) << created_ample.status();
  Engine& ample = **created_ample;
  int64_t preemptions = 0, string_stops = 0;
  for (int trial = 0; trial < trials; ++trial) {
    SCOPED_TRACE(::testing::Message() << "trial " << trial);
    std::mt19937 rng(static_cast<uint32_t>(7919 * trial + 17));
    std::vector<GenerationRequest> requests = RandomRequests(rng);
    const std::vector<RequestOutput> free_run = Run(ample, requests);
    AddStops(rng, free_run, tokenizer, requests);
    const std::vector<RequestOutput> want = Run(ample, requests);
    string_stops += ExpectStopsWhereTheFreeRunSays(requests, tokenizer, free_run, want);
    for (int b = 0; b < budgets_per_trial; ++b) {
      const EngineOptions options = RandomBudget(rng, requests);
      SCOPED_TRACE(Describe(options));
      auto engine = Engine::Create(model, tokenizer, options);
      ASSERT_TRUE(engine.ok()) << engine.status();
      for (int call = 0; call < 2; ++call) {
        ExpectSameSamples(Run(**engine, requests), want, log_prob_tolerance);
        EXPECT_EQ((*engine)->used_blocks(), 0);
      }
      preemptions += (*engine)->stats().preemptions;
    }
  }
  EXPECT_GT(preemptions, 0);  // the small caches drawn do preempt
  if (tokenizer != nullptr) {
    EXPECT_GT(string_stops, 0);  // and some stop strings end samples
  }
}

}  // namespace rollout::engine::fuzz
