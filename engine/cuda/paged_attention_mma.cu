#include "engine/cuda/paged_attention_mma.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <type_traits>

#include "models/cuda/dependent_launch.cuh"
#include "models/cuda/element_access.cuh"
#include "models/cuda/rope_math.cuh"

namespace rollout::engine::cuda {
namespace {

using models::cuda::DispatchElementType;
using models::cuda::ElementType;
using models::cuda::FromFloat;
using models::cuda::LaunchDependent;
using models::cuda::LetDependentsStart;
using models::cuda::RotateHalfElement;
using models::cuda::ToFloat;
using models::cuda::WaitForPriorKernels;

constexpr int kStreams = 4;     // interleaved streams of key chunks, merged at the end
constexpr int kChunk = 16;      // keys per warp iteration: two n-tiles of the score mma
constexpr int kMaxGroup = 8;    // query heads per KV head: the 8 live rows of the mma tile
constexpr unsigned kFullMask = 0xffffffffu;

// D = A * B + D for one m16n8k16 tile whose rows 8..15 of A are zero (the padding query
// heads), so only the accumulator's rows 0..7 are kept: lane (g, t) holds
// d0 = D[g][2t], d1 = D[g][2t + 1]. a0 = A[g][2t, 2t + 1], a2 = A[g][2t + 8, 2t + 9];
// b0 = B[2t, 2t + 1][g], b1 = B[2t + 8, 2t + 9][g] — pairs of elements, low half first.
#define ROLLOUT_MMA_LIVE_ROWS(type)                                                \
  "mma.sync.aligned.m16n8k16.row.col.f32." type "." type ".f32 {%0,%1,%2,%3}, "  \
  "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%10,%11};\n"
template <typename T>
__device__ __forceinline__ void MmaLiveRows(uint32_t a0, uint32_t a2, uint32_t b0, uint32_t b1,
                                            float& d0, float& d1) {
  float padding_rows[2];
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    asm volatile(ROLLOUT_MMA_LIVE_ROWS("bf16")
                 : "+f"(d0), "+f"(d1), "=f"(padding_rows[0]), "=f"(padding_rows[1])
                 : "r"(a0), "r"(0u), "r"(a2), "r"(0u), "r"(b0), "r"(b1), "f"(0.f), "f"(0.f));
  } else {
    static_assert(std::is_same_v<T, __half>, "bfloat16 or float16");
    asm volatile(ROLLOUT_MMA_LIVE_ROWS("f16")
                 : "+f"(d0), "+f"(d1), "=f"(padding_rows[0]), "=f"(padding_rows[1])
                 : "r"(a0), "r"(0u), "r"(a2), "r"(0u), "r"(b0), "r"(b1), "f"(0.f), "f"(0.f));
  }
  asm("" ::"f"(padding_rows[0]), "f"(padding_rows[1]));  // discarded
}
#undef ROLLOUT_MMA_LIVE_ROWS

// Two floats as one register of the mma's element type, `lo` in the low half.
template <typename T> __device__ __forceinline__ uint32_t Pack(float lo, float hi);
template <> __device__ __forceinline__ uint32_t Pack<__nv_bfloat16>(float lo, float hi) {
  const __nv_bfloat162 pair = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const uint32_t*>(&pair);
}
template <> __device__ __forceinline__ uint32_t Pack<__half>(float lo, float hi) {
  const __half2 pair = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<const uint32_t*>(&pair);
}

// One warp's share of a chunk of 16 keys, lane (g, t) = (lane / 4, lane % 4):
//   k[r]: key row g + 8r, dimensions [t D/4, (t + 1) D/4) — the score mma's B operand
//         for n = g of n-tile r, k-step s taking words 2s and 2s + 1 of the slice (the
//         query slice uses the same words, so the permuted dimensions still pair up);
//   v[r]: value rows 2t, 2t + 1, 2t + 8, 2t + 9, dimensions [g D/8, (g + 1) D/8) — the
//         value mma's B operand (keys in the k slots the probabilities occupy), with
//         output column n = g of dim-tile j standing for dimension g D/8 + j.
// Keys at or past the context are zeros.
template <int D>
struct Chunk {
  uint4 k[2][D / 32];
  uint4 v[4][D / 64];
};

struct KvRows {
  const int32_t* table;  // the sequence's block-table row
  int64_t context;       // keys [0, context)
  int block_size, kv_heads, kv_head;
};

// The cache slot of key first_key + lane % 16 (-1 past the context): lane l looks up
// key l % 16 of a chunk, the others get it by shuffle. Looked up a chunk ahead, so a
// chunk's loads wait for one memory round trip, not two.
__device__ __forceinline__ int64_t LaneSlot(const KvRows& rows, int64_t first_key, int lane) {
  const int64_t key = first_key + lane % kChunk;
  if (key >= rows.context) return -1;
  return int64_t(rows.table[key / rows.block_size]) * rows.block_size + key % rows.block_size;
}

// Chunks a stream asks the L2 for before the block waits for the kernel before it: the
// first keys' loads then find their lines there instead of waiting on HBM one chunk
// after another (at head_dim 64, 16 KB a block and 8 MB at batch 256).
constexpr int kPrefetchChunks = 2;

// Asks the L2 for the key and value rows of the first kPrefetchChunks chunks of streams
// first_stream, first_stream + stride, ...: lane l takes key l % 16 of a chunk, its key
// row (l < 16) or value row. Safe before WaitForPriorKernels even where the kernel before
// writes the cache: a prefetch fills the L2, which every write goes through, never an L1.
template <typename T, int D>
__device__ __forceinline__ void PrefetchFirstChunks(const T* k_cache, const T* v_cache,
                                                    const KvRows& rows, int first_stream,
                                                    int stride, int lane) {
  const T* cache = lane < kChunk ? k_cache : v_cache;
  for (int stream = first_stream; stream < kStreams; stream += stride) {
#pragma unroll
    for (int i = 0; i < kPrefetchChunks; ++i) {
      const int64_t slot = LaneSlot(rows, (stream + int64_t(i) * kStreams) * kChunk, lane);
      if (slot < 0) break;
      const char* row = reinterpret_cast<const char*>(cache + (slot * rows.kv_heads + rows.kv_head) * D);
#pragma unroll
      for (int offset = 0; offset < int(D * sizeof(T)); offset += 128) {
        asm volatile("prefetch.global.L2 [%0];\n" ::"l"(row + offset));
      }
    }
  }
}

// `slot`: LaneSlot of the chunk.
template <typename T, int D>
__device__ __forceinline__ Chunk<D> LoadChunk(const T* k_cache, const T* v_cache,
                                              const KvRows& rows, int64_t slot, int lane) {
  const int g = lane / 4, t = lane % 4;
  auto row_start = [&](int key_in_chunk) -> int64_t {
    const int64_t s = __shfl_sync(kFullMask, slot, key_in_chunk);
    return s < 0 ? -1 : (s * rows.kv_heads + rows.kv_head) * D;
  };
  const uint4 zero = make_uint4(0, 0, 0, 0);
  Chunk<D> chunk;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int64_t start = row_start(g + 8 * r);
    const uint4* src = reinterpret_cast<const uint4*>(k_cache + start + t * (D / 4));
#pragma unroll
    for (int i = 0; i < D / 32; ++i) chunk.k[r][i] = start < 0 ? zero : src[i];
  }
  const int value_keys[4] = {2 * t, 2 * t + 1, 2 * t + 8, 2 * t + 9};
#pragma unroll
  for (int r = 0; r < 4; ++r) {
    const int64_t start = row_start(value_keys[r]);
    const uint4* src = reinterpret_cast<const uint4*>(v_cache + start + g * (D / 8));
#pragma unroll
    for (int i = 0; i < D / 64; ++i) chunk.v[r][i] = start < 0 ? zero : src[i];
  }
  return chunk;
}

