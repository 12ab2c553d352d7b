// splitmix64's finaliser and increment: the one integer hash behind the sampler's noise
// (engine/sampling_noise.h), the KV cache's block hashes and clip_cov's seeded token
// choice (algorithms/seeded_choice.h). Host and device code: nvcc compiles this header.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define ROLLOUT_HOST_DEVICE __host__ __device__
#else
#define ROLLOUT_HOST_DEVICE
#endif

namespace rollout {

// A bijection of uint64 whose every output bit depends on every input bit.
ROLLOUT_HOST_DEVICE inline uint64_t MixBits(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

constexpr uint64_t kGoldenGamma = 0x9e3779b97f4a7c15ULL;  // splitmix64's increment

}  // namespace rollout
