#include "models/cuda/token_scores_kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>

#include "models/cuda/element_access.cuh"

namespace rollout::models::cuda {
namespace {

constexpr int kThreads = 1024;
constexpr int kWarps = kThreads / 32;

// Running softmax statistics relative to a running max m:
//   sum = sum_j exp(x_j - m),  weighted = sum_j exp(x_j - m) * x_j,
//   squares = sum_j exp(x_j - m)^2
struct Stats {
  float max;
  float sum;
  float weighted;
  float squares;

  // The same statistics relative to a max m >= max.
  __device__ __forceinline__ Stats RelativeTo(float m) const {
    const float c = __expf(max - m);
    return {m, sum * c, weighted * c, squares * c * c};
  }
};

__device__ __forceinline__ Stats Combine(Stats a, Stats b) {
  if (b.sum == 0.f) return a;
  if (a.sum == 0.f) return b;
  const float m = fmaxf(a.max, b.max);
  a = a.RelativeTo(m);
  b = b.RelativeTo(m);
  return {m, a.sum + b.sum, a.weighted + b.weighted, a.squares + b.squares};
}

__device__ __forceinline__ Stats ShuffleDown(const Stats& s, int offset) {
  return {__shfl_down_sync(0xffffffff, s.max, offset), __shfl_down_sync(0xffffffff, s.sum, offset),
          __shfl_down_sync(0xffffffff, s.weighted, offset), __shfl_down_sync(0xffffffff, s.squares, offset)};
}

__device__ Stats BlockReduce(Stats s) {
  __shared__ Stats partial[kWarps];
  for (int offset = 16; offset > 0; offset /= 2) s = Combine(s, ShuffleDown(s, offset));
  const int warp = threadIdx.x / 32;
  if (threadIdx.x % 32 == 0) partial[warp] = s;
  __syncthreads();
  if (warp == 0) {
    s = threadIdx.x < kWarps ? partial[threadIdx.x] : Stats{-INFINITY, 0.f, 0.f, 0.f};
    for (int offset = 16; offset > 0; offset /= 2) s = Combine(s, ShuffleDown(s, offset));
  }
  return s;  // valid in thread 0
}

// Packs (of N elements, 16 bytes when the rows allow it) each thread loads before it
// uses them: enough bytes in flight to keep HBM busy with one row per block.
constexpr int kPacksInFlight = 2;

// Thread threadIdx.x's share of a row of `packs` packs (a vocabulary fits in int): calls
// fold(pack, c) for packs c = threadIdx.x + k kThreads, kPacksInFlight of them loaded
// before the first is used.
template <typename T, int N, typename Fold>
__device__ __forceinline__ void ForEachPack(const T* row, int packs, Fold&& fold) {
  const Pack<T, N>* p = reinterpret_cast<const Pack<T, N>*>(row);
  for (int first = threadIdx.x; first < packs; first += kThreads * kPacksInFlight) {
    Pack<T, N> loaded[kPacksInFlight];
#pragma unroll
    for (int k = 0; k < kPacksInFlight; ++k) {
      const int c = first + k * kThreads;
      if (c < packs) loaded[k] = p[c];
    }
#pragma unroll
    for (int k = 0; k < kPacksInFlight; ++k) {
      const int c = first + k * kThreads;
      if (c < packs) fold(loaded[k], c);
    }
  }
}

template <typename T, int N>
__global__ void __launch_bounds__(kThreads, 2)
    ForwardKernel(const T* __restrict__ logits, const int64_t* __restrict__ targets,
                  int64_t vocab, float* log_probs, float* lse_out, float* entropy,
                  float* sum_pi_squared) {
  const int64_t row = blockIdx.x;
  const T* x = logits + row * vocab;
  Stats s = {-INFINITY, 0.f, 0.f, 0.f};
  ForEachPack<T, N>(x, int(vocab / N), [&](const Pack<T, N>& pack, int) {
    float pack_max = -INFINITY;
#pragma unroll
    for (int i = 0; i < N; ++i) pack_max = fmaxf(pack_max, ToFloat(pack.v[i]));
    if (pack_max > s.max) s = s.RelativeTo(pack_max);  // rescale once a pack, not once an element
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const float v = ToFloat(pack.v[i]);
      const float e = __expf(v - s.max);
      s.sum += e;
      s.weighted += e * v;
      s.squares += e * e;
    }
  });
  s = BlockReduce(s);
  if (threadIdx.x == 0) {
    const float lse = s.max + logf(s.sum);
    lse_out[row] = lse;
    log_probs[row] = ToFloat(x[targets[row]]) - lse;
    entropy[row] = lse - s.weighted / s.sum;
    sum_pi_squared[row] = s.squares / (s.sum * s.sum);
  }
}

template <typename T, int N>
__global__ void __launch_bounds__(kThreads, 2)
    BackwardKernel(const T* __restrict__ logits, const int64_t* __restrict__ targets,
                   const float* __restrict__ lse, const float* __restrict__ entropy,
                   const float* grad_log_probs, const float* grad_entropy, int64_t vocab,
                   T* __restrict__ grad_logits) {
  const int64_t row = blockIdx.x;
  const T* x = logits + row * vocab;
  Pack<T, N>* gx = reinterpret_cast<Pack<T, N>*>(grad_logits + row * vocab);
  const float l = lse[row];
  const float mean_x = l - entropy[row];  // E_p[x]
  const float g1 = grad_log_probs != nullptr ? grad_log_probs[row] : 0.f;
  const float g2 = grad_entropy != nullptr ? grad_entropy[row] : 0.f;
  const int target = int(targets[row]);  // vocab < 2^31
  ForEachPack<T, N>(x, int(vocab / N), [&](const Pack<T, N>& pack, int c) {
    Pack<T, N> out;
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const float v = ToFloat(pack.v[i]);
      const float p = __expf(v - l);
      // d logp_t / dx_j = [j == t] - p_j;  d H / dx_j = -p_j (x_j - E_p[x])
      float g = -g1 * p - g2 * p * (v - mean_x);
      if (c * N + i == target) g += g1;
      out.v[i] = FromFloat<T>(g);
    }
    gx[c] = out;
  });
}