// A warp's running attention state for query head g (its lane's row): running max and
// (lane-partial) sum in log2 units, and the output columns 2t, 2t + 1 of each dim-tile.
template <int D>
struct WarpState {
  float max = -1e30f;  // finite: a chunk of masked keys (-inf) leaves alpha = 1
  float sum = 0.f;
  float out[D / 8][2] = {};
};

// Folds one chunk into the state. q_slice: the lane's query slice (dimensions
// [t D/4, (t + 1) D/4) of head g; zero for padding heads); log2_scale = scale * log2(e).
template <typename T, int D>
__device__ __forceinline__ void AttendChunk(const Chunk<D>& chunk, const uint4 (&q_slice)[D / 32],
                                            int64_t first_key, int64_t context, float log2_scale,
                                            int lane, WarpState<D>& state) {
  const int t = lane % 4;
  const uint32_t* q = reinterpret_cast<const uint32_t*>(q_slice);
  // Scores of head g against keys 8r + 2t and 8r + 2t + 1.
  float score[2][2] = {};
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const uint32_t* k = reinterpret_cast<const uint32_t*>(chunk.k[r]);
#pragma unroll
    for (int s = 0; s < D / 16; ++s) {
      MmaLiveRows<T>(q[2 * s], q[2 * s + 1], k[2 * s], k[2 * s + 1], score[r][0], score[r][1]);
    }
  }
  float chunk_max = -INFINITY;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const bool live = first_key + 8 * r + 2 * t + i < context;
      score[r][i] = live ? score[r][i] * log2_scale : -INFINITY;
      chunk_max = fmaxf(chunk_max, score[r][i]);
    }
  }
  // The four lanes of a row hold its 16 keys.
  chunk_max = fmaxf(chunk_max, __shfl_xor_sync(kFullMask, chunk_max, 1));
  chunk_max = fmaxf(chunk_max, __shfl_xor_sync(kFullMask, chunk_max, 2));
  const float new_max = fmaxf(state.max, chunk_max);
  const float alpha = exp2f(state.max - new_max);
  state.max = new_max;
  state.sum *= alpha;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      score[r][i] = exp2f(score[r][i] - new_max);
      state.sum += score[r][i];
    }
  }
  // Probabilities as the value mma's A operand: keys 2t, 2t + 1 and 2t + 8, 2t + 9.
  const uint32_t p_low = Pack<T>(score[0][0], score[0][1]);
  const uint32_t p_high = Pack<T>(score[1][0], score[1][1]);
  const uint32_t* v0 = reinterpret_cast<const uint32_t*>(chunk.v[0]);
  const uint32_t* v1 = reinterpret_cast<const uint32_t*>(chunk.v[1]);
  const uint32_t* v2 = reinterpret_cast<const uint32_t*>(chunk.v[2]);
  const uint32_t* v3 = reinterpret_cast<const uint32_t*>(chunk.v[3]);
