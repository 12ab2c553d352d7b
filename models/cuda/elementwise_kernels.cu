#include "models/cuda/elementwise_kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "models/cuda/element_access.cuh"
#include "models/cuda/swiglu_math.cuh"

namespace rollout::models::cuda {
namespace {

constexpr int kThreads = 256;

int Blocks(int64_t count) {
  const int64_t blocks = (count + kThreads - 1) / kThreads;
  return static_cast<int>(blocks < 65535 * 16 ? blocks : 65535 * 16);
}

// Each thread takes packs of N elements (16-byte loads when the tensors allow, N = 1
// otherwise): these kernels move tens of megabytes a call in training and run at the
// memory bandwidth only with wide loads. Rows of `width` elements; gate/up rows
// `in_stride` apart (column blocks of one product), out and grad_out contiguous,
// grad_gate/grad_up rows `grad_stride` apart.
template <typename T, int N>
__global__ void SwigluForward(const T* __restrict__ gate, const T* __restrict__ up, int64_t rows,
                              int64_t width, int64_t in_stride, T* __restrict__ out) {
  using P = Pack<T, N>;
  const int64_t packs_per_row = width / N;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < rows * packs_per_row;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t in = i / packs_per_row * in_stride + i % packs_per_row * N;
    const P g = *reinterpret_cast<const P*>(gate + in), u = *reinterpret_cast<const P*>(up + in);
    P o;
#pragma unroll
    for (int k = 0; k < N; ++k) o.v[k] = FromFloat<T>(SiluTimes(ToFloat(g.v[k]), ToFloat(u.v[k])));
    reinterpret_cast<P*>(out)[i] = o;
  }
}

template <typename T, int N>
__global__ void SwigluBackward(const T* __restrict__ gate, const T* __restrict__ up,
                               const T* __restrict__ grad_out, int64_t rows, int64_t width,
                               int64_t in_stride, int64_t grad_stride, T* __restrict__ grad_gate,
                               T* __restrict__ grad_up) {
  using P = Pack<T, N>;
  const int64_t packs_per_row = width / N;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < rows * packs_per_row;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t row = i / packs_per_row, column = i % packs_per_row * N;
    const int64_t in = row * in_stride + column, grad = row * grad_stride + column;
    const P g_pack = *reinterpret_cast<const P*>(gate + in);
    const P u_pack = *reinterpret_cast<const P*>(up + in);
    const P go_pack = reinterpret_cast<const P*>(grad_out)[i];
    P gg, gu;
#pragma unroll
    for (int k = 0; k < N; ++k) {
      const float g = ToFloat(g_pack.v[k]), go = ToFloat(go_pack.v[k]);
      const float s = Sigmoid(g);
      gu.v[k] = FromFloat<T>(go * g * s);
      // silu'(g) = s * (1 + g * (1 - s))
      gg.v[k] = FromFloat<T>(go * ToFloat(u_pack.v[k]) * s * (1.f + g * (1.f - s)));
    }
    *reinterpret_cast<P*>(grad_gate + grad) = gg;
    *reinterpret_cast<P*>(grad_up + grad) = gu;
  }
}

// Thread p takes N consecutive dimensions j of the first half of one (token, head) and
// their partners j + half, which the rotation pairs them with:
//   forward:  out[j] = x[j] c[j] - x[j+h] s[j],        out[j+h] = x[j+h] c[j+h] + x[j] s[j+h]
//   backward: out[j] = x[j] c[j] + x[j+h] s[j+h],      out[j+h] = x[j+h] c[j+h] - x[j] s[j]
// (the transpose). N divides half.
template <typename T, int N>
__global__ void Rope(const T* __restrict__ x, int64_t x_token_stride, const T* __restrict__ cos,
                     const T* __restrict__ sin, int64_t tokens, int64_t heads, int64_t dim,
                     bool backward, T* __restrict__ out) {
  using P = Pack<T, N>;
  const int64_t half = dim / 2, packs_per_half = half / N;
  const int64_t packs = tokens * heads * packs_per_half;
  for (int64_t p = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; p < packs;
       p += int64_t(gridDim.x) * blockDim.x) {
    const int64_t row = p / packs_per_half;  // token * heads + head
    const int64_t j = (p % packs_per_half) * N;
    const int64_t angles = row / heads * dim;
    const int64_t first = row * dim + j, second = first + half;  // in out
    const int64_t x_first = row / heads * x_token_stride + row % heads * dim + j;
    const P x1 = *reinterpret_cast<const P*>(x + x_first);
    const P x2 = *reinterpret_cast<const P*>(x + x_first + half);
    const P c1 = *reinterpret_cast<const P*>(cos + angles + j);
    const P c2 = *reinterpret_cast<const P*>(cos + angles + j + half);
    const P s1 = *reinterpret_cast<const P*>(sin + angles + j);
    const P s2 = *reinterpret_cast<const P*>(sin + angles + j + half);
    P o1, o2;
#pragma unroll
    for (int k = 0; k < N; ++k) {
      const float a = ToFloat(x1.v[k]), b = ToFloat(x2.v[k]);
      if (!backward) {
        o1.v[k] = FromFloat<T>(a * ToFloat(c1.v[k]) + -b * ToFloat(s1.v[k]));
        o2.v[k] = FromFloat<T>(b * ToFloat(c2.v[k]) + a * ToFloat(s2.v[k]));
      } else {
        o1.v[k] = FromFloat<T>(a * ToFloat(c1.v[k]) + b * ToFloat(s2.v[k]));
        o2.v[k] = FromFloat<T>(b * ToFloat(c2.v[k]) - a * ToFloat(s1.v[k]));
      }
    }
    *reinterpret_cast<P*>(out + first) = o1;
    *reinterpret_cast<P*>(out + second) = o2;
  }
}

