#include "engine/sampler.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <limits>

#include "engine/sampling_noise.h"

#ifdef ROLLOUT_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>

#include "engine/cuda/sampling_kernels.h"
#include "models/fused_kernel_support.h"
#endif

namespace rollout::engine {
namespace {

constexpr float kMinusInfinity = -std::numeric_limits<float>::infinity();

void CheckRowTensor(const at::Tensor& t, const char* name, at::ScalarType type,
                    const at::Tensor& logits) {
  const int64_t rows = logits.size(0);
  TORCH_CHECK(t.defined() && t.dim() == 1 && t.size(0) == rows && t.scalar_type() == type &&
                  t.device() == logits.device(),
              "SampleTokens: ", name, " must be a [", rows, "] ", type, " tensor on ",
              logits.device());
}

void CheckInputs(const at::Tensor& logits, const SamplingTensors& params) {
  TORCH_CHECK(logits.dim() == 2 && logits.size(1) > 0,
              "SampleTokens: logits must be [B, V] with V > 0, got ", logits.sizes());
  const at::ScalarType dtype = logits.scalar_type();
  TORCH_CHECK(dtype == at::kFloat || dtype == at::kBFloat16 || dtype == at::kHalf,
              "SampleTokens: logits must be float32, bfloat16 or float16, not ", dtype);
  CheckRowTensor(params.temperature, "temperature", at::kFloat, logits);
  CheckRowTensor(params.seed, "seed", at::kLong, logits);
  CheckRowTensor(params.step, "step", at::kLong, logits);
  if (!params.any_filter) return;
  CheckRowTensor(params.top_k, "top_k", at::kLong, logits);
  CheckRowTensor(params.top_p, "top_p", at::kFloat, logits);
  CheckRowTensor(params.min_p, "min_p", at::kFloat, logits);
}

// [B, V] float32 Gumbel noise, element (i, j) = SamplingGumbelFromKey(key of row i, j).
at::Tensor GumbelNoiseCpu(const at::Tensor& seed_in, const at::Tensor& step_in, int64_t vocab) {
  const at::Tensor seed = seed_in.contiguous();
  const at::Tensor step = step_in.contiguous();
  const int64_t rows = seed.size(0);
  at::Tensor noise = at::empty({rows, vocab}, seed.options().dtype(at::kFloat));
  const int64_t* seeds = seed.data_ptr<int64_t>();
  const int64_t* steps = step.data_ptr<int64_t>();
  float* out = noise.data_ptr<float>();
  // Chunks of the flattened [B, V] index range, so one long row still spreads over
  // the threads; each chunk derives a row's key once.
  at::parallel_for(0, rows * vocab, /*grain_size=*/16384, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin / vocab; row * vocab < end; ++row) {
      const uint64_t key = SamplingStreamKey(static_cast<uint64_t>(seeds[row]),
                                             static_cast<uint64_t>(steps[row]));
      const int64_t first = std::max(begin, row * vocab);
      const int64_t last = std::min(end, (row + 1) * vocab);
      for (int64_t i = first; i < last; ++i) {
        out[i] = SamplingGumbelFromKey(key, static_cast<uint32_t>(i - row * vocab));
      }
    }
  });
  return noise;
}

at::Tensor GumbelNoise(const SamplingTensors& params, int64_t vocab) {
#ifdef ROLLOUT_WITH_CUDA
  if (params.seed.is_cuda()) {
    const at::Tensor seed = params.seed.contiguous();
    const at::Tensor step = params.step.contiguous();
    at::Tensor noise = at::empty({seed.size(0), vocab}, seed.options().dtype(at::kFloat));
    cuda::LaunchFillGumbelNoise(seed.data_ptr<int64_t>(), step.data_ptr<int64_t>(),
                                seed.size(0), vocab, noise.data_ptr<float>(),
                                at::cuda::getCurrentCUDAStream());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return noise;
  }
#endif
  return GumbelNoiseCpu(params.seed, params.step, vocab);
}