#pragma unroll
  for (int j = 0; j < D / 8; ++j) {
    // Element j of each value row's slice: the low or high half of word j / 2.
    const uint32_t select = (j % 2) ? 0x7632 : 0x5410;
    const uint32_t b0 = __byte_perm(v0[j / 2], v1[j / 2], select);
    const uint32_t b1 = __byte_perm(v2[j / 2], v3[j / 2], select);
    state.out[j][0] *= alpha;
    state.out[j][1] *= alpha;
    MmaLiveRows<T>(p_low, p_high, b0, b1, state.out[j][0], state.out[j][1]);
  }
}

// A launch's arguments (see LaunchPagedAttentionMma and LaunchRotaryDecodeAttentionMma).
template <typename T>
struct Args {
  // Head h of token i's query at q + i * q_stride + h * D; in the rotary variant the
  // unrotated fused projection, whose k heads follow the q heads and v heads the k heads.
  const T* q;
  int64_t q_stride;
  T* k_cache;
  T* v_cache;
  const int32_t* block_tables;
  int max_blocks;
  const int32_t* table_width;
  const int32_t* token_rows;
  const int64_t* positions;
  int q_heads, kv_heads, block_size;
  float log2_scale;
  T* out;
  // Rotary variant only: [tokens, D] tables and [tokens] cache slots.
  const T* cos;
  const T* sin;
  const int64_t* slot_mapping;
};