// Rows longer than this do not fit the backward's shared-memory weight-gradient sums.
constexpr int64_t kRmsNormMaxHidden = 12288;  // 48 KiB of float32

// (sum of a, sum of b) over the block, in every thread; `scratch` is reusable on return.
__device__ __forceinline__ float2 BlockSum2(float2 v, float2* scratch) {
  for (int offset = 16; offset > 0; offset /= 2) {
    v.x += __shfl_xor_sync(0xffffffff, v.x, offset);
    v.y += __shfl_xor_sync(0xffffffff, v.y, offset);
  }
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
  __syncthreads();
  float2 total = {0.f, 0.f};
  for (int w = 0; w < int(blockDim.x / 32); ++w) {
    total.x += scratch[w].x;
    total.y += scratch[w].y;
  }
  __syncthreads();
  return total;
}

// Block b takes rows b, b + gridDim.x, ...; thread t the packs t, t + blockDim.x, ... of
// each, in two passes (the sums, then the gradient; the second reads the row again,
// from cache). A thread's weight-gradient sums live in shared memory (dynamic, hidden
// floats) at its own columns, element i of pack c at i * packs + c: consecutive threads
// then use consecutive banks (c * N + i put N-way bank conflicts on every update). See
// LaunchRmsNormBackward.
template <typename T, int N>
__global__ void RmsNormBackward(const T* __restrict__ x, const T* __restrict__ weight,
                                const T* __restrict__ grad_normed,
                                const T* __restrict__ grad_sum, int64_t rows, int64_t hidden,
                                float eps, T* __restrict__ grad_x,
                                float* __restrict__ weight_grad_partials) {
  using P = Pack<T, N>;
  __shared__ float2 scratch[32];
  extern __shared__ float weight_grad[];  // [hidden]
  const int64_t packs = hidden / N;
  const P* w = reinterpret_cast<const P*>(weight);
  for (int64_t c = threadIdx.x; c < packs; c += blockDim.x) {
#pragma unroll
    for (int i = 0; i < N; ++i) weight_grad[i * packs + c] = 0.f;
  }
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const P* x_row = reinterpret_cast<const P*>(x) + row * packs;
    const P* g_row = reinterpret_cast<const P*>(grad_normed) + row * packs;
    float2 sums = {0.f, 0.f};  // (sum of x^2, sum of g w x)
    for (int64_t c = threadIdx.x; c < packs; c += blockDim.x) {
      const P x_pack = x_row[c], g_pack = g_row[c], w_pack = w[c];
#pragma unroll
      for (int i = 0; i < N; ++i) {
        const float xi = ToFloat(x_pack.v[i]);
        sums.x += xi * xi;
        sums.y += ToFloat(g_pack.v[i]) * ToFloat(w_pack.v[i]) * xi;
      }
    }
    sums = BlockSum2(sums, scratch);
    const float rstd = rsqrtf(sums.x / float(hidden) + eps);
    const float x_coefficient = rstd * rstd * rstd * sums.y / float(hidden);
    for (int64_t c = threadIdx.x; c < packs; c += blockDim.x) {
      const P x_pack = x_row[c], g_pack = g_row[c], w_pack = w[c];
      const P s_pack = grad_sum != nullptr ? reinterpret_cast<const P*>(grad_sum)[row * packs + c]
                                           : P{};
      P out;
#pragma unroll
      for (int i = 0; i < N; ++i) {
        const float xi = ToFloat(x_pack.v[i]), gi = ToFloat(g_pack.v[i]);
        const float passed = grad_sum != nullptr ? ToFloat(s_pack.v[i]) : 0.f;
        out.v[i] = FromFloat<T>(rstd * gi * ToFloat(w_pack.v[i]) - xi * x_coefficient + passed);
        weight_grad[i * packs + c] += gi * xi * rstd;
      }
      reinterpret_cast<P*>(grad_x)[row * packs + c] = out;
    }
  }
  if (weight_grad_partials == nullptr) return;
  float* partial = weight_grad_partials + int64_t(blockIdx.x) * hidden;
  for (int64_t c = threadIdx.x; c < packs; c += blockDim.x) {
#pragma unroll
    for (int i = 0; i < N; ++i) partial[c * N + i] = weight_grad[i * packs + c];
  }
}

