// Uniform draws from std::mt19937_64 written here. The standard fixes mt19937_64's
// output but not the algorithms of std::uniform_int_distribution, std::shuffle or
// std::uniform_real_distribution, so these are the one way the project draws where
// results must match across compilers (data shuffling, task generation, the update's
// row orders, PF-PPO's resampling).
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace rollout {

// Uniform in [0, bound), bound > 0; no value is favoured.
uint64_t UniformBelow(std::mt19937_64& generator, uint64_t bound);

// Uniform in [0, 1), from the top 53 bits of one draw.
double UniformUnit(std::mt19937_64& generator);

// 0 .. n-1 in a uniformly random order (Fisher–Yates from the last position down);
// empty for n <= 0.
std::vector<int64_t> ShuffledRange(int64_t n, std::mt19937_64& generator);

}  // namespace rollout