// The rotary variant's first phase: this block's token writes its rotated key and its
// value for kv_head into the cache (its row has no other token in the step, so no other
// block reads them); visible to the block's reads after the barrier.
template <typename T, int D, int kW>
__device__ __forceinline__ void WriteRotatedKv(const Args<T>& a, int token, int kv_head) {
  const T* row = a.q + int64_t(token) * a.q_stride;
  const T* k = row + int64_t(a.q_heads + kv_head) * D;
  const T* v = row + int64_t(a.q_heads + a.kv_heads + kv_head) * D;
  const T* c = a.cos + int64_t(token) * D;
  const T* s = a.sin + int64_t(token) * D;
  const int64_t dst = (a.slot_mapping[token] * a.kv_heads + kv_head) * D;
  for (int i = threadIdx.x; i < 2 * D; i += kW * 32) {
    const int j = i % D;
    if (i < D) {
      const bool first = j < D / 2;
      const float partner = ToFloat(first ? k[j + D / 2] : k[j - D / 2]);
      a.k_cache[dst + j] =
          RotateHalfElement<T>(ToFloat(k[j]), partner, first, ToFloat(c[j]), ToFloat(s[j]));
    } else {
      a.v_cache[dst + j] = v[j];
    }
  }
  __syncthreads();
}

// The lane's query slice (dimensions [t D/4, (t + 1) D/4) of head g of the group; zeros
// for padding heads), rotated in the rotary variant: the partner dimensions j +- D/2 sit
// in lane t ^ 2's slice.
template <typename T, int D, bool kRotary>
__device__ __forceinline__ void LoadQuery(const Args<T>& a, int token, int kv_head, int group,
                                          int lane, uint4 (&q_slice)[D / 32]) {
  const int g = lane / 4, t = lane % 4;
  const T* head = a.q + int64_t(token) * a.q_stride + int64_t(kv_head * group + g) * D;
#pragma unroll
  for (int i = 0; i < D / 32; ++i) {
    q_slice[i] = g < group ? reinterpret_cast<const uint4*>(head + t * (D / 4))[i]
                           : make_uint4(0, 0, 0, 0);
  }
  if constexpr (kRotary) {
    const T* c = a.cos + int64_t(token) * D + t * (D / 4);
    const T* s = a.sin + int64_t(token) * D + t * (D / 4);
    T* x = reinterpret_cast<T*>(q_slice);
    T partner[D / 4];
#pragma unroll
    for (int w = 0; w < D / 8; ++w) {
      const uint32_t theirs =
          __shfl_xor_sync(kFullMask, reinterpret_cast<const uint32_t*>(q_slice)[w], 2);
      reinterpret_cast<uint32_t*>(partner)[w] = theirs;
    }
#pragma unroll
    for (int e = 0; e < D / 4; ++e) {
      x[e] = RotateHalfElement<T>(ToFloat(x[e]), ToFloat(partner[e]), t < 2, ToFloat(c[e]),
                                  ToFloat(s[e]));
    }
  }
}

// Resident warps an SM can hold at head_dim 64 (at most 128 registers a thread) and at
// 128 (more registers); the launch bounds ask for them.
template <int D>
constexpr int kResidentWarps = D <= 64 ? 16 : 8;