// Threads per block for rows of `packs` packs: one pack each, up to 1024.
int RmsNormThreads(int64_t packs) {
  return static_cast<int>(packs >= 1024 ? 1024 : (packs + 31) / 32 * 32);
}

}  // namespace

void LaunchSwigluForward(ElementType dtype, const void* gate, const void* up, int64_t rows,
                         int64_t width, int64_t in_stride, void* out, cudaStream_t stream) {
  if (rows == 0 || width == 0) return;
  DispatchElementType(dtype, [&](auto zero) {
    using T = decltype(zero);
    constexpr int kPack = 16 / sizeof(T);
    auto launch = [&](auto kernel, int n) {
      kernel<<<Blocks(rows * width / n), kThreads, 0, stream>>>(
          static_cast<const T*>(gate), static_cast<const T*>(up), rows, width, in_stride,
          static_cast<T*>(out));
    };
    Packs16<T>(width, {gate, up, out}) && in_stride % kPack == 0
        ? launch(SwigluForward<T, kPack>, kPack)
        : launch(SwigluForward<T, 1>, 1);
  });
}

void LaunchSwigluBackward(ElementType dtype, const void* gate, const void* up,
                          const void* grad_out, int64_t rows, int64_t width, int64_t in_stride,
                          int64_t grad_stride, void* grad_gate, void* grad_up, cudaStream_t stream) {
  if (rows == 0 || width == 0) return;
  DispatchElementType(dtype, [&](auto zero) {
    using T = decltype(zero);
    constexpr int kPack = 16 / sizeof(T);
    auto launch = [&](auto kernel, int n) {
      kernel<<<Blocks(rows * width / n), kThreads, 0, stream>>>(
          static_cast<const T*>(gate), static_cast<const T*>(up), static_cast<const T*>(grad_out),
          rows, width, in_stride, grad_stride, static_cast<T*>(grad_gate), static_cast<T*>(grad_up));
    };
    Packs16<T>(width, {gate, up, grad_out, grad_gate, grad_up}) && in_stride % kPack == 0 &&
            grad_stride % kPack == 0
        ? launch(SwigluBackward<T, kPack>, kPack)
        : launch(SwigluBackward<T, 1>, 1);
  });
}

void LaunchRope(ElementType dtype, const void* x, int64_t x_token_stride, const void* cos,
                const void* sin, int64_t tokens, int64_t heads, int64_t dim, bool backward,
                void* out, cudaStream_t stream) {
  const int64_t count = tokens * heads * dim;
  if (count == 0) return;
  DispatchElementType(dtype, [&](auto zero) {
    using T = decltype(zero);
    constexpr int kPack = 16 / sizeof(T);
    auto launch = [&](auto kernel, int n) {
      kernel<<<Blocks(count / 2 / n), kThreads, 0, stream>>>(
          static_cast<const T*>(x), x_token_stride, static_cast<const T*>(cos),
          static_cast<const T*>(sin), tokens, heads, dim, backward, static_cast<T*>(out));
    };
    // Packs of the half rotated together: half a multiple of the pack, rows aligned.
    Packs16<T>(dim / 2, {x, cos, sin, out}) && x_token_stride % kPack == 0
        ? launch(Rope<T, kPack>, kPack)
        : launch(Rope<T, 1>, 1);
  });
}

bool RmsNormBackwardSupports(int64_t hidden) {
  return hidden > 0 && hidden <= kRmsNormMaxHidden;
}

int64_t RmsNormBackwardBlocks(int64_t rows) {
  constexpr int64_t kMaxBlocks = 1024;  // partial sums: kMaxBlocks x hidden floats
  return rows < kMaxBlocks ? rows : kMaxBlocks;
}

void LaunchRmsNormBackward(ElementType dtype, const void* x, const void* weight,
                           const void* grad_normed, const void* grad_sum, int64_t rows,
                           int64_t hidden, float eps, void* grad_x,
                           float* weight_grad_partials, cudaStream_t stream) {
  if (rows == 0) return;
  DispatchElementType(dtype, [&](auto zero) {
    using T = decltype(zero);
    constexpr int kPack = 16 / sizeof(T);
    auto launch = [&](auto kernel, int n) {
      kernel<<<static_cast<unsigned>(RmsNormBackwardBlocks(rows)), RmsNormThreads(hidden / n),
               hidden * sizeof(float), stream>>>(static_cast<const T*>(x), static_cast<const T*>(weight),
                         static_cast<const T*>(grad_normed), static_cast<const T*>(grad_sum),
                         rows, hidden, eps, static_cast<T*>(grad_x), weight_grad_partials);
    };
    Packs16<T>(hidden, {x, weight, grad_normed, grad_sum, grad_x})
        ? launch(RmsNormBackward<T, kPack>, kPack)
        : launch(RmsNormBackward<T, 1>, 1);
  });
}

}  // namespace rollout::models::cuda
