// The rollout engine's KV storage: per layer, keys and values in fixed-size blocks
// ([blocks, block_size, kv_heads, head_dim], the model's dtype, on its device),
// addressed through block tables from engine/kv_block_manager.h. Implements
// models::KvCache, so CausalLM::ForwardStep runs a step of any mix of prefill chunks
// and decode tokens over it.
//
// A step's N tokens are laid out by the engine (engine/step_inputs.h): token i belongs
// to block-table row token_rows[i], sits at positions[i] of its sequence, and its k/v
// go to cache slot slot_mapping[i] (block * block_size + offset). Attention of token i
// covers its sequence's positions [0, positions[i]].
//
// GPU: one kernel writes the step's keys and values (engine/cuda/kv_write_kernels.h),
// one reads the blocks in place (engine/cuda/paged_attention_kernels.h); a decode step
// given the unrotated projection does RoPE, the write and attention in one
// (engine/cuda/paged_attention_mma.h). The trailing rows of a step that each start
// their sequence in it (fresh prompts, which the scheduler places after the running
// sequences' tokens) attend over their own keys and values with FlashAttention's
// variable-length kernel instead (half precision, LibTorch >= 2.5): the paged kernel
// reads a row's whole context once per token, the flash kernel once per tile of
// queries.
// CPU, and head shapes the kernel does not serve: per sequence, its blocks are
// gathered and attended with SDPA.
// Not thread-safe; one step at a time.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "engine/kv_block_manager.h"
#include "models/hf_config.h"
#include "models/kv_cache.h"

namespace rollout::engine {

// Where a step's tokens go and what they attend to. Tensors on the cache's device.
struct StepAttention {
  at::Tensor slot_mapping;  // [N] int64
  at::Tensor positions;     // [N] int64
  at::Tensor token_rows;    // [N] int32
  at::Tensor block_tables;  // [R, max_blocks] int32; unused entries 0
  // Optional [1] int32: the tables' real row width when block_tables is a larger
  // static buffer (CUDA graphs); undefined: block_tables.size(1).
  at::Tensor block_table_width;
  // Every row has exactly one token in the step (a decode step): a token's KV can be
  // written and its row read in one kernel (TryRotateAppendAndAttend).
  bool one_token_per_row = false;
  // Host copy of the layout for the gathering path: row r's tokens are
  // [row_token_begin[r], row_token_begin[r + 1]) (none is fine), it has row_context[r]
  // positions after the step, in the blocks listed first in row r of
  // host_block_tables (block_tables on the host, [R * block_tables.size(1)]).
  std::vector<int64_t> row_token_begin;
  std::vector<int64_t> row_context;
  std::vector<BlockId> host_block_tables;
};

class PagedKvCache final : public models::KvCache {
 public:
  // `num_blocks` blocks of `block_size` token slots for every layer of `config`, plus
  // one scratch block that padded rows of a CUDA-graph step write to.
  PagedKvCache(const models::TransformerConfig& config, int64_t num_blocks, int64_t block_size,
               const at::TensorOptions& options);

  // Bytes one block takes over all layers (keys and values).
  static int64_t BytesPerBlock(const models::TransformerConfig& config, int64_t block_size,
                               c10::ScalarType dtype);

  int64_t num_blocks() const { return num_blocks_; }
  int64_t block_size() const { return block_size_; }
  // The scratch block's first slot.
  int64_t scratch_slot() const { return num_blocks_ * block_size_; }
  // Whether attention reads the blocks in place with the CUDA kernel (the only path
  // CUDA graphs capture).
  bool uses_kernel() const { return use_kernel_; }

  // Copies blocks (all layers) for copy-on-write; before the step that writes them.
  void CopyBlocks(const std::vector<BlockCopy>& copies);
  // Declares the next step's layout; it must stay alive until the step is done. On
  // CUDA, a step with trailing fresh rows (above) sends their token offsets to the
  // device here, without waiting.
  void BeginStep(const StepAttention* step);

  // The step's trailing rows that each start their sequence in it (a row's row_context
  // equals its token count; rows without tokens are passed over): their tokens are
  // [first_token, N), and offsets ([rows with tokens + 1], from 0, relative to
  // first_token) delimit the rows. offsets is empty when the last row with tokens has
  // context before the step, when no row has tokens, or without the host layout.
  struct FreshRows {
    int64_t first_token = 0;
    std::vector<int32_t> offsets;
  };
  static FreshRows TrailingFreshRows(const StepAttention& step);

  at::Tensor AppendAndAttend(int64_t layer, const at::Tensor& q, const at::Tensor& k,
                             const at::Tensor& v, double scale) override;
  // One kernel for decode steps (one_token_per_row) on CUDA in bfloat16/float16 at
  // head_dim 64 or 128 (engine/cuda/paged_attention_mma.h); undefined otherwise.
  at::Tensor TryRotateAppendAndAttend(int64_t layer, const at::Tensor& qkv, const at::Tensor& cos,
                                      const at::Tensor& sin, double scale) override;

 private:
#ifdef ROLLOUT_WITH_CUDA
  // Paged attention kernel for the step's first `tokens` tokens (of q [N, Hq, D],
  // contiguous) into the same rows of out.
  void AttendInPlace(const at::Tensor& q, int64_t tokens, const at::Tensor& keys,
                     const at::Tensor& values, double scale, at::Tensor& out) const;
  // Stores the step's k/v [N, kv_heads, D] into `keys`/`values` (one layer's blocks)
  // at the step's slots, with one kernel.
  void WriteKv(const at::Tensor& k, const at::Tensor& v, at::Tensor& keys, at::Tensor& values) const;
#endif
  at::Tensor AttendGathered(const at::Tensor& q, const at::Tensor& keys,
                            const at::Tensor& values, double scale) const;

  int64_t num_blocks_;
  int64_t block_size_;
  int64_t kv_heads_;
  int64_t head_dim_;
  // [layers, 2 (k, v), blocks, block_size, kv_heads, head_dim]
  at::Tensor storage_;
  const StepAttention* step_ = nullptr;
  bool use_kernel_ = false;  // CUDA and a head shape the paged attention kernel serves
  // use_kernel_, and the variable-length flash kernel serves the dtype and head shape.
  bool flash_fresh_rows_ = false;
  // The step's TrailingFreshRows when flash_fresh_rows_: the offsets on the device
  // (undefined when there are none), the first token and the longest row.
  at::Tensor fresh_row_offsets_;
  int64_t first_fresh_token_ = 0;
  int64_t longest_fresh_row_ = 0;
};

}  // namespace rollout::engine
