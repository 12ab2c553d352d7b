#include "models/split_k_linear.h"

#include <ATen/ATen.h>

#include "common/torch_compat.h"

namespace rollout::models {
namespace {

// Measured on an H200 (Qwen2.5-0.5B's down projection, in 4,864): four slices beat
// cuBLAS's own split-K GEMM + reduce by ~3 us a layer from 64 to 256 rows (a graph of
// forward steps: 1.43 -> 1.35 ms at 256 rows, 1.06 -> 1.00 at 64), and the engine's
// decode steps got faster at 128 and 256 rows; at 64 rows they got 2-8% slower in
// every trial, for a reason not found, so small batches keep the plain GEMM. Above a
// few hundred rows one GEMM fills the GPU and the partials would only add traffic.
constexpr int64_t kMinRows = 128;
constexpr int64_t kMaxRows = 512;
constexpr int64_t kMinInner = 4096;
constexpr int64_t kSlices = 4;

}  // namespace

int64_t SplitKSlices(int64_t rows, int64_t in) {
  if (!compat::BmmToFloatAvailable()) return 1;
  if (rows < kMinRows || rows > kMaxRows || in < kMinInner || in % (8 * kSlices) != 0) return 1;
  return kSlices;
}

at::Tensor SplitKPartials(const at::Tensor& x, const at::Tensor& weight, int64_t slices) {
  TORCH_CHECK(x.dim() == 2 && weight.dim() == 2 && x.size(1) == weight.size(1),
              "split-K linear: x [rows, in] and weight [out, in] expected, got ", x.sizes(),
              " and ", weight.sizes());
  TORCH_CHECK(x.scalar_type() == weight.scalar_type() && x.is_contiguous() &&
                  weight.is_contiguous() && x.is_cuda() && weight.device() == x.device(),
              "split-K linear: x and weight must be contiguous CUDA tensors of one dtype");
  TORCH_CHECK(x.scalar_type() == at::kBFloat16 || x.scalar_type() == at::kHalf,
              "split-K linear: bfloat16 or float16 only, not ", x.scalar_type());
  const int64_t rows = x.size(0), in = x.size(1), out = weight.size(0);
  TORCH_CHECK(slices > 0 && in % (8 * slices) == 0, "split-K linear: ", slices,
              " slices do not cut ", in, " inner elements into multiples of 8");
  // Slice s of x is x[:, s w : (s + 1) w] and of the weight W[:, s w : (s + 1) w]: views,
  // one batched GEMM over them.
  const int64_t width = in / slices;
  return compat::BmmToFloat(x.view({rows, slices, width}).transpose(0, 1),
                            weight.view({out, slices, width}).permute({1, 2, 0}));
}

}  // namespace rollout::models
