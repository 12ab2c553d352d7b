#include "common/uniform_random.h"

namespace rollout {

uint64_t UniformBelow(std::mt19937_64& generator, uint64_t bound) {
  // Draws below 2^64 mod bound would make the low residues likelier: reject them.
  const uint64_t threshold = (0 - bound) % bound;
  while (true) {
    const uint64_t draw = generator();
    if (draw >= threshold) return draw % bound;
  }
}

}  // namespace rollout
