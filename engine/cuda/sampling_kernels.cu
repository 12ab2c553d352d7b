#include "engine/cuda/sampling_kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>

#include "engine/sampling_noise.h"
#include "models/cuda/dependent_launch.cuh"
#include "models/cuda/element_access.cuh"

namespace rollout::engine::cuda {
namespace {

constexpr int kThreads = 512;
constexpr int kWarps = kThreads / 32;
constexpr long long kNoToken = LLONG_MAX;  // ranks after every real token

using models::cuda::LaunchDependent;
using models::cuda::LetDependentsStart;
using models::cuda::Pack;
using models::cuda::ToFloat;
using models::cuda::WaitForPriorKernels;

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

// The largest noise SamplingGumbelFromUniform returns (u = 1 - 2^-24): 16.636.
constexpr float kMaxGumbel = 16.64f;
// Pruning (below) is exact while half an ulp of the scores stays far below its margin:
// scores under 1024 in magnitude have ulps of at most 1.2e-4.
constexpr float kPruneScoreLimit = 1024.f;
// Slack on the uniform's threshold: a noise at least 2.7e-4 short of the bar (g' >= e),
// well above the fast exponentials' error (~2e-6) and the scores' rounding.
constexpr float kUniformMargin = 1e-4f;
// Packs each thread loads before scoring them: enough bytes in flight for HBM.
constexpr int kPacksInFlight = 2;

// The largest best score of the warp's lanes, NaN ignored: a score some token has.
__device__ __forceinline__ float WarpBestScore(float score) {
  for (int offset = 16; offset > 0; offset /= 2) {
    score = fmaxf(score, __shfl_xor_sync(0xffffffff, score, offset));
  }
  return score;
}

// Pruning for a pack of scaled logits whose largest is `v_max` (NaN if any is NaN),
// given `bar`, the score some token of the row already has. The noise g(u) =
// -log(-log u) rises with u and never exceeds kMaxGumbel, so a token of the pack can
// reach the bar only if its u exceeds exp(-exp(-(bar - v_max))). Returns that bound
// less the margin (tokens with u below it score strictly under the bar and need no
// noise), 2 when no token of the pack can reach the bar, and -1 when pruning is off
// (NaNs, or scores too large for the margin).
__device__ __forceinline__ float UniformBar(float bar, float v_max) {
  if (!(fabsf(bar) < kPruneScoreLimit)) return -1.f;
  const float c = bar - v_max;
  if (c > kMaxGumbel + 0.05f) return 2.f;
  if (!(c > -kMaxGumbel)) return -1.f;  // NaN, or nothing to prune
  return __expf(-__expf(-c)) - kUniformMargin;
}

// Whether some token of the pack [first_token, first_token + N) (N even, first_token
// even: whole pairs) has a uniform of at least u_bar: the uniform rises with the draw,
// so the pack's largest draw decides, without a branch per token.
template <int N>
__device__ __forceinline__ bool SomeUniformReaches(uint64_t key, uint32_t first_token, float u_bar) {
  uint32_t largest = 0;
#pragma unroll
  for (int i = 0; i < N; i += 2) {
    const uint64_t pair_bits = SamplingPairBits(key, first_token + i);
    largest = max(largest, max(SamplingDrawFromBits(pair_bits, first_token + i),
                               SamplingDrawFromBits(pair_bits, first_token + i + 1)));
  }
  return SamplingUniformFromDraw(largest) >= u_bar;
}

// Offers a later token's score to the thread's best, in Before()'s order: NaN wins over
// numbers, a tie keeps the earlier token.
__device__ __forceinline__ void Offer(float score, long long token, Best* best) {
  if (best->token == kNoToken || (!isnan(best->score) && !(score <= best->score))) {
    *best = {score, token};
  }
}

// Scores pack `p` (N logits) into the thread's state: log-sum-exp of x = logits / T,
// then the argmax of x (greedy) or of x + Gumbel noise, with the noise computed only
// for tokens above the pack's UniformBar. The division matches the CPU path's float32
// division bit for bit (no fast math), so both rank the same scores. The pack's
// exponentials are summed against its own max with one rescale per pack. A pack
// without NaN finds its own first maximum and offers only that.
template <typename T, int N>
__device__ __forceinline__ void ScorePack(const Pack<T, N>& pack, int64_t p, float scale,
                                          bool greedy, float bar, uint64_t key, RowState* s) {
  float v[N];
#pragma unroll
  for (int i = 0; i < N; ++i) v[i] = ToFloat(pack.v[i]);
  if (scale != 1.f) {
#pragma unroll
    for (int i = 0; i < N; ++i) v[i] = v[i] / scale;
  }
  float pack_max = -INFINITY;  // NaN ignored
#pragma unroll
  for (int i = 0; i < N; ++i) pack_max = fmaxf(pack_max, v[i]);
  // Relative to a finite reference, so -inf logits add 0 and NaN stays NaN.
  const float reference = pack_max == -INFINITY ? 0.f : pack_max;
  float pack_sum = 0.f;
#pragma unroll
  for (int i = 0; i < N; ++i) pack_sum += __expf(v[i] - reference);
  s->lse = Combine(s->lse, {reference, pack_sum});
  // The largest v, NaN if any v is. Only a NaN (or +inf, as inf - inf) makes the sum NaN,
  // so the common pack needs no test per value.
  float v_max = pack_max;
  if (isnan(pack_sum)) {
#pragma unroll
    for (int i = 0; i < N; ++i) v_max = isnan(v[i]) ? v[i] : v_max;
  }
  const long long first_token = p * N;
  if (greedy) {
    if (isnan(v_max)) {
#pragma unroll
      for (int i = 0; i < N; ++i) Offer(v[i], first_token + i, &s->best);
      return;
    }
    int best = 0;
    float best_score = v[0];
#pragma unroll
    for (int i = 1; i < N; ++i) {
      if (v[i] > best_score) {
        best_score = v[i];
        best = i;
      }
    }
    Offer(best_score, first_token + best, &s->best);
    return;
  }
  const float u_bar = UniformBar(bar, v_max);
  if (u_bar > 1.f) return;
  // Most packs have no token at the bar: the per-token scan below would skip them all.
  if constexpr (N % 2 == 0) {
    if (!SomeUniformReaches<N>(key, static_cast<uint32_t>(first_token), u_bar)) return;
  }
  float best_score = -INFINITY;
  int best = -1;
  uint64_t pair_bits = 0;
#pragma unroll
  for (int i = 0; i < N; ++i) {
    const uint32_t token = static_cast<uint32_t>(first_token + i);
    if (i % 2 == 0 || N == 1) pair_bits = SamplingPairBits(key, token);
    const float u = SamplingUniformFromBits(pair_bits, token);
    if (u < u_bar) continue;
    const float score = v[i] + SamplingGumbelFromUniform(u);
    if (isnan(score)) {
      Offer(score, first_token + i, &s->best);
      return;  // nothing later in the pack ranks above it
    }
    if (best < 0 || score > best_score) {
      best_score = score;
      best = i;
    }
  }
  if (best >= 0) Offer(best_score, first_token + best, &s->best);
}

// One row's scan over packs [begin, end): thread t takes packs begin + t, + kThreads,
// ... (tokens in increasing order per thread, so a tie keeps the thread's earlier
// token), loading kPacksInFlight of them before scoring them. The loop runs
// warp-uniformly (lanes past `end` idle) so the warp can share its best score, the bar
// sampled rows prune their noise against.
template <typename T, int N>
__device__ RowState ScanRow(const T* __restrict__ x, int64_t begin, int64_t end, float t,
                            uint64_t key) {
  const bool greedy = !(t > 0.f);
  const float scale = greedy ? 1.f : t;
  const Pack<T, N>* packs = reinterpret_cast<const Pack<T, N>*>(x);
  RowState s = {{-INFINITY, kNoToken}, {-INFINITY, 0.f}};
  const int64_t warp_begin = begin + threadIdx.x - threadIdx.x % 32;
  for (int64_t base = warp_begin; base < end; base += kPacksInFlight * kThreads) {
    const int64_t first = base + threadIdx.x % 32;
    Pack<T, N> loaded[kPacksInFlight];
#pragma unroll
    for (int j = 0; j < kPacksInFlight; ++j) {
      if (first + j * kThreads < end) loaded[j] = packs[first + j * kThreads];
    }
    const float bar = greedy ? 0.f : WarpBestScore(s.best.score);
#pragma unroll
    for (int j = 0; j < kPacksInFlight; ++j) {
      const int64_t p = first + j * kThreads;
      if (p < end) ScorePack<T, N>(loaded[j], p, scale, greedy, bar, key, &s);
    }
  }
  return s;
}

// The token's log_softmax(x / T) from the row's reduced state.
template <typename T>
__device__ __forceinline__ void WriteDraw(const T* x, float t, RowState s, int64_t* token,
                                          float* log_prob) {
  const float scale = t > 0.f ? t : 1.f;
  *token = s.best.token;
  *log_prob = ToFloat(x[s.best.token]) / scale - (s.lse.max + logf(s.lse.sum));
}

// Grid (rows, splits): block (row, k) scans the k-th of `splits` equal runs of the row's
// packs. With one split it writes the draw; otherwise its state goes to
// partials[row * splits + k] for MergeSplitsKernel. Both kernels are launched dependent
// (models/cuda/dependent_launch.cuh).
template <typename T, int N>
__global__ void __launch_bounds__(kThreads, 2)
    SampleUnfilteredKernel(const T* __restrict__ logits, const float* __restrict__ temperature,
                           const int64_t* __restrict__ seed, const int64_t* __restrict__ step,
                           int64_t vocab, int64_t* tokens, float* log_probs,
                           RowState* partials) {
  const int64_t row = blockIdx.x;
  const T* x = logits + row * vocab;
  WaitForPriorKernels();
  LetDependentsStart();
  const uint64_t key =
      SamplingStreamKey(static_cast<uint64_t>(seed[row]), static_cast<uint64_t>(step[row]));
  const int64_t packs = vocab / N, per_split = (packs + gridDim.y - 1) / gridDim.y;
  const int64_t begin = blockIdx.y * per_split;
  const int64_t end = begin + per_split < packs ? begin + per_split : packs;
  const RowState s = BlockReduce(ScanRow<T, N>(x, begin, end, temperature[row], key));
  if (threadIdx.x != 0) return;
  if (gridDim.y == 1) {
    WriteDraw(x, temperature[row], s, tokens + row, log_probs + row);
  } else {
    partials[row * gridDim.y + blockIdx.y] = s;
  }
}

// One warp per row merges its `splits` (<= 32) partial states and writes the draw.
template <typename T>
__global__ void MergeSplitsKernel(const T* __restrict__ logits,
                                  const float* __restrict__ temperature,
                                  const RowState* __restrict__ partials, int splits,
                                  int64_t vocab, int64_t* tokens, float* log_probs) {
  const int64_t row = blockIdx.x;
  WaitForPriorKernels();
  RowState s = threadIdx.x < splits ? partials[row * splits + threadIdx.x]
                                    : RowState{{-INFINITY, kNoToken}, {-INFINITY, 0.f}};
  s = WarpReduce(s);
  if (threadIdx.x == 0) {
    WriteDraw(logits + row * vocab, temperature[row], s, tokens + row, log_probs + row);
  }
}

// Blocks per row: as many as fill the device's resident-block slots in one wave (at
// most 32, and each with at least a pack per thread).
template <typename T, int N>
int Splits(int64_t rows, int64_t vocab) {
  int device = 0, sms = 0, blocks_per_sm = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, SampleUnfilteredKernel<T, N>,
                                                kThreads, 0);
  const int64_t slots = static_cast<int64_t>(sms) * std::max(blocks_per_sm, 1);
  const int64_t by_work = vocab / N / kThreads;
  return static_cast<int>(std::max<int64_t>(1, std::min({int64_t{32}, slots / rows, by_work})));
}

template <typename T>
bool PacksRows(const void* logits, int64_t vocab) {
  return models::cuda::Packs16<T>(vocab, {logits});
}

template <typename T>
int64_t WorkspaceBytes(const void* logits, int64_t rows, int64_t vocab) {
  constexpr int kPack = 16 / sizeof(T);
  const int splits = PacksRows<T>(logits, vocab) ? Splits<T, kPack>(rows, vocab)
                                                 : Splits<T, 1>(rows, vocab);
  return splits > 1 ? rows * splits * static_cast<int64_t>(sizeof(RowState)) : 0;
}

template <typename T, int N>
void SampleUnfiltered(const void* logits_in, const float* temperature, const int64_t* seed,
                      const int64_t* step, int64_t rows, int64_t vocab, int64_t* tokens,
                      float* log_probs, void* workspace, cudaStream_t stream) {
  const T* logits = static_cast<const T*>(logits_in);
  const int splits = Splits<T, N>(rows, vocab);
  RowState* partials = static_cast<RowState*>(workspace);
  LaunchDependent(SampleUnfilteredKernel<T, N>, dim3(static_cast<unsigned>(rows), splits),
                  dim3(kThreads), 0, stream, logits, temperature, seed, step, vocab, tokens,
                  log_probs, partials);
  if (splits > 1) {
    LaunchDependent(MergeSplitsKernel<T>, dim3(static_cast<unsigned>(rows)), dim3(32), 0, stream,
                    logits, temperature, partials, splits, vocab, tokens, log_probs);
  }
}

template <typename T>
void SampleUnfiltered(const void* logits, const float* temperature, const int64_t* seed,
                      const int64_t* step, int64_t rows, int64_t vocab, int64_t* tokens,
                      float* log_probs, void* workspace, cudaStream_t stream) {
  constexpr int kPack = 16 / sizeof(T);
  const auto launch = PacksRows<T>(logits, vocab) ? SampleUnfiltered<T, kPack>
                                                  : SampleUnfiltered<T, 1>;
  launch(logits, temperature, seed, step, rows, vocab, tokens, log_probs, workspace, stream);
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

int64_t SampleTokensUnfilteredWorkspaceBytes(ElementType dtype, const void* logits,
                                              int64_t rows, int64_t vocab) {
  if (rows == 0) return 0;
  int64_t bytes = 0;
  models::cuda::DispatchElementType(dtype, [&](auto element) {
    bytes = WorkspaceBytes<decltype(element)>(logits, rows, vocab);
  });
  return bytes;
}

void LaunchSampleTokensUnfiltered(ElementType dtype, const void* logits,
                                  const float* temperature, const int64_t* seed,
                                  const int64_t* step, int64_t rows, int64_t vocab,
                                  int64_t* tokens, float* log_probs, void* workspace,
                                  cudaStream_t stream) {
  if (rows == 0) return;
  models::cuda::DispatchElementType(dtype, [&](auto element) {
    SampleUnfiltered<decltype(element)>(logits, temperature, seed, step, rows, vocab, tokens,
                                        log_probs, workspace, stream);
  });
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
