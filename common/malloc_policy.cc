#include "common/malloc_policy.h"

#include <malloc.h>

namespace rollout {

void UseLargeBufferMallocPolicy() {
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

}  // namespace rollout
