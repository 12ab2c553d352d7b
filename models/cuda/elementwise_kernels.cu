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

}  // namespace rollout::models::cuda
