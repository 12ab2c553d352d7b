// PF-PPO's resampling (verl's algorithm.use_pf_ppo, compute_pf_ppo_reweight_data; "Policy
// Filtration in RLHF", arXiv 2409.06957): the batch is redrawn with replacement, each row
// in proportion to a weight of its score, so that the update sees more of the responses
// whose reward is most reliable.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace rollout::algorithms {

struct PfPpoOptions {
  std::string reweight_method = "pow";  // algorithm.pf_ppo.reweight_method
  double weight_pow = 2.0;              // algorithm.pf_ppo.weight_pow
};

// [B] float64 on the CPU: the rows' weights from their scores ([B] floating, finite):
//   pow         |s|^weight_pow
//   max_min     1 for rows holding the batch's largest or smallest score, else 0
//   max_random  0.4 for rows holding the largest score, else 0.1
// then max(w + 1e-8, 1e-8), as verl, so every row keeps a chance. InvalidArgument for an
// unknown method, a negative weight_pow, or scores that are not [B] floating and finite.
absl::StatusOr<at::Tensor> PfPpoWeights(const at::Tensor& scores, const PfPpoOptions& options);

// `count` row indices drawn independently with replacement, index i with probability
// weights[i] / sum(weights); `weights` is [B] float64 on the CPU with a positive sum (as
// PfPpoWeights gives). The draws use only `generator`'s output, which the standard fixes,
// so a seed gives the same rows on every build.
std::vector<int64_t> SampleWithReplacement(const at::Tensor& weights, int64_t count, std::mt19937_64& generator);

}  // namespace rollout::algorithms
