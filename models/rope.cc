#include "models/rope.h"

#include <ATen/ATen.h>

#include <cmath>

#ifdef ROLLOUT_WITH_CUDA
#include "models/fused_elementwise.h"
#endif

namespace rollout::models {
namespace {

// Llama 3: long wavelengths slowed by `factor`, short ones kept, a smooth blend between.
at::Tensor Llama3InvFreq(const at::Tensor& inv_freq, const RopeScaling& s) {
  const double low_freq_wavelen = s.original_max_position_embeddings / s.low_freq_factor;
  const double high_freq_wavelen = s.original_max_position_embeddings / s.high_freq_factor;
  const at::Tensor wavelen = 2 * M_PI / inv_freq;
  at::Tensor scaled = at::where(wavelen > low_freq_wavelen, inv_freq / s.factor, inv_freq);
  const at::Tensor smooth = (s.original_max_position_embeddings / wavelen - s.low_freq_factor) /
                            (s.high_freq_factor - s.low_freq_factor);
  const at::Tensor smoothed = (1 - smooth) * scaled / s.factor + smooth * scaled;
  const at::Tensor medium = (wavelen >= high_freq_wavelen).logical_and(wavelen <= low_freq_wavelen);
  return at::where(medium, smoothed, scaled);
}

at::Tensor RotateHalf(const at::Tensor& x) {
  const int64_t half = x.size(-1) / 2;
  return at::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
}

}  // namespace

Rope::Rope(int64_t head_dim, double theta, const RopeScaling& scaling, c10::Device device) {
  // 1 / theta^(2i / d), in float32 like HF (int64 arange cast to float).
  at::Tensor exponents = at::arange(0, head_dim, 2, at::kLong).to(at::kFloat) / head_dim;
  inv_freq_ = 1.0 / at::pow(theta, exponents);
  if (scaling.type == "llama3") inv_freq_ = Llama3InvFreq(inv_freq_, scaling);
  inv_freq_ = inv_freq_.to(device);
}

std::pair<at::Tensor, at::Tensor> Rope::CosSin(const at::Tensor& positions,
                                                c10::ScalarType dtype) const {
  const at::Tensor freqs =
      positions.to(at::kFloat).unsqueeze(-1) * inv_freq_;
  const at::Tensor emb = at::cat({freqs, freqs}, -1);
  return {emb.cos().to(dtype), emb.sin().to(dtype)};
}

at::Tensor Rope::Apply(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
#ifdef ROLLOUT_WITH_CUDA
  if (x.is_cuda()) return FusedRope(x, cos, sin);
#endif
  // cos/sin S + [D] -> S + [1, D], broadcast over the heads dimension of x.
  return x * cos.unsqueeze(-2) + RotateHalf(x) * sin.unsqueeze(-2);
}

}  // namespace rollout::models
