// Split-K products of a linear layer for the inference step's residual projections
// (CUDA builds only; no autograd).
//
// Why: at decode sizes (a few hundred rows against an inner dimension of thousands, the
// MLP's down projection) one GEMM has too few output tiles to fill the GPU, so cuBLAS
// splits the inner dimension itself and adds a reduction kernel. Here the slices are one
// batched GEMM with float32 outputs, and their sum happens in the add + RMSNorm that
// follows anyway (models/fused_decode.h FusedAddPartialsRmsNorm): one kernel less per
// layer.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace rollout::models {

// How many slices SplitKPartials should cut an [rows, in] x [in, out] product into for
// the inference step; 1 means: use one plain GEMM (row counts outside the measured
// range, short inner dimensions, widths the slices cannot keep 16-byte aligned, or a
// LibTorch without a float32-output batched GEMM).
int64_t SplitKSlices(int64_t rows, int64_t in);

// x [rows, in] and weight [out, in] (bfloat16 or float16, one dtype, contiguous, on one
// CUDA device), `slices` dividing `in` into multiples of 8 -> float32 [slices, rows,
// out] whose sum over the first dimension is x weight^T (slice s covers inner indices
// [s in / slices, (s + 1) in / slices)).
at::Tensor SplitKPartials(const at::Tensor& x, const at::Tensor& weight, int64_t slices);

}  // namespace rollout::models