// [B, V] bool: the tokens that top-k, then top-p, then min-p keep, given x = logits / T
// [B, V] float32. Decided in sorted order (stable, so equal logits rank by token id):
//  * top-k keeps the first k;
//  * top-p keeps a token while the probability ranked above it, renormalised over the
//    top-k survivors, is below top_p — the smallest prefix reaching top_p;
//  * min-p keeps tokens with prob >= min_p * max prob (unchanged by renormalising);
//  * the top token always survives.
// Fixed shapes throughout, no host synchronisation.
at::Tensor FilterMask(const at::Tensor& x, const SamplingTensors& params) {
  const int64_t vocab = x.size(1);
  const auto sorted = x.sort(/*stable=*/true, /*dim=*/1, /*descending=*/true);
  const at::Tensor& order = std::get<1>(sorted);                        // [B, V] int64
  const at::Tensor probs = std::get<0>(sorted).softmax(1);               // [B, V] descending
  const at::Tensor rank = at::arange(vocab, order.options()).unsqueeze(0);  // [1, V]

  const at::Tensor k = params.top_k.clamp_max(vocab).masked_fill(params.top_k <= 0, vocab)
                           .unsqueeze(1);                                // [B, 1] in [1, V]
  at::Tensor keep = rank < k;

  const at::Tensor cumulative = probs.cumsum(1);
  const at::Tensor top_k_mass = cumulative.gather(1, k - 1);             // [B, 1]
  const at::Tensor top_p = params.top_p.unsqueeze(1);
  keep.logical_and_(((cumulative - probs) < top_p * top_k_mass).logical_or_(top_p >= 1));

  keep.logical_and_(probs >= params.min_p.unsqueeze(1) * probs.narrow(1, 0, 1));
  keep.logical_or_(rank == 0);
  return at::empty_like(keep).scatter_(1, order, keep);
}

// The reference formulation in ATen operations (the CPU path, and the CUDA path when
// some row filters).
SampledTokens SampleWithAtOps(const at::Tensor& logits, const SamplingTensors& params) {
  const at::Tensor sampled = params.temperature > 0;                          // [B] bool
  const at::Tensor scale = params.temperature.masked_fill(sampled.logical_not(), 1.0);
  const at::Tensor x = logits.to(at::kFloat) / scale.unsqueeze(1);            // [B, V]
  at::Tensor scores = x + GumbelNoise(params, x.size(1));
  if (params.any_filter) scores.masked_fill_(FilterMask(x, params).logical_not(), kMinusInfinity);
  scores = at::where(sampled.unsqueeze(1), scores, x);
  const at::Tensor tokens = scores.argmax(1);  // ties: the first maximum (lowest id)
  const at::Tensor log_probs =
      x.gather(1, tokens.unsqueeze(1)).squeeze(1) - x.logsumexp(1);
  return {tokens, log_probs};
}

#ifdef ROLLOUT_WITH_CUDA
// One fused pass per row, no [B, V] temporaries.
SampledTokens SampleUnfilteredCuda(const at::Tensor& logits_in, const SamplingTensors& params) {
  const at::Tensor logits = logits_in.contiguous();
  const at::Tensor temperature = params.temperature.contiguous();
  const at::Tensor seed = params.seed.contiguous();
  const at::Tensor step = params.step.contiguous();
  const int64_t rows = logits.size(0);
  SampledTokens out{at::empty({rows}, logits.options().dtype(at::kLong)),
                    at::empty({rows}, logits.options().dtype(at::kFloat))};
  const models::cuda::ElementType dtype = models::KernelElementType(logits.scalar_type());
  const at::Tensor workspace = at::empty(
      {cuda::SampleTokensUnfilteredWorkspaceBytes(dtype, logits.data_ptr(), rows, logits.size(1))},
      logits.options().dtype(at::kByte));
  cuda::LaunchSampleTokensUnfiltered(
      dtype, logits.data_ptr(), temperature.data_ptr<float>(), seed.data_ptr<int64_t>(),
      step.data_ptr<int64_t>(), rows, logits.size(1), out.tokens.data_ptr<int64_t>(),
      out.log_probs.data_ptr<float>(), workspace.data_ptr(), at::cuda::getCurrentCUDAStream());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}
#endif

}  // namespace

SampledTokens SampleTokens(const at::Tensor& logits, const SamplingTensors& params) {
  CheckInputs(logits, params);
  if (logits.size(0) == 0) {
    return {at::empty({0}, logits.options().dtype(at::kLong)),
            at::empty({0}, logits.options().dtype(at::kFloat))};
  }
  if (logits.is_cuda()) {
#ifdef ROLLOUT_WITH_CUDA
    const c10::cuda::CUDAGuard guard(logits.device());
    return params.any_filter ? SampleWithAtOps(logits, params)
                             : SampleUnfilteredCuda(logits, params);
#else
    TORCH_CHECK(false, "SampleTokens: CUDA logits, but rollout was built without CUDA");
#endif
  }
  return SampleWithAtOps(logits, params);
}

}  // namespace rollout::engine
