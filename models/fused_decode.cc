#include "models/fused_decode.h"

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#include <cstdint>
#include <vector>

#include "models/cuda/decode_gemm_kernels.h"
#include "models/cuda/decode_kernels.h"
#include "models/cuda/swiglu_gemm_kernels.h"
#include "models/fused_kernel_support.h"

namespace rollout::models {

namespace {

// Whether a kernel that reads `t` (after .contiguous(), which copies only what is not
// contiguous: a copy starts aligned) finds it `bytes`-aligned; TMA tensor maps need 16.
bool AlignedForKernel(const at::Tensor& t, uintptr_t bytes) {
  return !t.is_contiguous() || reinterpret_cast<uintptr_t>(t.data_ptr()) % bytes == 0;
}

// The norm's weight: [hidden] in the residual's dtype.
void CheckNormWeight(const at::Tensor& weight, const at::Tensor& residual) {
  const int64_t hidden = residual.size(-1);
  TORCH_CHECK(weight.numel() == hidden && weight.scalar_type() == residual.scalar_type(),
              "fused RMSNorm: weight must be [", hidden, "] ", residual.scalar_type());
}

}  // namespace

std::pair<at::Tensor, at::Tensor> FusedAddRmsNorm(const at::Tensor& residual_in,
                                                  const at::Tensor& delta_in,
                                                  const at::Tensor& weight_in, double eps) {
  const at::Tensor residual = residual_in.contiguous();
  const at::Tensor weight = weight_in.contiguous();
  const int64_t hidden = residual.size(-1);
  CheckNormWeight(weight, residual);
  const c10::cuda::CUDAGuard guard(residual.device());
  at::Tensor delta, sum = residual;
  if (delta_in.defined()) {
    delta = delta_in.contiguous();
    TORCH_CHECK(delta.sizes() == residual.sizes() && delta.scalar_type() == residual.scalar_type(),
                "fused add + RMSNorm: residual and delta must match in shape and dtype");
    sum = at::empty_like(residual);
  }
  at::Tensor normed = at::empty_like(residual);
  cuda::LaunchAddRmsNorm(KernelElementType(residual.scalar_type()), residual.data_ptr(),
                         delta.defined() ? delta.data_ptr() : nullptr, weight.data_ptr(),
                         residual.numel() / hidden, hidden, static_cast<float>(eps),
                         sum.data_ptr(), normed.data_ptr(), at::cuda::getCurrentCUDAStream());
  return {sum, normed};
}

std::pair<at::Tensor, at::Tensor> FusedAddPartialsRmsNorm(const at::Tensor& residual_in,
                                                          const at::Tensor& partials_in,
                                                          const at::Tensor& weight_in,
                                                          double eps) {
  const at::Tensor residual = residual_in.contiguous();
  const at::Tensor partials = partials_in.contiguous();
  const at::Tensor weight = weight_in.contiguous();
  const int64_t hidden = residual.size(-1), rows = residual.numel() / hidden;
  CheckNormWeight(weight, residual);
  TORCH_CHECK(partials.dim() == 3 && partials.size(1) == rows && partials.size(2) == hidden &&
                  partials.scalar_type() == at::kFloat,
              "fused add + RMSNorm: partials must be float32 [S, ", rows, ", ", hidden, "], got ",
              partials.scalar_type(), " ", partials.sizes());
  const c10::cuda::CUDAGuard guard(residual.device());
  at::Tensor sum = at::empty_like(residual), normed = at::empty_like(residual);
  cuda::LaunchAddPartialsRmsNorm(KernelElementType(residual.scalar_type()), residual.data_ptr(),
                                 partials.data_ptr<float>(), partials.size(0), weight.data_ptr(),
                                 rows, hidden, static_cast<float>(eps), sum.data_ptr(),
                                 normed.data_ptr(), at::cuda::getCurrentCUDAStream());
  return {sum, normed};
}

std::pair<at::Tensor, at::Tensor> FusedRopeQk(const at::Tensor& qkv_in, const at::Tensor& cos_in,
                                              const at::Tensor& sin_in, int64_t q_heads,
                                              int64_t kv_heads, int64_t dim) {
  const at::Tensor qkv = qkv_in.stride(-1) == 1 ? qkv_in : qkv_in.contiguous();
  TORCH_CHECK(qkv.dim() == 2 && qkv.size(1) == (q_heads + 2 * kv_heads) * dim,
              "fused RoPE: qkv must be [N, ", (q_heads + 2 * kv_heads) * dim, "], got ", qkv.sizes());
  const at::Tensor cos = cos_in.to(qkv.scalar_type()).contiguous();
  const at::Tensor sin = sin_in.to(qkv.scalar_type()).contiguous();
  const int64_t tokens = qkv.size(0);
  TORCH_CHECK(cos.numel() == tokens * dim && sin.numel() == tokens * dim,
              "fused RoPE: cos/sin must be [", tokens, ", ", dim, "]");
  const c10::cuda::CUDAGuard guard(qkv.device());
  at::Tensor q = at::empty({tokens, q_heads, dim}, qkv.options());
  at::Tensor k = at::empty({tokens, kv_heads, dim}, qkv.options());
  cuda::LaunchRopeQk(KernelElementType(qkv.scalar_type()), qkv.data_ptr(), qkv.stride(0),
                     cos.data_ptr(), sin.data_ptr(), tokens, q_heads, kv_heads, dim, q.data_ptr(),
                     k.data_ptr(), at::cuda::getCurrentCUDAStream());
  return {q, k};
}

at::Tensor FusedQkHeadRmsNorm_(const at::Tensor& qkv, const at::Tensor& q_weight_in,
                               const at::Tensor& k_weight_in, int64_t q_heads, int64_t kv_heads,
                               int64_t dim, double eps) {
  TORCH_CHECK(qkv.dim() == 2 && qkv.size(1) == (q_heads + 2 * kv_heads) * dim && qkv.stride(1) == 1,
              "fused q/k norm: qkv must be [N, ", (q_heads + 2 * kv_heads) * dim,
              "] with unit column stride, got ", qkv.sizes());
  const at::Tensor q_weight = q_weight_in.to(qkv.scalar_type()).contiguous();
  const at::Tensor k_weight = k_weight_in.to(qkv.scalar_type()).contiguous();
  TORCH_CHECK(q_weight.numel() == dim && k_weight.numel() == dim,
              "fused q/k norm: the weights must be [", dim, "]");
  const c10::cuda::CUDAGuard guard(qkv.device());
  cuda::LaunchQkHeadRmsNorm(KernelElementType(qkv.scalar_type()), qkv.data_ptr(), qkv.stride(0),
                            q_weight.data_ptr(), k_weight.data_ptr(), qkv.size(0), q_heads, kv_heads,
                            dim, static_cast<float>(eps), at::cuda::getCurrentCUDAStream());
  return qkv;
}

at::Tensor FusedSwigluHalves(const at::Tensor& gate_up_in) {
  const at::Tensor gate_up = gate_up_in.contiguous();
  TORCH_CHECK(gate_up.dim() == 2 && gate_up.size(1) % 2 == 0,
              "fused SwiGLU: gate_up must be [N, 2 * width], got ", gate_up.sizes());
  const int64_t width = gate_up.size(1) / 2;
  const c10::cuda::CUDAGuard guard(gate_up.device());
  at::Tensor out = at::empty({gate_up.size(0), width}, gate_up.options());
  cuda::LaunchSwigluHalves(KernelElementType(gate_up.scalar_type()), gate_up.data_ptr(),
                           gate_up.size(0), width, out.data_ptr(), at::cuda::getCurrentCUDAStream());
  return out;
}

bool FusedGateUpSwigluApplies(const at::Tensor& x, const at::Tensor& gate_up_weight) {
  if (!x.is_cuda() || x.scalar_type() != at::kBFloat16 ||
      gate_up_weight.scalar_type() != at::kBFloat16 || gate_up_weight.dim() != 2 ||
      gate_up_weight.size(0) % 2 != 0 || x.size(-1) != gate_up_weight.size(1) ||
      gate_up_weight.device() != x.device() || !AlignedForKernel(x, 16) ||
      !AlignedForKernel(gate_up_weight, 16)) {
    return false;
  }
  const int64_t in = x.size(-1);
  return cuda::SwigluGemmSupports(x.get_device(), x.numel() / in, in,
                                  gate_up_weight.size(0) / 2);
}

at::Tensor FusedGateUpSwiglu(const at::Tensor& x_in, const at::Tensor& gate_up_weight_in) {
  TORCH_CHECK(FusedGateUpSwigluApplies(x_in, gate_up_weight_in),
              "fused gate/up + SwiGLU: unsupported operands x ", x_in.sizes(), " ",
              x_in.scalar_type(), ", weight ", gate_up_weight_in.sizes(), " ",
              gate_up_weight_in.scalar_type());
  const int64_t in = x_in.size(-1), width = gate_up_weight_in.size(0) / 2;
  const at::Tensor x = x_in.reshape({-1, in}).contiguous();
  const at::Tensor weight = gate_up_weight_in.contiguous();
  const c10::cuda::CUDAGuard guard(x.device());
  at::Tensor out = at::empty({x.size(0), width}, x.options());
  TORCH_CHECK(cuda::LaunchSwigluGemm(x.data_ptr(), weight.data_ptr(), x.size(0), in, width,
                                     out.data_ptr(), at::cuda::getCurrentCUDAStream()),
              "fused gate/up + SwiGLU: the driver rejected the operands' tensor maps (x ",
              x.sizes(), ", weight ", weight.sizes(), ")");
  std::vector<int64_t> shape = x_in.sizes().vec();
  shape.back() = width;
  return out.view(shape);
}

bool DecodeLinearApplies(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                         int64_t slices) {
  if (!x.is_cuda() || x.scalar_type() != at::kBFloat16 || weight.scalar_type() != at::kBFloat16 ||
      weight.dim() != 2 || x.size(-1) != weight.size(1) || weight.device() != x.device() ||
      !AlignedForKernel(x, 16) || !AlignedForKernel(weight, 16)) {
    return false;
  }
  if (bias.defined() && (slices != 1 || bias.scalar_type() != at::kBFloat16 ||
                         bias.numel() != weight.size(0) || bias.device() != x.device() ||
                         !AlignedForKernel(bias, 4))) {  // read in pairs
    return false;
  }
  const int64_t in = x.size(-1);
  return cuda::DecodeGemmSupports(x.get_device(), x.numel() / in, in, weight.size(0), slices);
}

int64_t DecodeLinearSlices(const at::Tensor& x, const at::Tensor& weight) {
  for (const int64_t slices : {1, 2, 4, 8}) {
    if (DecodeLinearApplies(x, weight, at::Tensor(), slices)) return slices;
  }
  return 0;
}

namespace {

void CheckDecodeLinear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                       int64_t slices) {
  TORCH_CHECK(DecodeLinearApplies(x, weight, bias, slices),
              "decode GEMM: unsupported operands x ", x.sizes(), " ", x.scalar_type(),
              ", weight ", weight.sizes(), " ", weight.scalar_type(), ", ", slices, " slices");
}

}  // namespace

