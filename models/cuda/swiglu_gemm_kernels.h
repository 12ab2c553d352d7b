// The MLP's gate/up projection with the SwiGLU in its epilogue, for decode steps of a
// few hundred rows on Hopper (compute capability 9.0): one kernel instead of a cuBLAS
// GEMM plus the SwiGLU kernel, and half the output bytes. Built for sm_90a alone (wgmma
// and TMA); the launch is only valid where SwigluGemmSupports() says so.
//
// Why its own GEMM: at 64-320 rows cuBLAS's tiles leave SMs idle or their loads
// shallow; this kernel keeps three or four stages of every tile in flight through TMA,
// with tiles narrow enough to fill the GPU (bench/README.md has the measurements).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace rollout::models::cuda {

// Whether LaunchSwigluGemm takes these sizes on `device`: a compute capability 9.0 GPU,
// `in` and `width` multiples of 64, and `rows` in the range where the kernel beats cuBLAS
// plus the SwiGLU kernel (64 to 320 rows on an H200).
bool SwigluGemmSupports(int device, int64_t rows, int64_t in, int64_t width);

// out[r, j] = silu(g) * u with g = x[r] . weight[j], u = x[r] . weight[width + j], both
// float32 dot products (not rounded to bfloat16 before the activation), out rounded once.
// x [rows, in], weight [2 * width, in] (gate rows, then up rows) and out [rows, width]:
// bfloat16, contiguous, 16-byte aligned. Asynchronous on `stream`; false (nothing
// launched) when the driver rejects the operands' tensor maps.
bool LaunchSwigluGemm(const void* x, const void* weight, int64_t rows, int64_t in,
                      int64_t width, void* out, cudaStream_t stream);

}  // namespace rollout::models::cuda