// Both launch with 16-byte packs when the rows allow it (Packs16), else single elements.
template <typename T>
void Forward(const void* logits, const int64_t* targets, int64_t rows, int64_t vocab,
             float* log_probs, float* lse, float* entropy, float* sum_pi_squared,
             cudaStream_t stream) {
  if (rows == 0) return;
  auto launch = [&](auto kernel) {
    kernel<<<rows, kThreads, 0, stream>>>(static_cast<const T*>(logits), targets, vocab,
                                          log_probs, lse, entropy, sum_pi_squared);
  };
  constexpr int kPack = 16 / sizeof(T);
  Packs16<T>(vocab, {logits}) ? launch(ForwardKernel<T, kPack>) : launch(ForwardKernel<T, 1>);
}

template <typename T>
void Backward(const void* logits, const int64_t* targets, const float* lse, const float* entropy,
              const float* grad_log_probs, const float* grad_entropy, int64_t rows,
              int64_t vocab, void* grad_logits, cudaStream_t stream) {
  if (rows == 0) return;
  auto launch = [&](auto kernel) {
    kernel<<<rows, kThreads, 0, stream>>>(static_cast<const T*>(logits), targets, lse, entropy,
                                          grad_log_probs, grad_entropy, vocab,
                                          static_cast<T*>(grad_logits));
  };
  constexpr int kPack = 16 / sizeof(T);
  Packs16<T>(vocab, {logits, grad_logits}) ? launch(BackwardKernel<T, kPack>)
                                           : launch(BackwardKernel<T, 1>);
}

}  // namespace

void LaunchTokenScoresForward(ElementType dtype, const void* logits, const int64_t* targets,
                              int64_t rows, int64_t vocab, float* log_probs, float* lse,
                              float* entropy, float* sum_pi_squared, cudaStream_t stream) {
  switch (dtype) {
    case ElementType::kFloat32:
      return Forward<float>(logits, targets, rows, vocab, log_probs, lse, entropy, sum_pi_squared,
                            stream);
    case ElementType::kBFloat16:
      return Forward<__nv_bfloat16>(logits, targets, rows, vocab, log_probs, lse, entropy,
                                    sum_pi_squared, stream);
    case ElementType::kFloat16:
      return Forward<__half>(logits, targets, rows, vocab, log_probs, lse, entropy, sum_pi_squared,
                             stream);
  }
}

void LaunchTokenScoresBackward(ElementType dtype, const void* logits, const int64_t* targets,
                               const float* lse, const float* entropy,
                               const float* grad_log_probs, const float* grad_entropy,
                               int64_t rows, int64_t vocab, void* grad_logits,
                               cudaStream_t stream) {
  switch (dtype) {
    case ElementType::kFloat32:
      return Backward<float>(logits, targets, lse, entropy, grad_log_probs, grad_entropy, rows,
                             vocab, grad_logits, stream);
    case ElementType::kBFloat16:
      return Backward<__nv_bfloat16>(logits, targets, lse, entropy, grad_log_probs, grad_entropy,
                                     rows, vocab, grad_logits, stream);
    case ElementType::kFloat16:
      return Backward<__half>(logits, targets, lse, entropy, grad_log_probs, grad_entropy, rows,
                              vocab, grad_logits, stream);
  }
}

}  // namespace rollout::models::cuda
