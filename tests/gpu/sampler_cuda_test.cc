// engine/sampler.h on CUDA against the CPU path: the fused kernel (no filters) and the
// filtered path (ATen operations plus the noise kernel) draw the same tokens as the CPU
// for the same inputs (float32, bfloat16 and float16 logits), with log-probs within 1e-4;
// both replay in a CUDA graph.
#include "engine/sampler.h"

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <gtest/gtest.h>

#include <limits>
#include <tuple>
#include <utility>

namespace rollout::engine {
namespace {

// Random per-row parameters on the CPU: every 7th row greedy, the others at a
// temperature in [0.5, 1.5]; with `filters`, a mix of top-k, top-p and min-p (each off
// in some rows).
SamplingTensors RandomParams(int64_t rows, bool filters) {
  const at::Tensor row = at::arange(rows);
  const auto every = [&](int64_t n) { return row.remainder(n) == 0; };
  SamplingTensors p;
  p.temperature = (at::rand({rows}) + 0.5).masked_fill(every(7), 0);
  p.top_k = at::zeros({rows}, at::kLong);
  p.top_p = at::ones({rows});
  p.min_p = at::zeros({rows});
  if (filters) {
    p.top_k = at::randint(1, 200, {rows}, at::kLong).masked_fill(every(3), 0);
    p.top_p = (at::rand({rows}) * 0.3 + 0.7).masked_fill(every(4), 1);
    p.min_p = (at::rand({rows}) * 0.1).masked_fill(every(5), 0);
  }
  p.seed = at::randint(0, 1 << 30, {rows}, at::kLong);
  p.step = at::randint(0, 4096, {rows}, at::kLong);
  p.any_filter = filters;
  return p;
}

SamplingTensors To(const SamplingTensors& p, at::Device device) {
  SamplingTensors out = p;
  for (at::Tensor* t : {&out.temperature, &out.top_k, &out.top_p, &out.min_p, &out.seed,
                        &out.step}) {
    *t = t->to(device);
  }
  return out;
}

void ExpectSameDraws(const SampledTokens& cuda, const SampledTokens& cpu) {
  ASSERT_TRUE(cuda.tokens.is_cuda());
  ASSERT_EQ(cuda.tokens.scalar_type(), at::kLong);
  ASSERT_EQ(cuda.log_probs.scalar_type(), at::kFloat);
  const at::Tensor tokens = cuda.tokens.cpu();
  EXPECT_EQ((tokens != cpu.tokens).sum().item<int64_t>(), 0)
      << "cuda " << tokens << "\ncpu " << cpu.tokens;
  EXPECT_LT((cuda.log_probs.cpu() - cpu.log_probs).abs().max().item<float>(), 1e-4);
}

// (logits dtype, any filter)
class SamplerCudaTest : public ::testing::TestWithParam<std::tuple<c10::ScalarType, bool>> {};

TEST_P(SamplerCudaTest, DrawsTheCpuTokens) {
  const auto [dtype, filters] = GetParam();
  at::manual_seed(11);
  const int64_t rows = 48, vocab = 151936;
  const at::Tensor logits = (at::randn({rows, vocab}) * 3).to(dtype);
  const SamplingTensors params = RandomParams(rows, filters);
  const SampledTokens cpu = SampleTokens(logits, params);
  const SampledTokens cuda = SampleTokens(logits.to(at::kCUDA), To(params, at::kCUDA));
  ExpectSameDraws(cuda, cpu);
}

INSTANTIATE_TEST_SUITE_P(DtypesAndPaths, SamplerCudaTest,
                         ::testing::Combine(::testing::Values(at::kFloat, at::kBFloat16, at::kHalf),
                                            ::testing::Bool()));

// One row (split over many blocks), and more rows than the device holds blocks at once
// (one block a row); scores beyond 1024 in magnitude, where the kernel computes every
// token's noise instead of skipping those that cannot win: the CPU's draws throughout.
TEST(SamplerCuda, AnyBatchSizeAndScaleDrawsTheCpuTokens) {
  at::manual_seed(14);
  for (const auto& [rows, spread] : {std::pair<int64_t, double>{1, 3}, {300, 3}, {40, 3000}}) {
    const at::Tensor logits = (at::randn({rows, 151936}) * spread).to(at::kBFloat16);
    const SamplingTensors params = RandomParams(rows, /*filters=*/false);
    SCOPED_TRACE(::testing::Message() << rows << " rows, spread " << spread);
    ExpectSameDraws(SampleTokens(logits.to(at::kCUDA), To(params, at::kCUDA)),
                    SampleTokens(logits, params));
  }
}

// Rows that are not whole 16-byte packs (1001 bfloat16 logits) take the kernel's
// one-logit-at-a-time loop: the same draws as the CPU.
TEST(SamplerCuda, OddVocabularyDrawsTheCpuTokens) {
  at::manual_seed(13);
  const at::Tensor logits = (at::randn({40, 1001}) * 3).to(at::kBFloat16);
  const SamplingTensors params = RandomParams(40, /*filters=*/false);
  ExpectSameDraws(SampleTokens(logits.to(at::kCUDA), To(params, at::kCUDA)),
                  SampleTokens(logits, params));
}

// NaN and infinite logits in greedy and sampled rows: the CPU's draws (at::argmax's
// order: NaN above everything, then +inf; the first of equals).
TEST(SamplerCuda, NonFiniteLogitsDrawTheCpuTokens) {
  at::manual_seed(15);
  const int64_t rows = 21;
  at::Tensor logits = at::randn({rows, 4096}) * 3;
  for (int64_t r = 0; r < rows; ++r) {
    if (r % 3 == 0) logits[r][100 + 37 * r] = std::numeric_limits<float>::quiet_NaN();
    if (r % 3 == 1) logits[r][200 + 11 * r] = std::numeric_limits<float>::infinity();
    if (r % 2 == 0) logits[r][300 + r] = -std::numeric_limits<float>::infinity();
  }
  logits = logits.to(at::kBFloat16);
  const SamplingTensors params = RandomParams(rows, /*filters=*/false);
  const at::Tensor cpu = SampleTokens(logits, params).tokens;
  const at::Tensor cuda = SampleTokens(logits.to(at::kCUDA), To(params, at::kCUDA)).tokens.cpu();
  EXPECT_TRUE(at::equal(cuda, cpu)) << "cuda " << cuda << "\ncpu " << cpu;
}

// The fused kernel's in-pass noise and the noise-fill kernel are the same draws.
TEST(SamplerCuda, FilteredPathWithFiltersOffMatchesTheFusedKernel) {
  at::manual_seed(12);
  const at::Tensor logits = at::randn({32, 50000}, at::kCUDA) * 2;
  SamplingTensors params = To(RandomParams(32, /*filters=*/false), at::kCUDA);
  const SampledTokens fused = SampleTokens(logits, params);
  params.any_filter = true;
  const SampledTokens filtered = SampleTokens(logits, params);
  EXPECT_TRUE(at::equal(fused.tokens, filtered.tokens));
  EXPECT_LT((fused.log_probs - filtered.log_probs).abs().max().item<float>(), 1e-4);
}

TEST(SamplerCuda, TiesGoToTheLowestTokenId) {
  at::Tensor logits = at::zeros({2, 4096}, at::kCUDA);
  logits.select(1, 3000).fill_(5);
  logits.select(1, 1234).fill_(5);
  SamplingTensors params = To(RandomParams(2, /*filters=*/false), at::kCUDA);
  params.temperature.zero_();
  EXPECT_EQ(SampleTokens(logits, params).tokens.cpu().eq(1234).sum().item<int64_t>(), 2);
}

TEST(SamplerCuda, EmptyBatch) {
  for (bool filters : {false, true}) {
    const SampledTokens out = SampleTokens(at::zeros({0, 100}, at::kCUDA),
                                           To(RandomParams(0, filters), at::kCUDA));
    EXPECT_TRUE(out.tokens.is_cuda());
    EXPECT_EQ(out.tokens.numel(), 0);
    EXPECT_EQ(out.log_probs.numel(), 0);
  }
}

// Captured once, replayed after the steps advance in place: no host synchronisation
// in SampleTokens (capture would fail) and the graph reads the parameters' memory.
TEST(SamplerCuda, ReplaysInACudaGraph) {
  for (bool filters : {false, true}) {
    at::manual_seed(13);
    const at::Tensor logits = at::randn({8, 5000}, at::kCUDA);
    SamplingTensors params = To(RandomParams(8, filters), at::kCUDA);
    at::cuda::CUDAGraph graph;
    SampledTokens captured;
    {
      const c10::cuda::CUDAStreamGuard guard(c10::cuda::getStreamFromPool());
      SampleTokens(logits, params);  // warm-up outside the capture
      c10::cuda::getCurrentCUDAStream().synchronize();
      graph.capture_begin();
      captured = SampleTokens(logits, params);
      graph.capture_end();
    }
    graph.replay();
    const at::Tensor first = captured.tokens.clone();
    EXPECT_TRUE(at::equal(first, SampleTokens(logits, params).tokens)) << "filters " << filters;
    params.step.add_(1);
    graph.replay();
    const SampledTokens eager = SampleTokens(logits, params);
    EXPECT_TRUE(at::equal(captured.tokens, eager.tokens)) << "filters " << filters;
    EXPECT_LT((captured.log_probs - eager.log_probs).abs().max().item<float>(), 1e-6);
    EXPECT_FALSE(at::equal(first, captured.tokens)) << "the replay ignored the new steps";
  }
}

}  // namespace
}  // namespace rollout::engine
