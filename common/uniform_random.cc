#include "common/uniform_random.h"

#include <algorithm>
#include <numeric>
#include <utility>

namespace rollout {

uint64_t UniformBelow(std::mt19937_64& generator, uint64_t bound) {
  // Draws below 2^64 mod bound would make the low residues likelier: reject them.
  const uint64_t threshold = (0 - bound) % bound;
  while (true) {
    const uint64_t draw = generator();
    if (draw >= threshold) return draw % bound;
  }
}

double UniformUnit(std::mt19937_64& generator) {
  return static_cast<double>(generator() >> 11) * 0x1.0p-53;
}

std::vector<int64_t> ShuffledRange(int64_t n, std::mt19937_64& generator) {
  std::vector<int64_t> order(static_cast<size_t>(std::max<int64_t>(n, 0)));
  std::iota(order.begin(), order.end(), 0);
  for (int64_t i = n - 1; i > 0; --i) {
    const auto j = static_cast<int64_t>(UniformBelow(generator, static_cast<uint64_t>(i) + 1));
    std::swap(order[static_cast<size_t>(i)], order[static_cast<size_t>(j)]);
  }
  return order;
}

}  // namespace rollout
