#include "engine/cuda/paged_attention_kernels.h"

#include "engine/cuda/paged_attention_mma.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cfloat>

namespace rollout::engine::cuda {
namespace {

using models::cuda::ElementType;

constexpr int kMaxGroup = 8;    // query heads per KV head

__device__ __forceinline__ float ToFloat(float v) { return v; }
__device__ __forceinline__ float ToFloat(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float ToFloat(__half v) { return __half2float(v); }
__device__ __forceinline__ void FromFloat(float v, float* p) { *p = v; }
__device__ __forceinline__ void FromFloat(float v, __nv_bfloat16* p) { *p = __float2bfloat16(v); }
__device__ __forceinline__ void FromFloat(float v, __half* p) { *p = __float2half(v); }

__device__ __forceinline__ float WarpMax(float v) {
  for (int offset = 16; offset > 0; offset >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, offset));
  return v;
}
__device__ __forceinline__ float WarpSum(float v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffff, v, offset);
  return v;
}

// A key row into float registers with 16-byte loads.
template <typename T, int D>
__device__ __forceinline__ void LoadRow(const T* __restrict__ row, float* out) {
  static_assert((D * sizeof(T)) % 16 == 0, "rows are whole 16-byte chunks");
  constexpr int kPerChunk = 16 / sizeof(T);
  const uint4* chunks = reinterpret_cast<const uint4*>(row);
#pragma unroll
  for (int c = 0; c < D / kPerChunk; ++c) {
    const uint4 chunk = chunks[c];
    const T* values = reinterpret_cast<const T*>(&chunk);
#pragma unroll
    for (int i = 0; i < kPerChunk; ++i) out[c * kPerChunk + i] = ToFloat(values[i]);
  }
}

// kThreads threads per block, at least kMinBlocks resident per SM (the launch picks).
// Shared memory: q [group][D] (pre-scaled), probabilities [group][kThreads], the tile's
// cache slots [kThreads], per head the running max, running sum and the current tile's
// rescale factor, and the output accumulator the warps add into at the end.
//   1. scores: thread t scores key tile + t against every query head of the group;
//   2. online softmax: warp w updates heads w, w + warps, ...;
//   3. values: warp w takes keys w, w + warps, ... of the tile, lane l the dimension
//      pairs l, l + 32, ... — one read per key for all heads. When a tile of value
//      rows fits in 32 KiB of shared memory (head_dim <= 64 in bfloat16) the whole block
//      loads it with 16-byte loads while the softmax runs, so all its loads are in
//      flight at once; otherwise the warps read the rows from global memory.
template <typename T, int D, int kThreads, int kMinBlocks>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
PagedAttention(const T* __restrict__ q, const T* __restrict__ k_cache,
               const T* __restrict__ v_cache, const int32_t* __restrict__ block_tables,
               int max_blocks, const int32_t* __restrict__ table_width,
               const int32_t* __restrict__ token_rows,
               const int64_t* __restrict__ positions, int q_heads, int kv_heads, int block_size,
               float scale, T* __restrict__ out) {
  constexpr int kPairIters = (D / 2 + 31) / 32;
  constexpr int kWarps = kThreads / 32;
  const int token = blockIdx.x;
  const int kv_head = blockIdx.y;
  const int group = q_heads / kv_heads;
  const int tid = threadIdx.x;
  const int warp = tid / 32, lane = tid % 32;

  __shared__ float q_s[kMaxGroup * D];
  __shared__ float p_s[kMaxGroup * kThreads];
  __shared__ int64_t slot_s[kThreads];
  __shared__ float max_s[kMaxGroup], sum_s[kMaxGroup], alpha_s[kMaxGroup];
  __shared__ float out_s[kMaxGroup * D];
  constexpr bool kValuesInShared = kThreads * D * sizeof(T) <= 32768;
  constexpr int kChunksPerRow = D * sizeof(T) / 16;
  __shared__ __align__(16) unsigned char v_raw[kValuesInShared ? kThreads * D * sizeof(T) : 16];
  T* v_s = reinterpret_cast<T*>(v_raw);

  const int64_t context = positions[token] + 1;
  const int width = table_width != nullptr ? *table_width : max_blocks;
  const int32_t* table = block_tables + int64_t(token_rows[token]) * width;
  const T* q_token = q + (int64_t(token) * q_heads + int64_t(kv_head) * group) * D;
  for (int i = tid; i < group * D; i += kThreads) {
    q_s[i] = ToFloat(q_token[i]) * scale;
    out_s[i] = 0.f;
  }
  if (tid < group) {
    max_s[tid] = -FLT_MAX;
    sum_s[tid] = 0.f;
  }
  float2 acc[kMaxGroup][kPairIters];
#pragma unroll
  for (int g = 0; g < kMaxGroup; ++g) {
#pragma unroll
    for (int k = 0; k < kPairIters; ++k) acc[g][k] = make_float2(0.f, 0.f);
  }
  __syncthreads();

  for (int64_t tile = 0; tile < context; tile += kThreads) {
    const int tile_len = int(context - tile < kThreads ? context - tile : kThreads);
    if (tid < tile_len) {
      const int64_t j = tile + tid;
      const int64_t slot = int64_t(table[j / block_size]) * block_size + j % block_size;
      slot_s[tid] = slot;
      float k_f[D];
      LoadRow<T, D>(k_cache + (slot * kv_heads + kv_head) * D, k_f);
      for (int g = 0; g < group; ++g) {
        float s = 0.f;
#pragma unroll
        for (int d = 0; d < D; ++d) s += q_s[g * D + d] * k_f[d];
        p_s[g * kThreads + tid] = s;
      }
    }
    __syncthreads();
    if constexpr (kValuesInShared) {
      uint4 chunks[kChunksPerRow];
#pragma unroll
      for (int k = 0; k < kChunksPerRow; ++k) {
        const int c = tid + k * kThreads, row = c / kChunksPerRow;
        if (row < tile_len) {
          chunks[k] = reinterpret_cast<const uint4*>(
              v_cache + (slot_s[row] * kv_heads + kv_head) * D)[c % kChunksPerRow];
        }
      }
#pragma unroll
      for (int k = 0; k < kChunksPerRow; ++k) {
        const int c = tid + k * kThreads, row = c / kChunksPerRow;
        if (row < tile_len) reinterpret_cast<uint4*>(v_s + row * D)[c % kChunksPerRow] = chunks[k];
      }
    }
    for (int g = warp; g < group; g += kWarps) {
      float m = -FLT_MAX;
      for (int i = lane; i < tile_len; i += 32) m = fmaxf(m, p_s[g * kThreads + i]);
      m = WarpMax(m);
      const float new_max = fmaxf(max_s[g], m);
      float sum = 0.f;
      for (int i = lane; i < tile_len; i += 32) {
        const float p = __expf(p_s[g * kThreads + i] - new_max);
        p_s[g * kThreads + i] = p;
        sum += p;
      }
      sum = WarpSum(sum);
      if (lane == 0) {
        const float alpha = __expf(max_s[g] - new_max);
        alpha_s[g] = alpha;
        sum_s[g] = sum_s[g] * alpha + sum;
        max_s[g] = new_max;
      }
    }
    __syncthreads();
#pragma unroll
    for (int g = 0; g < kMaxGroup; ++g) {
      if (g < group) {
        const float alpha = alpha_s[g];
#pragma unroll
        for (int k = 0; k < kPairIters; ++k) {
          acc[g][k].x *= alpha;
          acc[g][k].y *= alpha;
        }
      }
    }
    for (int i = warp; i < tile_len; i += kWarps) {
      const T* v_row =
          kValuesInShared ? v_s + i * D : v_cache + (slot_s[i] * kv_heads + kv_head) * D;
      float2 v[kPairIters];
#pragma unroll
      for (int k = 0; k < kPairIters; ++k) {
        const int d = 2 * (lane + 32 * k);
        v[k] = d < D ? make_float2(ToFloat(v_row[d]), ToFloat(v_row[d + 1])) : make_float2(0.f, 0.f);
      }
#pragma unroll
      for (int g = 0; g < kMaxGroup; ++g) {
        if (g < group) {
          const float p = p_s[g * kThreads + i];
#pragma unroll
          for (int k = 0; k < kPairIters; ++k) {
            acc[g][k].x += p * v[k].x;
            acc[g][k].y += p * v[k].y;
          }
        }
      }
    }
    __syncthreads();
  }

  // Sum the warps' partial outputs, normalise, store.
#pragma unroll
  for (int g = 0; g < kMaxGroup; ++g) {
    if (g < group) {
#pragma unroll
      for (int k = 0; k < kPairIters; ++k) {
        const int d = 2 * (lane + 32 * k);
        if (d < D) {
          atomicAdd(&out_s[g * D + d], acc[g][k].x);
          atomicAdd(&out_s[g * D + d + 1], acc[g][k].y);
        }
      }
    }
  }
  __syncthreads();
  T* out_token = out + (int64_t(token) * q_heads + int64_t(kv_head) * group) * D;
  for (int i = tid; i < group * D; i += kThreads) FromFloat(out_s[i] / sum_s[i / D], out_token + i);
}

template <typename T>
void Launch(const void* q, const void* k_cache, const void* v_cache, const int32_t* block_tables,
            int64_t max_blocks, const int32_t* table_width, const int32_t* token_rows, const int64_t* positions,
            int64_t tokens, int64_t q_heads, int64_t kv_heads, int64_t head_dim,
            int64_t block_size, float scale, void* out, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(tokens), static_cast<unsigned>(kv_heads));
  // Blocks of 128 threads (key tiles of 128, four blocks an SM) when the grid covers
  // the GPU at least twice: they run in about one wave. Otherwise 256 threads (two an
  // SM), fewer and longer tiles. H200, 14/2 heads of 64 in bfloat16 (before the
  // tensor-core variant took that shape): 512 blocks (batch 256) 27 vs 30 us a layer
  // with the small blocks; 128 blocks (batch 64) 18 vs 13 us.
  int device = 0, sms = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  const bool small_blocks = tokens * kv_heads >= 2 * int64_t(sms);
  auto launch = [&](auto small, auto large) {
    const auto kernel = small_blocks ? small : large;
    kernel<<<grid, small_blocks ? 128 : 256, 0, stream>>>(
        static_cast<const T*>(q), static_cast<const T*>(k_cache), static_cast<const T*>(v_cache),
        block_tables, int(max_blocks), table_width, token_rows, positions, int(q_heads), int(kv_heads),
        int(block_size), scale, static_cast<T*>(out));
  };
  switch (head_dim) {
    case 16: launch(PagedAttention<T, 16, 128, 4>, PagedAttention<T, 16, 256, 2>); break;
    case 32: launch(PagedAttention<T, 32, 128, 4>, PagedAttention<T, 32, 256, 2>); break;
    case 64: launch(PagedAttention<T, 64, 128, 4>, PagedAttention<T, 64, 256, 2>); break;
    case 80: launch(PagedAttention<T, 80, 128, 4>, PagedAttention<T, 80, 256, 2>); break;
    case 96: launch(PagedAttention<T, 96, 128, 4>, PagedAttention<T, 96, 256, 2>); break;
    case 128: launch(PagedAttention<T, 128, 128, 4>, PagedAttention<T, 128, 256, 2>); break;
  }
}

}  // namespace