// One block of kW warps (1, 2 or 4) per (query token, KV head). The keys are split the
// same way whatever kW: into kStreams interleaved streams of chunks (stream s takes
// chunks s, s + kStreams, ...), each folded in order into its own online softmax and
// the streams merged in order at the end, so every kW gives bit-identical results;
// warp w runs streams w, w + kW, ... one after another. kW trades the latency of one
// (token, head) — the whole kernel when the grid fits the GPU in one wave — against
// blocks' fixed costs overlapping when it does not (Launch picks it). Launched dependent
// (models/cuda/dependent_launch.cuh).
template <typename T, int D, bool kRotary, int kW>
__global__ void __launch_bounds__(kW * 32, kResidentWarps<D> / kW) PagedAttentionMma(Args<T> a) {
  const int token = blockIdx.x, kv_head = blockIdx.y;
  const int group = a.q_heads / a.kv_heads;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = lane / 4, t = lane % 4;

  // Loads that do not depend on the cache writes below come first, to overlap them. The
  // step's tables are in place before its first kernel, never written by the kernel just
  // before this one (the projection of q, or the cache write), so they are read, and the
  // first keys asked of the L2, before waiting for it.
  const int width = a.table_width != nullptr ? *a.table_width : a.max_blocks;
  const KvRows rows{a.block_tables + int64_t(a.token_rows[token]) * width,
                    a.positions[token] + 1, a.block_size, a.kv_heads, kv_head};
  PrefetchFirstChunks<T, D>(a.k_cache, a.v_cache, rows, warp, kW, lane);
  int64_t slot = LaneSlot(rows, int64_t(warp) * kChunk, lane);  // the warp's first chunk
  WaitForPriorKernels();
  LetDependentsStart();
  uint4 q_slice[D / 32];
  LoadQuery<T, D, kRotary>(a, token, kv_head, group, lane, q_slice);
  if constexpr (kRotary) WriteRotatedKv<T, D, kW>(a, token, kv_head);

  __shared__ float out_s[kStreams][kMaxGroup][D];
  __shared__ float max_s[kStreams][kMaxGroup], sum_s[kStreams][kMaxGroup];
  const int64_t chunks = (rows.context + kChunk - 1) / kChunk;
  for (int stream = warp; stream < kStreams; stream += kW) {
    WarpState<D> state;
    for (int64_t c = stream; c < chunks; c += kStreams) {
      // The warp's next chunk: the stream's next, else the first of its next stream (an
      // empty stream leaves the warp's later ones empty too, so nothing is skipped).
      const int64_t next = c + kStreams < chunks ? c + kStreams : stream + kW;
      const int64_t next_slot = LaneSlot(rows, next * kChunk, lane);
      const Chunk<D> chunk = LoadChunk<T, D>(a.k_cache, a.v_cache, rows, slot, lane);
      AttendChunk<T, D>(chunk, q_slice, c * kChunk, rows.context, a.log2_scale, lane, state);
      slot = next_slot;
    }
    state.sum += __shfl_xor_sync(kFullMask, state.sum, 1);
    state.sum += __shfl_xor_sync(kFullMask, state.sum, 2);
    if (g < group) {
#pragma unroll
      for (int j = 0; j < D / 8; ++j) {
        out_s[stream][g][2 * t * (D / 8) + j] = state.out[j][0];
        out_s[stream][g][(2 * t + 1) * (D / 8) + j] = state.out[j][1];
      }
      if (t == 0) {
        max_s[stream][g] = state.max;
        sum_s[stream][g] = state.sum;
      }
    }
  }
  __syncthreads();

  // Merge the streams: out = sum_s 2^(max_s - M) out_s / sum_s 2^(max_s - M) sum_s.
  T* out_group = a.out + (int64_t(token) * a.q_heads + int64_t(kv_head) * group) * D;
  for (int i = threadIdx.x; i < group * D; i += kW * 32) {
    const int head = i / D, d = i % D;
    float overall_max = max_s[0][head];
#pragma unroll
    for (int s = 1; s < kStreams; ++s) overall_max = fmaxf(overall_max, max_s[s][head]);
    float numerator = 0.f, denominator = 0.f;
#pragma unroll
    for (int s = 0; s < kStreams; ++s) {
      const float weight = exp2f(max_s[s][head] - overall_max);
      numerator += weight * out_s[s][head][d];
      denominator += weight * sum_s[s][head];
    }
    out_group[i] = FromFloat<T>(numerator / denominator);
  }
}

// Warps a block: as many as let the whole grid run in one wave, up to kStreams (H200,
// Qwen2.5-0.5B shape, KV caches far larger than the L2: 4 warps at batch 256 and fewer
// at 2048, where 1 warp a block takes 96 instead of 114 us a layer;
// bench/experimental/paged_attention_experiment.cu).
template <typename T, bool kRotary>
void Launch(const Args<T>& args, int64_t tokens, int64_t head_dim, cudaStream_t stream) {
  if (tokens == 0) return;
  int device = 0, sms = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  const int64_t resident = int64_t(sms) * (head_dim == 64 ? kResidentWarps<64> : kResidentWarps<128>);
  const int64_t pairs = tokens * args.kv_heads;
  const int warps = resident >= 4 * pairs ? 4 : resident >= 2 * pairs ? 2 : 1;
  const dim3 grid(static_cast<unsigned>(tokens), static_cast<unsigned>(args.kv_heads));
  auto launch = [&](auto kernel) { LaunchDependent(kernel, grid, dim3(warps * 32), 0, stream, args); };
  if (head_dim == 64) {
    if (warps == 4) launch(PagedAttentionMma<T, 64, kRotary, 4>);
    if (warps == 2) launch(PagedAttentionMma<T, 64, kRotary, 2>);
    if (warps == 1) launch(PagedAttentionMma<T, 64, kRotary, 1>);
  } else {
    if (warps == 4) launch(PagedAttentionMma<T, 128, kRotary, 4>);
    if (warps == 2) launch(PagedAttentionMma<T, 128, kRotary, 2>);
    if (warps == 1) launch(PagedAttentionMma<T, 128, kRotary, 1>);
  }
}

