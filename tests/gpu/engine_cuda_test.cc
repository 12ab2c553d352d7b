// The rollout engine's CUDA path (paged attention kernel, on-device sampling) against
// its CPU path on the tiny fixture in float32, plus a bfloat16 run.
#include <gtest/gtest.h>

#include <vector>

#include "engine/engine.h"
#include "engine/step_upload.h"
#include "models/causal_lm.h"

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
