#include "models/cuda/decode_kernels.h"

#include <cstdint>
#include <initializer_list>

#include "models/cuda/dependent_launch.cuh"
#include "models/cuda/element_access.cuh"
#include "models/cuda/rope_math.cuh"
#include "models/cuda/swiglu_math.cuh"

namespace rollout::models::cuda {
namespace {

constexpr int kThreads = 256;

// Pack c (counted from the tensor's start) of the sum of float32 split-K partials
// [splits, rows, hidden] (`split_stride` = rows * hidden), summed in slice order and
// rounded once.
template <typename T, int N>
__device__ __forceinline__ Pack<T, N> SumOfPartials(const float* __restrict__ partials,
                                                    int splits, int64_t split_stride,
                                                    int64_t c) {
  float total[N] = {};
  for (int s = 0; s < splits; ++s) {
    const float* p = partials + s * split_stride + c * N;
    if constexpr (N % 4 == 0) {
#pragma unroll
      for (int i = 0; i < N; i += 4) {
        const float4 four = *reinterpret_cast<const float4*>(p + i);
        total[i] += four.x;
        total[i + 1] += four.y;
        total[i + 2] += four.z;
        total[i + 3] += four.w;
      }
    } else {
#pragma unroll
      for (int i = 0; i < N; ++i) total[i] += p[i];
    }
  }
  Pack<T, N> out;
#pragma unroll
  for (int i = 0; i < N; ++i) out.v[i] = FromFloat<T>(total[i]);
  return out;
}

// One block per row, thread t taking packs t, t + blockDim, ... The scaling pass reads
// x again from where the first pass left it (the rounded sum, written by the same
// thread, or the residual). kPartials: the delta is SumOfPartials(partials, ...), and
// `delta` is unused. Launched dependent (models/cuda/dependent_launch.cuh): every input
// may come from the kernel before.
template <typename T, int N, bool kPartials>
__global__ void AddRmsNorm(const T* __restrict__ residual, const T* __restrict__ delta,
                           const float* __restrict__ partials, int splits,
                           const T* __restrict__ weight, int64_t hidden, float eps, T* sum,
                           T* __restrict__ normed) {
  using P = Pack<T, N>;
  __shared__ float warp_sums[32];
  const int64_t packs = hidden / N;
  const int64_t row = int64_t(blockIdx.x) * packs;
  const P* r = reinterpret_cast<const P*>(residual) + row;
  const P* d = delta != nullptr ? reinterpret_cast<const P*>(delta) + row : nullptr;
  P* s = reinterpret_cast<P*>(sum) + row;
  const bool has_delta = kPartials || delta != nullptr;
  WaitForPriorKernels();
  LetDependentsStart();
  float squares = 0.f;
  for (int64_t c = threadIdx.x; c < packs; c += blockDim.x) {
    const P r_pack = r[c];
    if (has_delta) {
      P d_pack;
      if constexpr (kPartials) {
        d_pack = SumOfPartials<T, N>(partials, splits, int64_t(gridDim.x) * hidden, row + c);
      } else {
        d_pack = d[c];
      }
      P s_pack;
#pragma unroll
      for (int i = 0; i < N; ++i) {
        s_pack.v[i] = FromFloat<T>(ToFloat(r_pack.v[i]) + ToFloat(d_pack.v[i]));
        const float x = ToFloat(s_pack.v[i]);
        squares += x * x;
      }
      s[c] = s_pack;
    } else {
#pragma unroll
      for (int i = 0; i < N; ++i) squares += ToFloat(r_pack.v[i]) * ToFloat(r_pack.v[i]);
    }
  }
  for (int offset = 16; offset > 0; offset >>= 1) squares += __shfl_xor_sync(0xffffffff, squares, offset);
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = squares;
  __syncthreads();
  float total = 0.f;
  for (int w = 0; w < int(blockDim.x / 32); ++w) total += warp_sums[w];
  const float scale = rsqrtf(total / float(hidden) + eps);
  const P* x = has_delta ? s : r;
  const P* w = reinterpret_cast<const P*>(weight);
  P* out = reinterpret_cast<P*>(normed) + row;
  for (int64_t c = threadIdx.x; c < packs; c += blockDim.x) {
    const P x_pack = x[c], w_pack = w[c];
    P o_pack;
#pragma unroll
    for (int i = 0; i < N; ++i) o_pack.v[i] = FromFloat<T>(ToFloat(x_pack.v[i]) * scale * ToFloat(w_pack.v[i]));
    out[c] = o_pack;
  }
}

// One block per token; its threads take the (q_heads + kv_heads) * dim rotated values.
template <typename T>
__global__ void RopeQk(const T* __restrict__ qkv, int64_t qkv_stride, const T* __restrict__ cos,
                       const T* __restrict__ sin, int q_heads, int kv_heads, int dim,
                       T* __restrict__ q_out, T* __restrict__ k_out) {
  const int64_t token = blockIdx.x;
  const int half = dim / 2;
  const T* row = qkv + token * qkv_stride;  // k heads follow the q heads
  const T* c = cos + token * dim;
  const T* s = sin + token * dim;
  for (int i = threadIdx.x; i < (q_heads + kv_heads) * dim; i += blockDim.x) {
    const int head = i / dim, j = i % dim;
    const T* x = row + head * dim;
    const bool first = j < half;
    const T v = RotateHalfElement<T>(ToFloat(x[j]), ToFloat(first ? x[j + half] : x[j - half]),
                                     first, ToFloat(c[j]), ToFloat(s[j]));
    if (head < q_heads) {
      q_out[(token * q_heads + head) * dim + j] = v;
    } else {
      k_out[(token * kv_heads + head - q_heads) * dim + j] = v;
    }
  }
}

// One warp per head: grid (head groups of kHeadsPerBlock, tokens), lane l taking the
// head's elements l, l + 32, ...
constexpr int kHeadsPerBlock = kThreads / 32;

template <typename T>
__global__ void QkHeadRmsNorm(T* qkv, int64_t qkv_stride, const T* __restrict__ q_weight,
                              const T* __restrict__ k_weight, int q_heads, int kv_heads, int dim,
                              float eps) {
  const int head = blockIdx.x * kHeadsPerBlock + threadIdx.x / 32, lane = threadIdx.x % 32;
  if (head >= q_heads + kv_heads) return;
  T* x = qkv + int64_t(blockIdx.y) * qkv_stride + int64_t(head) * dim;
  const T* weight = head < q_heads ? q_weight : k_weight;
  float squares = 0.f;
  for (int j = lane; j < dim; j += 32) squares += ToFloat(x[j]) * ToFloat(x[j]);
  for (int offset = 16; offset > 0; offset >>= 1) squares += __shfl_xor_sync(0xffffffff, squares, offset);
  const float scale = rsqrtf(squares / float(dim) + eps);
  for (int j = lane; j < dim; j += 32) x[j] = FromFloat<T>(ToFloat(x[j]) * scale * ToFloat(weight[j]));
}

// Grid (column packs, tokens), both strided.
template <typename T, int N>
__global__ void SwigluHalves(const T* __restrict__ gate_up, int64_t tokens, int64_t width,
                             T* __restrict__ out) {
  using P = Pack<T, N>;
  const int64_t packs = width / N;
  for (int64_t token = blockIdx.y; token < tokens; token += gridDim.y) {
    const P* gate = reinterpret_cast<const P*>(gate_up) + token * 2 * packs;
    const P* up = gate + packs;
    P* o = reinterpret_cast<P*>(out) + token * packs;
    for (int64_t c = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; c < packs;
         c += int64_t(gridDim.x) * blockDim.x) {
      const P g_pack = gate[c], u_pack = up[c];
      P o_pack;
#pragma unroll
      for (int i = 0; i < N; ++i) {
        const float g = ToFloat(g_pack.v[i]);
        o_pack.v[i] = FromFloat<T>(SiluTimes(g, ToFloat(u_pack.v[i])));
      }
      o[c] = o_pack;
    }
  }
}

// The add + RMSNorm launch for a delta tensor (or none) or, with `partials`, a sum of
// split-K partials.
void LaunchAddRmsNormFrom(ElementType dtype, const void* residual, const void* delta,
                          const float* partials, int64_t splits, const void* weight, int64_t rows,
                          int64_t hidden, float eps, void* sum, void* normed, cudaStream_t stream) {
  if (rows == 0) return;
  DispatchElementType(dtype, [&](auto zero) {
    using T = decltype(zero);
    constexpr int kPack = 16 / sizeof(T);
    const bool packed = Packs16<T>(hidden, {residual, delta, partials, weight, sum, normed});
    const int64_t packs = packed ? hidden / kPack : hidden;
    const int threads = static_cast<int>(packs >= 1024 ? 1024 : (packs + 31) / 32 * 32);
    auto launch = [&](auto kernel) {
      LaunchDependent(kernel, dim3(static_cast<unsigned>(rows)), dim3(threads), 0, stream,
                      static_cast<const T*>(residual), static_cast<const T*>(delta), partials,
                      static_cast<int>(splits), static_cast<const T*>(weight), hidden, eps,
                      static_cast<T*>(sum), static_cast<T*>(normed));
    };
    if (partials != nullptr) {
      packed ? launch(AddRmsNorm<T, kPack, true>) : launch(AddRmsNorm<T, 1, true>);
    } else {
      packed ? launch(AddRmsNorm<T, kPack, false>) : launch(AddRmsNorm<T, 1, false>);
    }
  });
}

}  // namespace

void LaunchAddRmsNorm(ElementType dtype, const void* residual, const void* delta,
                      const void* weight, int64_t rows, int64_t hidden, float eps, void* sum,
                      void* normed, cudaStream_t stream) {
  LaunchAddRmsNormFrom(dtype, residual, delta, nullptr, 0, weight, rows, hidden, eps, sum,
                       normed, stream);
}

void LaunchAddPartialsRmsNorm(ElementType dtype, const void* residual, const float* partials,
                              int64_t splits, const void* weight, int64_t rows, int64_t hidden,
                              float eps, void* sum, void* normed, cudaStream_t stream) {
  LaunchAddRmsNormFrom(dtype, residual, nullptr, partials, splits, weight, rows, hidden, eps,
                       sum, normed, stream);
}

void LaunchRopeQk(ElementType dtype, const void* qkv, int64_t qkv_stride, const void* cos,
                  const void* sin, int64_t tokens, int64_t q_heads, int64_t kv_heads, int64_t dim,
                  void* q_out, void* k_out, cudaStream_t stream) {
  if (tokens == 0) return;
  DispatchElementType(dtype, [&](auto zero) {
    using T = decltype(zero);
    RopeQk<T><<<static_cast<unsigned>(tokens), kThreads, 0, stream>>>(
        static_cast<const T*>(qkv), qkv_stride, static_cast<const T*>(cos),
        static_cast<const T*>(sin), int(q_heads), int(kv_heads), int(dim), static_cast<T*>(q_out),
        static_cast<T*>(k_out));
  });
}

void LaunchQkHeadRmsNorm(ElementType dtype, void* qkv, int64_t qkv_stride, const void* q_weight,
                         const void* k_weight, int64_t tokens, int64_t q_heads, int64_t kv_heads,
                         int64_t dim, float eps, cudaStream_t stream) {
  if (tokens == 0) return;
  DispatchElementType(dtype, [&](auto zero) {
    using T = decltype(zero);
    const dim3 grid(static_cast<unsigned>((q_heads + kv_heads + kHeadsPerBlock - 1) / kHeadsPerBlock),
                    static_cast<unsigned>(tokens));
    QkHeadRmsNorm<T><<<grid, kThreads, 0, stream>>>(
        static_cast<T*>(qkv), qkv_stride, static_cast<const T*>(q_weight),
        static_cast<const T*>(k_weight), int(q_heads), int(kv_heads), int(dim), eps);
  });
}

void LaunchSwigluHalves(ElementType dtype, const void* gate_up, int64_t tokens, int64_t width,
                        void* out, cudaStream_t stream) {
  if (tokens == 0 || width == 0) return;
  DispatchElementType(dtype, [&](auto zero) {
    using T = decltype(zero);
    constexpr int kPack = 16 / sizeof(T);
    const bool packed = Packs16<T>(width, {gate_up, out});
    const int64_t packs = packed ? width / kPack : width;
    const dim3 grid(static_cast<unsigned>((packs + kThreads - 1) / kThreads),
                    static_cast<unsigned>(tokens < 65535 ? tokens : 65535));
    auto launch = [&](auto kernel) {
      kernel<<<grid, kThreads, 0, stream>>>(static_cast<const T*>(gate_up), tokens, width,
                                            static_cast<T*>(out));
    };
    packed ? launch(SwigluHalves<T, kPack>) : launch(SwigluHalves<T, 1>);
  });
}

}  // namespace rollout::models::cuda