bool PagedAttentionSupports(int64_t q_heads, int64_t kv_heads, int64_t head_dim) {
  const bool dim_ok = head_dim == 16 || head_dim == 32 || head_dim == 64 || head_dim == 80 ||
                      head_dim == 96 || head_dim == 128;
  return dim_ok && kv_heads > 0 && q_heads % kv_heads == 0 && q_heads / kv_heads <= kMaxGroup;
}

void LaunchPagedAttention(ElementType dtype, const void* q, const void* k_cache,
                          const void* v_cache, const int32_t* block_tables, int64_t max_blocks,
                          const int32_t* table_width, const int32_t* token_rows,
                          const int64_t* positions, int64_t tokens,
                          int64_t q_heads, int64_t kv_heads, int64_t head_dim,
                          int64_t block_size, float scale, void* out, cudaStream_t stream) {
  if (tokens == 0) return;
  if (PagedAttentionMmaSupports(dtype, q_heads, kv_heads, head_dim)) {
    LaunchPagedAttentionMma(dtype, q, k_cache, v_cache, block_tables, max_blocks, table_width, token_rows,
                            positions, tokens, q_heads, kv_heads, head_dim, block_size, scale, out, stream);
    return;
  }
  switch (dtype) {
    case ElementType::kFloat32:
      Launch<float>(q, k_cache, v_cache, block_tables, max_blocks, table_width, token_rows, positions, tokens,
                    q_heads, kv_heads, head_dim, block_size, scale, out, stream);
      break;
    case ElementType::kBFloat16:
      Launch<__nv_bfloat16>(q, k_cache, v_cache, block_tables, max_blocks, table_width, token_rows, positions,
                            tokens, q_heads, kv_heads, head_dim, block_size, scale, out, stream);
      break;
    case ElementType::kFloat16:
      Launch<__half>(q, k_cache, v_cache, block_tables, max_blocks, table_width, token_rows, positions, tokens,
                     q_heads, kv_heads, head_dim, block_size, scale, out, stream);
      break;
  }
}

}  // namespace rollout::engine::cuda
