// Tensor-core variant of the paged attention kernel (engine/cuda/paged_attention_kernels.h),
// for half-precision caches with head_dim 64 or 128 — the decode shapes of Qwen2.5 and
// Llama. Same contract and arguments as LaunchPagedAttention, which calls it when
// PagedAttentionMmaSupports() holds.
//
// Why: the CUDA-core kernel spends its time on shared-memory reads of q and of the
// probabilities, not on the cache reads (H200, Qwen2.5-0.5B shape, batch 256: 27 us a
// layer for 33 MB, 1.2 TB/s). Here one warp computes the scores of 16 keys against the
// whole query-head group, and their weighted values, with mma.sync (query heads are
// the rows of the 16-row tile, padded with zeros), every operand straight from
// registers: each lane loads its own slice of the key and value rows with 16-byte
// loads, in exactly the layout the tensor-core fragments want (the dimensions and
// keys inside a tile are permuted consistently, which the dot products do not see).
// A (token, KV head)'s chunks of 16 keys form four interleaved streams (every fourth
// chunk), each with its own online softmax (float32), merged through shared memory at
// the end. A block runs the four streams on four warps when the grid fits the GPU in
// one wave, on two or one warp (one stream after another) when it does not, so more
// blocks overlap their fixed costs; the results are bit-identical either way, so a
// sequence's attention does not depend on the batch around it. The probabilities enter
// the value product rounded to the cache's type, as in FlashAttention.
// H200, Qwen2.5-0.5B shape (14/2 heads of 64, bf16), context 256, KV of 24 layers
// (far larger than the L2) with the KV write: 15.4 us a layer at batch 256 (27 us with
// the CUDA-core kernel), 97 us at batch 2048 (113 us with four warps a block).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "models/cuda/element_type.h"

namespace rollout::engine::cuda {

// bfloat16 or float16, head_dim 64 or 128, q_heads a multiple of kv_heads with at most
// 8 query heads per KV head.
bool PagedAttentionMmaSupports(models::cuda::ElementType dtype, int64_t q_heads,
                               int64_t kv_heads, int64_t head_dim);

// Arguments as LaunchPagedAttention; the shape and dtype must pass PagedAttentionMmaSupports().
void LaunchPagedAttentionMma(models::cuda::ElementType dtype, const void* q, const void* k_cache,
                             const void* v_cache, const int32_t* block_tables, int64_t max_blocks,
                             const int32_t* table_width, const int32_t* token_rows,
                             const int64_t* positions, int64_t tokens, int64_t q_heads,
                             int64_t kv_heads, int64_t head_dim, int64_t block_size, float scale,
                             void* out, cudaStream_t stream);

// A decode step's RoPE, KV write and attention in one kernel; every token must be the
// only one of its block-table row in the step (so no other block reads the slot it
// writes). qkv [tokens, (q_heads + 2 kv_heads) * head_dim]: the unrotated fused q/k/v
// projection, row stride qkv_stride (a multiple of 8 elements); cos/sin [tokens,
// head_dim] contiguous rotate-half tables (as models/cuda/decode_kernels.h's RopeQk
// takes). Token i's rotated key and its value go to cache slot slot_mapping[i]
// (int64 [tokens]); its rotated query attends as in LaunchPagedAttentionMma, whose other
// arguments these are. Results equal RopeQk + the KV write + LaunchPagedAttentionMma.
void LaunchRotaryDecodeAttentionMma(models::cuda::ElementType dtype, const void* qkv,
                                    int64_t qkv_stride, const void* cos, const void* sin,
                                    const int64_t* slot_mapping, void* k_cache, void* v_cache,
                                    const int32_t* block_tables, int64_t max_blocks,
                                    const int32_t* table_width, const int32_t* token_rows,
                                    const int64_t* positions, int64_t tokens, int64_t q_heads,
                                    int64_t kv_heads, int64_t head_dim, int64_t block_size,
                                    float scale, void* out, cudaStream_t stream);

}  // namespace rollout::engine::cuda
