#include "engine/cuda/sampling_kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>

#include "engine/sampling_noise.h"
#include "models/cuda/element_access.cuh"

namespace rollout::engine::cuda {
namespace {

constexpr int kThreads = 1024;
constexpr int kWarps = kThreads / 32;
constexpr long long kNoToken = LLONG_MAX;  // ranks after every real token

using models::cuda::Pack;
using models::cuda::ToFloat;

// A candidate for the row's argmax.
struct Best {
  float score;
  long long token;
};

// at::argmax's order: NaN above everything, then larger scores; ties to the lowest id.
__device__ __forceinline__ bool Before(Best a, Best b) {
  const bool a_nan = isnan(a.score), b_nan = isnan(b.score);
  if (a_nan || b_nan) return a_nan && (!b_nan || a.token < b.token);
  return a.score > b.score || (a.score == b.score && a.token < b.token);
}

// Log-sum-exp in progress: sum = sum_j exp(x_j - max). It only feeds the log-prob
// (compared with a tolerance), never the draw, so the fast exponential does.
struct Lse {
  float max;
  float sum;
};

__device__ __forceinline__ Lse Combine(Lse a, Lse b) {
  if (b.sum == 0.f) return a;
  if (a.sum == 0.f) return b;
  const float m = fmaxf(a.max, b.max);
  return {m, a.sum * __expf(a.max - m) + b.sum * __expf(b.max - m)};
}

struct RowState {
  Best best;
  Lse lse;
};

__device__ __forceinline__ RowState Merge(RowState a, RowState b) {
  return {Before(b.best, a.best) ? b.best : a.best, Combine(a.lse, b.lse)};
}

__device__ __forceinline__ RowState WarpReduce(RowState s) {
  for (int offset = 16; offset > 0; offset /= 2) {
    const RowState other = {{__shfl_down_sync(0xffffffff, s.best.score, offset),
                             __shfl_down_sync(0xffffffff, s.best.token, offset)},
                            {__shfl_down_sync(0xffffffff, s.lse.max, offset),
                             __shfl_down_sync(0xffffffff, s.lse.sum, offset)}};
    s = Merge(s, other);
  }
  return s;
}

__device__ RowState BlockReduce(RowState s) {
  __shared__ RowState partial[kWarps];
  s = WarpReduce(s);
  const int warp = threadIdx.x / 32;
  if (threadIdx.x % 32 == 0) partial[warp] = s;
  __syncthreads();
  if (warp == 0) {
    s = threadIdx.x < kWarps ? partial[threadIdx.x]
                             : RowState{{-INFINITY, kNoToken}, {-INFINITY, 0.f}};
    s = WarpReduce(s);
  }
  return s;  // valid in thread 0
}

// One block per row: argmax of the scores and log-sum-exp of x = logits / T in one
// pass, then the token's log-prob x[token] - lse. The division matches the CPU path's
// float32 division bit for bit (no fast math), so both rank the same scores. Thread t
// takes packs t, t + kThreads, ... of N logits (N = 1 when the row is not in whole
// 16-byte packs): tokens in increasing order per thread, so a tie keeps the thread's
// earlier token, and the pack's exponentials are summed against its own max with one
// rescale per pack.
template <typename T, int N>
__global__ void __launch_bounds__(kThreads)
    SampleUnfilteredKernel(const T* __restrict__ logits, const float* __restrict__ temperature,
                           const int64_t* __restrict__ seed, const int64_t* __restrict__ step,
                           int64_t vocab, int64_t* tokens, float* log_probs) {
  const int64_t row = blockIdx.x;
  const T* x = logits + row * vocab;
  const float t = temperature[row];
  const bool greedy = !(t > 0.f);
  const float scale = greedy ? 1.f : t;
  const bool unit_scale = scale == 1.f;  // x / 1 is x: skip the division
  const uint64_t key =
      SamplingStreamKey(static_cast<uint64_t>(seed[row]), static_cast<uint64_t>(step[row]));
  RowState s = {{-INFINITY, kNoToken}, {-INFINITY, 0.f}};
  const Pack<T, N>* packs = reinterpret_cast<const Pack<T, N>*>(x);
  for (int64_t p = threadIdx.x; p < vocab / N; p += kThreads) {
    const Pack<T, N> pack = packs[p];
    float v[N];
    float pack_max = -INFINITY;
#pragma unroll
    for (int i = 0; i < N; ++i) {
      v[i] = unit_scale ? ToFloat(pack.v[i]) : ToFloat(pack.v[i]) / scale;
      pack_max = fmaxf(pack_max, v[i]);
    }
    // Relative to a finite reference, so -inf logits add 0 and NaN stays NaN.
    const float reference = pack_max == -INFINITY ? 0.f : pack_max;
    float pack_sum = 0.f;
#pragma unroll
    for (int i = 0; i < N; ++i) pack_sum += __expf(v[i] - reference);
    s.lse = Combine(s.lse, {reference, pack_sum});
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const long long token = p * N + i;
      const float score =
          greedy ? v[i] : v[i] + SamplingGumbelFromKey(key, static_cast<uint32_t>(token));
      // Before() for a later token: NaN wins over numbers, a tie keeps the earlier one.
      if (s.best.token == kNoToken || (!isnan(s.best.score) && !(score <= s.best.score))) {
        s.best = {score, token};
      }
    }
  }
  s = BlockReduce(s);
  if (threadIdx.x == 0) {
    const int64_t token = s.best.token;
    tokens[row] = token;
    log_probs[row] = ToFloat(x[token]) / scale - (s.lse.max + logf(s.lse.sum));
  }
}

template <typename T>
void SampleUnfiltered(const void* logits, const float* temperature, const int64_t* seed,
                      const int64_t* step, int64_t rows, int64_t vocab, int64_t* tokens,
                      float* log_probs, cudaStream_t stream) {
  constexpr int kPack = 16 / sizeof(T);
  const bool packed =
      vocab % kPack == 0 && reinterpret_cast<uintptr_t>(logits) % 16 == 0;
  const auto kernel = packed ? SampleUnfilteredKernel<T, kPack> : SampleUnfilteredKernel<T, 1>;
  kernel<<<rows, kThreads, 0, stream>>>(static_cast<const T*>(logits), temperature, seed, step,
                                        vocab, tokens, log_probs);
}

// Grid (vocab chunks, rows), both grid-strided.
__global__ void FillGumbelNoiseKernel(const int64_t* __restrict__ seed,
                                      const int64_t* __restrict__ step, int64_t rows,
                                      int64_t vocab, float* __restrict__ noise) {
  for (int64_t row = blockIdx.y; row < rows; row += gridDim.y) {
    const uint64_t key =
        SamplingStreamKey(static_cast<uint64_t>(seed[row]), static_cast<uint64_t>(step[row]));
    float* out = noise + row * vocab;
    for (int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < vocab;
         j += static_cast<int64_t>(gridDim.x) * blockDim.x) {
      out[j] = SamplingGumbelFromKey(key, static_cast<uint32_t>(j));
    }
  }
}

}  // namespace

