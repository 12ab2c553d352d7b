// The rollout engine's CUDA path (paged attention kernel, on-device sampling) against
// its CPU path on the tiny fixture in float32, plus a bfloat16 run.
#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <gtest/gtest.h>

#include <vector>

#include "engine/decode_graphs.h"
#include "engine/engine.h"
#include "engine/paged_kv_cache.h"
#include "engine/step_upload.h"
#include "models/causal_lm.h"
#include "models/token_scores.h"
#include "tests/engine/engine_fuzz.h"
#include "tests/support/tiny_qwen3.h"

namespace rollout::engine {
namespace {

constexpr char kFixture[] = "tests/data/tiny-qwen2";

std::unique_ptr<models::CausalLM> Load(c10::Device device, c10::ScalarType dtype) {
  models::LoadOptions options;
  options.device = device;
  options.dtype = dtype;
  return models::CausalLM::Load(kFixture, options).value();
}

// Prompts long enough to span several key tiles of the kernel (256 keys each).
std::vector<GenerationRequest> Requests(double temperature) {
  std::vector<GenerationRequest> requests;
  const int64_t lengths[] = {3, 40, 300};
  for (int i = 0; i < 3; ++i) {
    GenerationRequest request;
    for (int64_t t = 0; t < lengths[i]; ++t) request.prompt.push_back(3 + (t * 31 + i) % 500);
    request.params.n = 3;
    request.params.temperature = temperature;
    request.params.max_tokens = 24;
    request.params.ignore_eos = true;
    request.params.seed = 5 + i;
    requests.push_back(request);
  }
  return requests;
}

std::vector<RequestOutput> Generate(const models::CausalLM& model, double temperature,
                                    EngineOptions options = {}) {
  options.num_blocks = 256;
  options.block_size = 16;
  auto engine = Engine::Create(model, nullptr, options).value();
  auto out = engine->Generate(Requests(temperature)).value();
  EXPECT_EQ(engine->used_blocks(), 0);
  return out;
}

void ExpectSame(const std::vector<RequestOutput>& a, const std::vector<RequestOutput>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t r = 0; r < a.size(); ++r) {
    for (size_t s = 0; s < a[r].samples.size(); ++s) {
      EXPECT_EQ(a[r].samples[s].tokens, b[r].samples[s].tokens) << "request " << r << " sample " << s;
      for (size_t t = 0; t < a[r].samples[s].log_probs.size(); ++t) {
        EXPECT_NEAR(a[r].samples[s].log_probs[t], b[r].samples[s].log_probs[t], 1e-3);
      }
    }
  }
}

TEST(EngineCuda, GreedyAndSampledOutputsMatchTheCpu) {
  const auto cpu = Load(c10::Device(c10::kCPU), at::kFloat);
  const auto gpu = Load(c10::Device(c10::kCUDA, 0), at::kFloat);
  ExpectSame(Generate(*gpu, 0.0), Generate(*cpu, 0.0));
  ExpectSame(Generate(*gpu, 1.0), Generate(*cpu, 1.0));
}

TEST(EngineCuda, SharingAndPreemptionKeepOutputsOnTheGpu) {
  const auto gpu = Load(c10::Device(c10::kCUDA, 0), at::kFloat);
  const auto reference = Generate(*gpu, 1.0);
  EngineOptions separate;
  separate.share_group_prefix = false;
  ExpectSame(Generate(*gpu, 1.0, separate), reference);
  EngineOptions chunked;
  chunked.max_num_batched_tokens = 50;
  ExpectSame(Generate(*gpu, 1.0, chunked), reference);
}

TEST(EngineCuda, CudaGraphDecodeMatchesEagerDecode) {
  const auto gpu = Load(c10::Device(c10::kCUDA, 0), at::kFloat);
  EngineOptions eager;
  eager.enforce_eager = true;
  ExpectSame(Generate(*gpu, 1.0), Generate(*gpu, 1.0, eager));
  ExpectSame(Generate(*gpu, 0.0), Generate(*gpu, 0.0, eager));
  // Five sequences at most: graphs of padded batch 8, more rows than a step samples.
  EngineOptions few;
  few.max_num_seqs = 5;
  ExpectSame(Generate(*gpu, 1.0, few), Generate(*gpu, 1.0, eager));
}

// The fuzz trials of tests/engine/engine_fuzz.h on the GPU (float32): random budgets,
// CUDA graphs of assorted padded batch sizes or eager steps, all pipelined.
TEST(EngineCuda, RandomBudgetsGiveTheAmpleEnginesSamples) {
  const auto gpu = Load(c10::Device(c10::kCUDA, 0), at::kFloat);
  fuzz::RunTrials(*gpu, /*tokenizer=*/nullptr, /*trials=*/20, /*budgets_per_trial=*/3,
                  /*log_prob_tolerance=*/1e-3);
}

TEST(EngineCuda, BFloat16Generates) {
  const auto gpu = Load(c10::Device(c10::kCUDA, 0), at::kBFloat16);
  const auto out = Generate(*gpu, 1.0);
  for (const RequestOutput& request : out) {
    for (const Completion& sample : request.samples) {
      EXPECT_EQ(sample.tokens.size(), 24u);
      for (float lp : sample.log_probs) EXPECT_LE(lp, 0.f);
    }
  }
}

// A random tiny Qwen3 (per-head q/k norms, heads of 128) in bfloat16: the engine's
// decode runs the rotary paged-attention kernel on the normed queries and keys, and
// the log-probs it reports for its samples match a full forward's scores of them.
TEST(EngineCuda, Qwen3SampleLogProbsMatchAFullForward) {
  models::LoadOptions options;
  options.device = c10::Device(c10::kCUDA, 0);
  options.dtype = at::kBFloat16;
  const auto model = testing::RandomQwen3(testing::TinyQwen3Config(514, /*head_dim=*/128), 21, options);
  const std::vector<GenerationRequest> requests = Requests(1.0);
  const auto out = Generate(*model, 1.0);
  c10::NoGradGuard no_grad;
  float worst = 0.f;
  for (size_t r = 0; r < out.size(); ++r) {
    for (const Completion& sample : out[r].samples) {
      std::vector<int64_t> ids(requests[r].prompt.begin(), requests[r].prompt.end());
      ids.insert(ids.end(), sample.tokens.begin(), sample.tokens.end());
      const int64_t t = ids.size();
      const at::Tensor row = at::tensor(ids, at::kLong).cuda().view({1, t});
      const at::Tensor hidden = model->Forward(row, at::arange(t, row.options()).view({1, t}), at::Tensor());
      const at::Tensor scores =
          models::ScoreTokens(*model, hidden.narrow(1, 0, t - 1), row.narrow(1, 1, t - 1), models::kLogProbsOnly)
              .log_probs[0].cpu();
      const int64_t prompt = requests[r].prompt.size();
      for (size_t i = 0; i < sample.tokens.size(); ++i) {
        worst = std::max(worst, std::abs(scores[prompt - 1 + i].item<float>() - sample.log_probs[i]));
      }
    }
  }
  EXPECT_LT(worst, 0.05f);  // bfloat16 paths rounding differently
}

// Two decode steps replayed back to back behind queued device work, the host never
// waiting in between (as the pipelined engine launches them): each sees its own inputs.
// Both sequences are at position 0, so a step's greedy tokens depend only on its input
// ids.
TEST(DecodeGraphsCuda, QueuedStepsKeepTheirOwnInputs) {
  c10::NoGradGuard no_grad;
  const auto model = Load(c10::Device(c10::kCUDA, 0), at::kFloat);
  const auto options = at::TensorOptions().dtype(at::kFloat).device(at::kCUDA, 0);
  PagedKvCache cache(model->config(), 8, 16, options);
  ASSERT_TRUE(cache.uses_kernel());
  const at::Tensor last_samples = at::zeros({8}, at::TensorOptions().dtype(at::kLong).device(at::kCUDA, 0));
  DecodeGraphs graphs(*model, &cache, 8, 4, last_samples);
  auto step = [](std::vector<int64_t> ids) {
    StepInputs s;
    s.input_ids = ids;
    s.input_sources = {-1, -1};
    s.positions = {0, 0};
    s.slot_mapping = {0, 16};
    s.token_rows = {0, 1};
    s.block_tables = {0, 1};
    s.max_blocks = 1;
    s.sample_rows = {0, 1};
    s.temperature = {0.f, 0.f};
    s.top_p = {1.f, 1.f};
    s.min_p = {0.f, 0.f};
    s.top_k = {0, 0};
    s.seed = {1, 2};
    s.draw = {0, 0};
    return s;
  };
  // A step's result as one float tensor: tokens, then log-probs (both differ between
  // the two steps' inputs). Copied on the stream, before the next replay overwrites it.
  auto result = [](const SampledTokens& sampled) {
    return at::cat({sampled.tokens.to(at::kFloat), sampled.log_probs});
  };
  const StepInputs first = step({11, 12}), second = step({300, 301});
  ASSERT_TRUE(graphs.Serves(first));
  const at::Tensor want_first = result(graphs.Run(first)).to(at::kCPU);
  const at::Tensor want_second = result(graphs.Run(second)).to(at::kCPU);
  ASSERT_FALSE(at::equal(want_first, want_second));

  const at::Tensor busy = at::randn({4096, 4096}, options);
  at::Tensor product = busy;
  for (int i = 0; i < 8; ++i) product = at::mm(product, busy);  // tens of ms of work
  const at::Tensor got_first = result(graphs.Run(first));
  const at::Tensor got_second = result(graphs.Run(second));
  EXPECT_TRUE(at::equal(got_first.to(at::kCPU), want_first));
  EXPECT_TRUE(at::equal(got_second.to(at::kCPU), want_second));
}

// Uploads queued behind device work: the host packs the next step's arrays while earlier
// copies still wait, so a pinned buffer reused before its copy ran would corrupt them.
TEST(StepUploadCuda, QueuedUploadsKeepTheirOwnValues) {
  const c10::Device device(c10::kCUDA, 0);
  const at::Tensor busy = at::randn({4096, 4096}, at::TensorOptions().device(device));
  at::Tensor product = busy;
  for (int i = 0; i < 8; ++i) product = at::mm(product, busy);  // tens of ms of work
  std::vector<std::vector<int64_t>> sent_values;
  std::vector<at::Tensor> received;
  for (int64_t step = 0; step < 64; ++step) {
    std::vector<int64_t> values(1000 + step);
    for (size_t i = 0; i < values.size(); ++i) values[i] = step * 100000 + static_cast<int64_t>(i);
    const std::vector<float> floats = {static_cast<float>(step)};
    StepUpload upload;
    upload.Add(values);
    upload.Add(floats);
    const std::vector<at::Tensor> sent = upload.Send(device);
    ASSERT_TRUE(sent[0].is_cuda());
    received.push_back(sent[0]);
    sent_values.push_back(values);
  }
  for (size_t step = 0; step < received.size(); ++step) {
    const at::Tensor host = received[step].to(at::kCPU);
    const std::vector<int64_t> got(host.data_ptr<int64_t>(), host.data_ptr<int64_t>() + host.numel());
    EXPECT_EQ(got, sent_values[step]) << "upload " << step;
  }
}

}  // namespace
}  // namespace rollout::engine
