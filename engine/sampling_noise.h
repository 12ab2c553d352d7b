// Counter-based sampling noise shared by the CPU sampler (engine/sampler.cc) and the
// CUDA kernels (engine/cuda/sampling_kernels.cu): the uniform for (seed, step, token) is
// a fixed hash, so a row's draw depends on nothing but its own seed and step — not on
// the batch it is in, the device, or any generator state.
//
// No LibTorch here: nvcc compiles this header as host/device code.
#pragma once

#include <math.h>

#include <cstdint>

#include "common/mix_bits.h"

namespace rollout::engine {

// The key of one draw (seed, step); computed once per row, then mixed with each token.
ROLLOUT_HOST_DEVICE inline uint64_t SamplingStreamKey(uint64_t seed, uint64_t step) {
  return MixBits(MixBits(seed ^ 0x6a09e667f3bcc909ULL) + (step + 1) * kGoldenGamma);
}

// The 64 random bits of tokens 2m and 2m + 1 in the draw `key`: splitmix64's output for
// counter m + 1. One hash serves two tokens — it is most of the noise's cost.
ROLLOUT_HOST_DEVICE inline uint64_t SamplingPairBits(uint64_t key, uint32_t token) {
  return MixBits(key + (static_cast<uint64_t>(token >> 1) + 1) * kGoldenGamma);
}

// The 23-bit draw k of `token` from its pair's bits: bits 41..63 for the even token,
// 9..31 for the odd one.
ROLLOUT_HOST_DEVICE inline uint32_t SamplingDrawFromBits(uint64_t pair_bits, uint32_t token) {
  return (token & 1) != 0 ? static_cast<uint32_t>(pair_bits) >> 9 : static_cast<uint32_t>(pair_bits >> 41);
}

// The uniform of a draw, (k + 0.5) / 2^23: exact in float, increasing in k, strictly
// inside (0, 1) — within [2^-24, 1 - 2^-24] — so the Gumbel transform below is always
// finite.
ROLLOUT_HOST_DEVICE inline float SamplingUniformFromDraw(uint32_t k) {
  return (static_cast<float>(k) + 0.5f) * (1.0f / 8388608.0f);
}

ROLLOUT_HOST_DEVICE inline float SamplingUniformFromBits(uint64_t pair_bits, uint32_t token) {
  return SamplingUniformFromDraw(SamplingDrawFromBits(pair_bits, token));
}

ROLLOUT_HOST_DEVICE inline float SamplingUniformFromKey(uint64_t key, uint32_t token) {
  return SamplingUniformFromBits(SamplingPairBits(key, token), token);
}

ROLLOUT_HOST_DEVICE inline float SamplingUniform(uint64_t seed, uint64_t step, uint32_t token) {
  return SamplingUniformFromKey(SamplingStreamKey(seed, step), token);
}

// Gumbel(0, 1) noise g = -log(-log u), in about [-2.8, 16.6]. argmax_j(x_j + g_j) is a
// draw from softmax(x). Host and device logf may differ in the last bit, so CPU and
// GPU agree on every draw except scores tied to within an ulp.
ROLLOUT_HOST_DEVICE inline float SamplingGumbelFromUniform(float u) { return -logf(-logf(u)); }

ROLLOUT_HOST_DEVICE inline float SamplingGumbelFromKey(uint64_t key, uint32_t token) {
  return SamplingGumbelFromUniform(SamplingUniformFromKey(key, token));
}

}  // namespace rollout::engine