void LaunchSampleTokensUnfiltered(ElementType dtype, const void* logits,
                                  const float* temperature, const int64_t* seed,
                                  const int64_t* step, int64_t rows, int64_t vocab,
                                  int64_t* tokens, float* log_probs, cudaStream_t stream) {
  if (rows == 0) return;
  switch (dtype) {
    case ElementType::kFloat32:
      return SampleUnfiltered<float>(logits, temperature, seed, step, rows, vocab, tokens,
                                     log_probs, stream);
    case ElementType::kBFloat16:
      return SampleUnfiltered<__nv_bfloat16>(logits, temperature, seed, step, rows, vocab,
                                             tokens, log_probs, stream);
    case ElementType::kFloat16:
      return SampleUnfiltered<__half>(logits, temperature, seed, step, rows, vocab, tokens,
                                      log_probs, stream);
  }
}

void LaunchFillGumbelNoise(const int64_t* seed, const int64_t* step, int64_t rows,
                           int64_t vocab, float* noise, cudaStream_t stream) {
  if (rows == 0 || vocab == 0) return;
  constexpr int kFillThreads = 256;
  const int64_t chunks = std::min<int64_t>((vocab + kFillThreads - 1) / kFillThreads, 4096);
  const int64_t row_blocks = std::min<int64_t>(rows, 65535);
  const dim3 grid(static_cast<unsigned>(chunks), static_cast<unsigned>(row_blocks));
  FillGumbelNoiseKernel<<<grid, kFillThreads, 0, stream>>>(seed, step, rows, vocab, noise);
}

}  // namespace rollout::engine::cuda
