// The decode step's projections (q/k/v with its bias, o, and the split-K slices of the
// MLP's down projection) on Hopper (compute capability 9.0), for a few hundred rows:
// x [rows, in] times weight [out, in]^T, bfloat16 operands, float32 accumulation. Built
// for sm_90a alone (wgmma and TMA); launch only where DecodeGemmSupports() says so.
//
// Why its own GEMM: at decode sizes cuBLAS's kernels take 5-7 us for products whose
// weights stream from HBM in 0.4-1.8 us; they are bound by a kernel's fixed latency,
// with tiles that leave most SMs idle. These kernels cut the product into 64-row tiles
// narrow enough to give every SM work, keep four stages of TMA loads in flight, and are
// launched dependent (models/cuda/dependent_launch.cuh): a block's first weight tiles
// load while the kernel before it (the add + RMSNorm or the attention that writes x)
// is still finishing.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace rollout::models::cuda {

// Whether the launches below take these sizes on `device`: a compute capability 9.0 GPU,
// `rows` from 64 to 320, `out` a multiple of 64, `in` cut into `slices` runs of whole
// 64-element stages, and at most 24 stages a slice (a block's stages run one after
// another: longer runs are latency cuBLAS's wider split does not pay).
bool DecodeGemmSupports(int device, int64_t rows, int64_t in, int64_t out, int64_t slices);

// y [rows, out] = x weight^T + bias, each output rounded once from float32; bias [out]
// or nullptr. x, weight, bias and y bfloat16, contiguous, 16-byte aligned. Asynchronous
// on `stream`; false (nothing launched) when the driver rejects the tensor maps.
bool LaunchDecodeGemm(const void* x, const void* weight, const void* bias, int64_t rows,
                      int64_t in, int64_t out, void* y, cudaStream_t stream);

// partials [slices, rows, out] float32: slice s is x[:, s w : (s + 1) w] times
// weight[:, s w : (s + 1) w]^T with w = in / slices — the layout SplitKPartials gives
// (models/split_k_linear.h). Same operand rules as LaunchDecodeGemm.
bool LaunchDecodeGemmPartials(const void* x, const void* weight, int64_t rows, int64_t in,
                              int64_t out, int64_t slices, float* partials, cudaStream_t stream);

}  // namespace rollout::models::cuda