// Args of a launch: everything but the query source and the rotary inputs.
template <typename T>
Args<T> CommonArgs(const void* k_cache, const void* v_cache, const int32_t* block_tables,
                   int64_t max_blocks, const int32_t* table_width, const int32_t* token_rows,
                   const int64_t* positions, int64_t q_heads, int64_t kv_heads,
                   int64_t block_size, float scale, void* out) {
  Args<T> a{};
  a.k_cache = static_cast<T*>(const_cast<void*>(k_cache));
  a.v_cache = static_cast<T*>(const_cast<void*>(v_cache));
  a.block_tables = block_tables;
  a.max_blocks = int(max_blocks);
  a.table_width = table_width;
  a.token_rows = token_rows;
  a.positions = positions;
  a.q_heads = int(q_heads);
  a.kv_heads = int(kv_heads);
  a.block_size = int(block_size);
  a.log2_scale = scale * 1.4426950408889634f;
  a.out = static_cast<T*>(out);
  return a;
}

}  // namespace

bool PagedAttentionMmaSupports(ElementType dtype, int64_t q_heads, int64_t kv_heads,
                               int64_t head_dim) {
  return (dtype == ElementType::kBFloat16 || dtype == ElementType::kFloat16) &&
         (head_dim == 64 || head_dim == 128) && kv_heads > 0 && q_heads % kv_heads == 0 &&
         q_heads / kv_heads <= kMaxGroup;
}

void LaunchPagedAttentionMma(ElementType dtype, const void* q, const void* k_cache,
                             const void* v_cache, const int32_t* block_tables, int64_t max_blocks,
                             const int32_t* table_width, const int32_t* token_rows,
                             const int64_t* positions, int64_t tokens, int64_t q_heads,
                             int64_t kv_heads, int64_t head_dim, int64_t block_size, float scale,
                             void* out, cudaStream_t stream) {
  DispatchElementType(dtype, [&](auto element) {
    using T = decltype(element);
    if constexpr (!std::is_same_v<T, float>) {
      Args<T> a = CommonArgs<T>(k_cache, v_cache, block_tables, max_blocks, table_width,
                                token_rows, positions, q_heads, kv_heads, block_size, scale, out);
      a.q = static_cast<const T*>(q);
      a.q_stride = q_heads * head_dim;  // the kernel only reads the cache
      Launch<T, false>(a, tokens, head_dim, stream);
    }
  });
}

void LaunchRotaryDecodeAttentionMma(ElementType dtype, const void* qkv, int64_t qkv_stride,
                                    const void* cos, const void* sin,
                                    const int64_t* slot_mapping, void* k_cache, void* v_cache,
                                    const int32_t* block_tables, int64_t max_blocks,
                                    const int32_t* table_width, const int32_t* token_rows,
                                    const int64_t* positions, int64_t tokens, int64_t q_heads,
                                    int64_t kv_heads, int64_t head_dim, int64_t block_size,
                                    float scale, void* out, cudaStream_t stream) {
  DispatchElementType(dtype, [&](auto element) {
    using T = decltype(element);
    if constexpr (!std::is_same_v<T, float>) {
      Args<T> a = CommonArgs<T>(k_cache, v_cache, block_tables, max_blocks, table_width,
                                token_rows, positions, q_heads, kv_heads, block_size, scale, out);
      a.q = static_cast<const T*>(qkv);
      a.q_stride = qkv_stride;
      a.cos = static_cast<const T*>(cos);
      a.sin = static_cast<const T*>(sin);
      a.slot_mapping = slot_mapping;
      Launch<T, true>(a, tokens, head_dim, stream);
    }
  });
}

}  // namespace rollout::engine::cuda
