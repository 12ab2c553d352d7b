// The paged attention kernel (through PagedKvCache on CUDA) against the CPU path
// (blocks gathered, SDPA) on the same cache contents: a prefill chunk of many tokens
// (each attends causally to its sequence so far) over scattered blocks, for the
// Qwen2.5-0.5B head shape (14 query heads on 2 KV heads, head_dim 64) and others:
// half precision at head_dim 64/128 runs the tensor-core kernel (groups of 1, 3, 7
// and 8 query heads), the rest the CUDA-core one; half-precision steps of fresh prompts
// run FlashAttention's variable-length kernel.
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <c10/core/GradMode.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "engine/paged_kv_cache.h"
#include "models/fused_decode.h"

namespace rollout::engine {
namespace {

struct Shape {
  int64_t q_heads, kv_heads, head_dim;
  at::ScalarType dtype;  // of the GPU run; the CPU reference runs in float32
  float tolerance;
};

// Runs `steps` through one layer's cache: step s gives row r steps[s][r] more tokens
// (following what earlier steps gave it), in row order. Returns every step's output,
// concatenated, as float32 on the CPU. The launch picks its kernel by the step: a step
// whose every row with tokens starts its sequence attends over its own keys and values
// (the flash kernel, in half precision), the others read the cache in place. Blocks are
// handed out in a shuffled order. q, k and v are random values representable in
// shape.dtype (the GPU run's), held in `dtype`.
at::Tensor RunSteps(c10::Device device, const Shape& shape, at::ScalarType dtype,
                    const std::vector<std::vector<int64_t>>& steps, uint64_t seed) {
  models::TransformerConfig config;
  config.num_hidden_layers = 1;
  config.num_attention_heads = shape.q_heads;
  config.num_key_value_heads = shape.kv_heads;
  config.head_dim = shape.head_dim;
  const int64_t block_size = 16;
  const size_t rows = steps.front().size();
  std::vector<int64_t> blocks(rows, 0);
  for (size_t r = 0; r < rows; ++r) {
    int64_t total = 0;
    for (const auto& step : steps) total += step[r];
    blocks[r] = (total + block_size - 1) / block_size;
  }
  const int64_t width = std::max<int64_t>(1, *std::max_element(blocks.begin(), blocks.end()));
  std::vector<int32_t> order(std::accumulate(blocks.begin(), blocks.end(), int64_t{0}));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937(7));
  const auto options = at::TensorOptions().dtype(dtype).device(device);
  PagedKvCache cache(config, std::max<int64_t>(1, order.size()), block_size, options);
  std::vector<int32_t> tables(rows * width, 0);
  for (size_t r = 0, next = 0; r < rows; next += blocks[r], ++r) {
    std::copy(order.begin() + next, order.begin() + next + blocks[r], tables.begin() + r * width);
  }
  std::vector<int64_t> context(rows, 0);
  std::vector<at::Tensor> outputs;
  for (size_t s = 0; s < steps.size(); ++s) {
    StepAttention attention;
    std::vector<int64_t> slots, positions;
    std::vector<int32_t> token_rows;
    attention.row_token_begin = {0};
    for (size_t r = 0; r < rows; ++r) {
      for (int64_t i = 0; i < steps[s][r]; ++i, ++context[r]) {
        slots.push_back(int64_t(tables[r * width + context[r] / block_size]) * block_size +
                        context[r] % block_size);
        positions.push_back(context[r]);
        token_rows.push_back(static_cast<int32_t>(r));
      }
      attention.row_token_begin.push_back(static_cast<int64_t>(positions.size()));
      attention.row_context.push_back(context[r]);
    }
    attention.slot_mapping = at::tensor(slots, at::kLong).to(device);
    attention.positions = at::tensor(positions, at::kLong).to(device);
    attention.token_rows = at::tensor(token_rows, at::kInt).to(device);
    attention.block_tables = at::tensor(tables, at::kInt).view({int64_t(rows), width}).to(device);
    attention.host_block_tables = tables;
    at::Generator generator = at::detail::createCPUGenerator(seed + s);
    const int64_t n = static_cast<int64_t>(positions.size());
    auto random = [&](int64_t heads) {
      return at::randn({n, heads, shape.head_dim}, generator).to(shape.dtype).to(options);
    };
    const at::Tensor q = random(shape.q_heads), k = random(shape.kv_heads), v = random(shape.kv_heads);
    cache.BeginStep(&attention);
    outputs.push_back(cache.AppendAndAttend(0, q, k, v, 1.0 / std::sqrt(double(shape.head_dim))));
    cache.BeginStep(nullptr);
  }
  return at::cat(outputs).to(at::kCPU, at::kFloat);
}

// Half-precision outputs are rounded: |out| < ~3 -> errors up to ~1e-2 (bfloat16).
const Shape kShapes[] = {{14, 2, 64, at::kFloat, 1e-4f},   {14, 2, 64, at::kBFloat16, 2e-2f},
                         {4, 2, 16, at::kFloat, 1e-4f},    {28, 4, 128, at::kHalf, 4e-3f},
                         {8, 8, 80, at::kBFloat16, 2e-2f}, {16, 2, 96, at::kFloat, 1e-4f},
                         {8, 8, 64, at::kBFloat16, 2e-2f}, {16, 2, 128, at::kBFloat16, 2e-2f},
                         {12, 4, 64, at::kHalf, 4e-3f}};

void ExpectGpuMatchesCpu(const std::vector<std::vector<int64_t>>& steps) {
  for (const Shape& shape : kShapes) {
    SCOPED_TRACE(::testing::Message() << shape.q_heads << "/" << shape.kv_heads << " heads, dim "
                                      << shape.head_dim << ", " << shape.dtype);
    const at::Tensor want = RunSteps(c10::Device(c10::kCPU), shape, at::kFloat, steps, 11);
    const at::Tensor got = RunSteps(c10::Device(c10::kCUDA, 0), shape, shape.dtype, steps, 11);
    ASSERT_EQ(got.sizes(), want.sizes());
    EXPECT_LT((got - want).abs().max().item<float>(), shape.tolerance);
  }
}

// Row 1's 290-token prompt alone (fresh), then row 0's 37-token prompt next to 3 more
// tokens of row 1, which read the first step's keys from the cache.
TEST(PagedAttentionCuda, MatchesGatheredAttentionOnTheCpu) {
  c10::NoGradGuard no_grad;
  ExpectGpuMatchesCpu({{0, 290}, {37, 3}});
}

// Prompts of 1 to 300 tokens in one step (fresh rows only; rows 2 and 6 without
// tokens); then a decode token each over the keys the first step wrote, and row 6's
// 45-token prompt after them (trailing fresh rows after paged ones); then a chunk for
// every row, row 2's prompt among rows with cached context (paged only).
TEST(PagedAttentionCuda, FreshPromptsOfManyLengthsMatchTheCpu) {
  c10::NoGradGuard no_grad;
  ExpectGpuMatchesCpu({{1, 16, 0, 37, 300, 2, 0},
                       {1, 1, 0, 1, 1, 1, 45},
                       {5, 20, 33, 1, 9, 17, 2}});
}

// A decode row's attention is the same, bit for bit, whatever the batch around it: the
// tensor-core kernel runs a (token, KV head) on four, two or one warp(s) depending on how
// many blocks the grid has (on an H200: 3 rows four warps, 400 rows two, 2048 rows one),
// with the same arithmetic. Rows of 1 to 199 cached tokens (some with fewer chunks than
// the kernel has key streams), bfloat16, the Qwen2.5-0.5B head shape.
TEST(PagedAttentionCuda, DecodeRowsDoNotDependOnTheBatchAroundThem) {
  c10::NoGradGuard no_grad;
  models::TransformerConfig config;
  config.num_hidden_layers = 1;
  config.num_attention_heads = 14;
  config.num_key_value_heads = 2;
  config.head_dim = 64;
  const int64_t rows = 2048, block_size = 16, width = 13;  // 13 blocks: 200 tokens
  std::vector<int32_t> tables(rows * width);
  std::iota(tables.begin(), tables.end(), 0);
  std::shuffle(tables.begin(), tables.end(), std::mt19937(5));
  const auto options = at::TensorOptions().dtype(at::kBFloat16).device(at::kCUDA, 0);
  PagedKvCache cache(config, rows * width, block_size, options);
  const at::Tensor block_tables = at::tensor(tables, at::kInt).view({rows, width}).cuda();
  std::vector<int64_t> context(rows);
  for (int64_t r = 0; r < rows; ++r) context[r] = 1 + (r * 37) % 199;
  // `tokens` of row r at positions [first[r], first[r] + tokens[r]).
  auto step = [&](const std::vector<int64_t>& first, const std::vector<int64_t>& tokens) {
    StepAttention attention;
    std::vector<int64_t> slots, positions;
    std::vector<int32_t> token_rows;
    for (size_t r = 0; r < tokens.size(); ++r) {
      for (int64_t p = first[r]; p < first[r] + tokens[r]; ++p) {
        slots.push_back(int64_t(tables[r * width + p / block_size]) * block_size + p % block_size);
        positions.push_back(p);
        token_rows.push_back(static_cast<int32_t>(r));
      }
    }
    attention.slot_mapping = at::tensor(slots, at::kLong).cuda();
    attention.positions = at::tensor(positions, at::kLong).cuda();
    attention.token_rows = at::tensor(token_rows, at::kInt).cuda();
    attention.block_tables = block_tables;
    return attention;
  };
  at::manual_seed(9);
  auto random = [&](int64_t n, int64_t heads) { return at::randn({n, heads, 64}, options); };
  const int64_t cached = std::accumulate(context.begin(), context.end(), int64_t{0});
  const StepAttention prefill = step(std::vector<int64_t>(rows, 0), context);
  cache.BeginStep(&prefill);
  cache.AppendAndAttend(0, random(cached, 14), random(cached, 2), random(cached, 2), 0.125);
  cache.BeginStep(nullptr);
  // Every decode step writes the same new keys and values for the rows it has.
  const at::Tensor q = random(rows, 14), k = random(rows, 2), v = random(rows, 2);
  auto decode = [&](int64_t batch) {
    const StepAttention attention = step(std::vector<int64_t>(context.begin(), context.begin() + batch),
                                         std::vector<int64_t>(batch, 1));
    cache.BeginStep(&attention);
    const at::Tensor out = cache.AppendAndAttend(0, q.narrow(0, 0, batch), k.narrow(0, 0, batch),
                                                 v.narrow(0, 0, batch), 0.125);
    cache.BeginStep(nullptr);
    return out.narrow(0, 0, 3).cpu();
  };
  const at::Tensor alone = decode(3);
  for (int64_t batch : {400, 2048}) {
    const at::Tensor among = decode(batch);
    EXPECT_TRUE(at::equal(among, alone))
        << "batch " << batch << ": max difference "
        << (among.to(at::kFloat) - alone.to(at::kFloat)).abs().max().item<float>();
  }
}

// Decode steps through TryRotateAppendAndAttend (RoPE, KV write and attention in one
// kernel) and through FusedRopeQk + AppendAndAttend, each on its own cache with the same
// prefilled contents: the same outputs, bit for bit, over two steps (the second reads
// what the first wrote). Rows of 5, 40 and 129 cached tokens in scattered blocks.
TEST(PagedAttentionCuda, RotaryDecodeStepMatchesRopeThenAttend) {
  c10::NoGradGuard no_grad;
  struct Case {
    int64_t q_heads, kv_heads, head_dim;
    at::ScalarType dtype;
  };
  for (const Case& shape : {Case{14, 2, 64, at::kBFloat16}, Case{16, 2, 128, at::kHalf}}) {
    SCOPED_TRACE(::testing::Message() << shape.q_heads << "/" << shape.kv_heads << " heads, dim "
                                      << shape.head_dim << ", " << shape.dtype);
    models::TransformerConfig config;
    config.num_hidden_layers = 1;
    config.num_attention_heads = shape.q_heads;
    config.num_key_value_heads = shape.kv_heads;
    config.head_dim = shape.head_dim;
    const int64_t block_size = 16, width = 10, rows = 3;
    const std::vector<int64_t> cached = {5, 40, 129};
    std::vector<int32_t> tables(rows * width);
    std::iota(tables.begin(), tables.end(), 0);
    std::shuffle(tables.begin(), tables.end(), std::mt19937(3));
    const auto options = at::TensorOptions().dtype(shape.dtype).device(at::kCUDA, 0);
    PagedKvCache fused(config, rows * width, block_size, options);
    PagedKvCache separate(config, rows * width, block_size, options);
    auto layout = [&](const std::vector<int>& token_rows, const std::vector<int64_t>& positions) {
      StepAttention attention;
      std::vector<int64_t> slots;
      for (size_t i = 0; i < token_rows.size(); ++i) {
        slots.push_back(int64_t(tables[token_rows[i] * width + positions[i] / block_size]) *
                            block_size + positions[i] % block_size);
      }
      attention.slot_mapping = at::tensor(slots, at::kLong).cuda();
      attention.positions = at::tensor(positions, at::kLong).cuda();
      attention.token_rows =
          at::tensor(std::vector<int32_t>(token_rows.begin(), token_rows.end()), at::kInt).cuda();
      attention.block_tables = at::tensor(tables, at::kInt).view({rows, width}).cuda();
      return attention;
    };
    at::Generator generator = at::detail::createCPUGenerator(5);
    auto random = [&](std::vector<int64_t> sizes) {
      return at::randn(sizes, generator).to(options);
    };
    // Prefill both caches with the same keys and values.
    std::vector<int> prefill_rows;
    std::vector<int64_t> prefill_positions;
    for (int row = 0; row < rows; ++row) {
      for (int64_t p = 0; p < cached[row]; ++p) {
        prefill_rows.push_back(row);
        prefill_positions.push_back(p);
      }
    }
    const StepAttention prefill = layout(prefill_rows, prefill_positions);
    const int64_t n = static_cast<int64_t>(prefill_rows.size());
    const at::Tensor q0 = random({n, shape.q_heads, shape.head_dim});
    const at::Tensor k0 = random({n, shape.kv_heads, shape.head_dim});
    const at::Tensor v0 = random({n, shape.kv_heads, shape.head_dim});
    for (PagedKvCache* cache : {&fused, &separate}) {
      cache->BeginStep(&prefill);
      cache->AppendAndAttend(0, q0, k0, v0, 0.125);
      cache->BeginStep(nullptr);
    }
    const double scale = 1.0 / std::sqrt(double(shape.head_dim));
    const int64_t qkv_width = (shape.q_heads + 2 * shape.kv_heads) * shape.head_dim;
    for (int64_t step = 0; step < 2; ++step) {
      StepAttention decode = layout({0, 1, 2}, {cached[0] + step, cached[1] + step, cached[2] + step});
      decode.one_token_per_row = true;
      const at::Tensor qkv = random({rows, qkv_width});
      const at::Tensor cos = random({rows, shape.head_dim}).clamp(-1, 1);
      const at::Tensor sin = random({rows, shape.head_dim}).clamp(-1, 1);
      fused.BeginStep(&decode);
      const at::Tensor got = fused.TryRotateAppendAndAttend(0, qkv, cos, sin, scale);
      fused.BeginStep(nullptr);
      ASSERT_TRUE(got.defined());
      const auto [q, k] =
          models::FusedRopeQk(qkv, cos, sin, shape.q_heads, shape.kv_heads, shape.head_dim);
      const at::Tensor v = qkv.narrow(1, (shape.q_heads + shape.kv_heads) * shape.head_dim,
                                      shape.kv_heads * shape.head_dim)
                               .view({rows, shape.kv_heads, shape.head_dim});
      separate.BeginStep(&decode);
      const at::Tensor want = separate.AppendAndAttend(0, q, k, v, scale);
      separate.BeginStep(nullptr);
      EXPECT_TRUE(at::equal(got, want)) << "step " << step << ": max difference "
                                        << (got.to(at::kFloat) - want.to(at::kFloat)).abs().max().item<float>();
    }
    // A step with two tokens of one row is not a decode step: the caller must rotate.
    StepAttention mixed = layout({0, 0}, {cached[0] + 2, cached[0] + 3});
    fused.BeginStep(&mixed);
    EXPECT_FALSE(fused.TryRotateAppendAndAttend(0, random({2, qkv_width}), random({2, shape.head_dim}),
                                                random({2, shape.head_dim}), scale)
                     .defined());
    fused.BeginStep(nullptr);
  }
}

}  // namespace
}  // namespace rollout::engine
