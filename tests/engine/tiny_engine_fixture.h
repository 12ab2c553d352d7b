// The engine tests' fixture: the tiny Qwen2 model and tokenizer (float32, CPU) loaded
// once per suite, engines over them, and output comparisons. For engine_test.cc and
// engine_fuzz_test.cc.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/engine.h"
#include "models/causal_lm.h"
#include "models/tokenizer.h"

namespace rollout::engine {

class TinyEngineTest : public ::testing::Test {
 protected:
  static constexpr char kFixture[] = "tests/data/tiny-qwen2";  // relative to the repo root

  static void SetUpTestSuite() {
    auto model = models::CausalLM::Load(kFixture, models::LoadOptions());
    ASSERT_TRUE(model.ok()) << model.status();
    model_ = std::move(*model).release();
    auto tokenizer = models::Tokenizer::Load(kFixture);
    ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
    tokenizer_ = std::move(*tokenizer).release();
  }
  static void TearDownTestSuite() {
    delete model_;
    delete tokenizer_;
    model_ = nullptr;
    tokenizer_ = nullptr;
  }

  // A small cache unless the test sizes it (the default CPU budget is 1 GiB).
  static std::unique_ptr<Engine> MakeEngine(EngineOptions options) {
    if (options.num_blocks == 0) options.num_blocks = 512;
    auto engine = Engine::Create(*model_, tokenizer_, options);
    EXPECT_TRUE(engine.ok()) << engine.status();
    return engine.ok() ? std::move(*engine) : nullptr;
  }

  static std::vector<RequestOutput> Run(Engine& engine, const std::vector<GenerationRequest>& requests) {
    auto outputs = engine.Generate(requests);
    EXPECT_TRUE(outputs.ok()) << outputs.status();
    return outputs.ok() ? *outputs : std::vector<RequestOutput>();
  }

  // A deterministic prompt of `length` ids in [3, 503), varied by `salt`.
  static std::vector<int32_t> Prompt(int64_t length, int32_t salt) {
    std::vector<int32_t> prompt;
    for (int64_t i = 0; i < length; ++i) prompt.push_back(static_cast<int32_t>(3 + (i * 37 + salt * 11) % 500));
    return prompt;
  }

  // Same tokens per sample, log-probs within 1e-4.
  static void ExpectSameOutputs(const std::vector<RequestOutput>& a,
                                const std::vector<RequestOutput>& b) {
    ASSERT_EQ(a.size(), b.size());
    for (size_t r = 0; r < a.size(); ++r) {
      ASSERT_EQ(a[r].samples.size(), b[r].samples.size());
      for (size_t s = 0; s < a[r].samples.size(); ++s) {
        EXPECT_EQ(a[r].samples[s].tokens, b[r].samples[s].tokens) << "request " << r << " sample " << s;
        ASSERT_EQ(a[r].samples[s].log_probs.size(), b[r].samples[s].log_probs.size());
        for (size_t t = 0; t < a[r].samples[s].log_probs.size(); ++t) {
          EXPECT_NEAR(a[r].samples[s].log_probs[t], b[r].samples[s].log_probs[t], 1e-4);
        }
      }
    }
  }

  inline static models::CausalLM* model_ = nullptr;
  inline static models::Tokenizer* tokenizer_ = nullptr;
};

}  // namespace rollout::engine