at::Tensor DecodeLinear(const at::Tensor& x_in, const at::Tensor& weight_in,
                        const at::Tensor& bias_in) {
  CheckDecodeLinear(x_in, weight_in, bias_in, 1);
  const int64_t in = x_in.size(-1), out_width = weight_in.size(0);
  const at::Tensor x = x_in.reshape({-1, in}).contiguous();
  const at::Tensor weight = weight_in.contiguous();
  const at::Tensor bias = bias_in.defined() ? bias_in.contiguous() : at::Tensor();
  const c10::cuda::CUDAGuard guard(x.device());
  at::Tensor out = at::empty({x.size(0), out_width}, x.options());
  TORCH_CHECK(cuda::LaunchDecodeGemm(x.data_ptr(), weight.data_ptr(),
                                     bias.defined() ? bias.data_ptr() : nullptr, x.size(0), in,
                                     out_width, out.data_ptr(), at::cuda::getCurrentCUDAStream()),
              "decode GEMM: the driver rejected the operands' tensor maps (x ", x.sizes(),
              ", weight ", weight.sizes(), ")");
  std::vector<int64_t> shape = x_in.sizes().vec();
  shape.back() = out_width;
  return out.view(shape);
}

at::Tensor DecodeLinearPartials(const at::Tensor& x_in, const at::Tensor& weight_in,
                                int64_t slices) {
  CheckDecodeLinear(x_in, weight_in, at::Tensor(), slices);
  const int64_t in = x_in.size(-1), out_width = weight_in.size(0);
  const at::Tensor x = x_in.reshape({-1, in}).contiguous();
  const at::Tensor weight = weight_in.contiguous();
  const c10::cuda::CUDAGuard guard(x.device());
  at::Tensor partials =
      at::empty({slices, x.size(0), out_width}, x.options().dtype(at::kFloat));
  TORCH_CHECK(cuda::LaunchDecodeGemmPartials(x.data_ptr(), weight.data_ptr(), x.size(0), in,
                                             out_width, slices, partials.data_ptr<float>(),
                                             at::cuda::getCurrentCUDAStream()),
              "decode GEMM: the driver rejected the operands' tensor maps (x ", x.sizes(),
              ", weight ", weight.sizes(), ")");
  return partials;
}

}  // namespace rollout::models
