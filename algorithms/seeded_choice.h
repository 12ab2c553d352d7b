// A seeded uniform random choice among a tensor's true positions, reproducible without
// any generator state: clip_cov (policy_loss.h) picks the tokens it detaches with it, so
// that a resumed run, another device or another LibTorch build picks the same ones.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace rollout::algorithms {

// `candidates`: bool, any shape and device. Returns a bool tensor of its shape and device,
// true at min(count, number of candidates) of the candidates' positions, each subset of
// that size equally likely, chosen by `seed` alone (each position's rank is the hash of
// the seed and its row-major offset). count <= 0 chooses nothing. Reads the candidates
// from the device, so it waits for the device.
at::Tensor ChooseSeeded(const at::Tensor& candidates, int64_t count, uint64_t seed);

}  // namespace rollout::algorithms
