// Uniform integers drawn from std::mt19937_64 by rejection sampling. The standard fixes
// mt19937_64's output but not std::uniform_int_distribution's algorithm, so this is the
// one way the project draws integers where results must match across compilers (data
// shuffling, task generation).
#pragma once

#include <cstdint>
#include <random>

namespace rollout {

// Uniform in [0, bound), bound > 0; no value is favoured.
uint64_t UniformBelow(std::mt19937_64& generator, uint64_t bound);

}  // namespace rollout
