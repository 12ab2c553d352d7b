// CUDA kernels behind engine/sampler.h, with a plain C++ interface (no LibTorch in the
// .cu file, so nvcc never parses ATen). Both draw their noise from
// engine/sampling_noise.h, the function the CPU path uses, and launch on `stream`
// without synchronising, so they can be captured in a CUDA graph.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "models/cuda/element_type.h"

namespace rollout::engine::cuda {

using models::cuda::ElementType;

// Sampling without top-k/top-p/min-p over logits [rows, vocab] (contiguous) in one pass:
// each row is scanned by one or more thread blocks (enough to fill the device; their
// partial states then merged by a second kernel). temperature, seed, step [rows]; a row
// with temperature <= 0 takes argmax(logits), otherwise argmax(logits / T + Gumbel
// noise); ties go to the lowest token id. tokens [rows] int64 and log_probs [rows]
// float32 (the token's log_softmax(logits / T), T = 1 for greedy rows) are fully
// written. `workspace` holds SampleTokensUnfilteredWorkspaceBytes(...) bytes for the
// same arguments on the same device (may be null when that is 0).
int64_t SampleTokensUnfilteredWorkspaceBytes(ElementType dtype, const void* logits,
                                              int64_t rows, int64_t vocab);
void LaunchSampleTokensUnfiltered(ElementType dtype, const void* logits,
                                  const float* temperature, const int64_t* seed,
                                  const int64_t* step, int64_t rows, int64_t vocab,
                                  int64_t* tokens, float* log_probs, void* workspace,
                                  cudaStream_t stream);

// noise [rows, vocab] float32 (contiguous), fully written: the Gumbel noise of token j
// in row i's draw (seed[i], step[i]), for the filtered path's ATen operations.
void LaunchFillGumbelNoise(const int64_t* seed, const int64_t* step, int64_t rows,
                           int64_t vocab, float* noise, cudaStream_t stream);

}  // namespace rollout::engine::cuda
