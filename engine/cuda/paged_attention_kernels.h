// CUDA kernel behind engine/paged_kv_cache.h: attention of the step's query tokens
// over keys/values stored in fixed-size blocks, read in place through each
// sequence's block table (no gather of the cache into a contiguous buffer).
//
// One thread block per (query token, KV head) serves that KV head's group of query
// heads, streaming the keys in tiles of 128 or 256 with an online softmax (float32
// accumulation); each key and value row is read once for the whole group.
// Token i attends to its sequence's positions [0, positions[i]] — causal, so the same
// kernel serves decode (one query per sequence) and prefill chunks.
// bfloat16/float16 at head_dim 64 or 128 take the tensor-core variant
// (engine/cuda/paged_attention_mma.h); float32 and the other head dims this one.
// Plain C++ interface: the .cu never includes ATen.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "models/cuda/element_type.h"

namespace rollout::engine::cuda {

// Head dims 16, 32, 64, 80, 96, 128; q_heads a multiple of kv_heads with at most 8
// query heads per KV head (Qwen2.5 0.5B-72B, Llama 3).
bool PagedAttentionSupports(int64_t q_heads, int64_t kv_heads, int64_t head_dim);

// q [tokens, q_heads, head_dim]; k_cache/v_cache [blocks, block_size, kv_heads,
// head_dim]; block_tables [rows, width] int32 with width = *table_width when that
// device pointer is given (CUDA graphs: the width changes between replays), else
// max_blocks; token_rows [tokens] int32 (the token's block-table row); positions
// [tokens] int64. out [tokens, q_heads, head_dim].
// All contiguous, in `dtype`; the shape must pass PagedAttentionSupports().
void LaunchPagedAttention(models::cuda::ElementType dtype, const void* q, const void* k_cache,
                          const void* v_cache, const int32_t* block_tables, int64_t max_blocks,
                          const int32_t* table_width, const int32_t* token_rows,
                          const int64_t* positions, int64_t tokens,
                          int64_t q_heads, int64_t kv_heads, int64_t head_dim,
                          int64_t block_size, float scale, void* out, cudaStream_t stream);

}  // namespace rollout::engine::cuda
