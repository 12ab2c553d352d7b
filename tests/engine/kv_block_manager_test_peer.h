// Test access to KvBlockManager internals (its friend): swaps the content hash so
// tests can force collisions.
#pragma once

#include "engine/kv_block_manager.h"

namespace rollout::engine {

class KvBlockManagerTestPeer {
 public:
  static void UseHash(KvBlockManager& manager, KvBlockManager::HashFn hash) {
    manager.hash_fn_ = hash;
  }
};

}  // namespace rollout::engine
