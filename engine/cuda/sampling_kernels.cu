#include "engine/cuda/sampling_kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <climits>
#include <cmath>

#include "engine/sampling_noise.h"

namespace rollout::engine::cuda {
namespace {

constexpr int kThreads = 1024;
constexpr int kWarps = kThreads / 32;
constexpr long long kNoToken = LLONG_MAX;  // ranks after every real token

__device__ __forceinline__ float ToFloat(float v) { return v; }
__device__ __forceinline__ float ToFloat(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float ToFloat(__half v) { return __half2float(v); }

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

__device__ __forceinline__ Lse Add(Lse s, float v) {
  if (v == -INFINITY) return s;  // contributes 0; also keeps exp(-inf - -inf) out
  if (v > s.max) {
    s.sum *= __expf(s.max - v);
    s.max = v;
  }
  s.sum += __expf(v - s.max);
  return s;
}

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
// float32 division bit for bit (no fast math), so both rank the same scores.
template <typename T>
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
  for (int64_t j = threadIdx.x; j < vocab; j += kThreads) {
    const float v = unit_scale ? ToFloat(x[j]) : ToFloat(x[j]) / scale;
    s.lse = Add(s.lse, v);
    const float score =
        greedy ? v : v + SamplingGumbelFromKey(key, static_cast<uint32_t>(j));
    const Best candidate = {score, static_cast<long long>(j)};
    if (Before(candidate, s.best)) s.best = candidate;
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
  SampleUnfilteredKernel<T><<<rows, kThreads, 0, stream>>>(
      static_cast<const T*>(logits), temperature, seed, step, vocab, tokens, log_probs);
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
