#include "engine/kv_block_manager.h"

#include <algorithm>
#include <limits>

#include "common/check.h"
#include "common/mix_bits.h"

namespace rollout::engine {

// Chains the previous block's hash with each token through splitmix64's finaliser. The
// first block chains from 0. Only a lookup key: matches compare the stored tokens.
uint64_t KvBlockManager::HashBlockTokens(uint64_t prev_hash, absl::Span<const int32_t> tokens) {
  uint64_t hash = MixBits(prev_hash + kGoldenGamma);
  for (int32_t token : tokens) {
    hash = MixBits(hash + (static_cast<uint64_t>(static_cast<uint32_t>(token)) + 1) * kGoldenGamma);
  }
  return hash;
}

KvBlockManager::KvBlockManager(const Options& options) : options_(options) {
  ROLLOUT_CHECK(options.num_blocks >= 1) << "KvBlockManager: num_blocks " << options.num_blocks;
  ROLLOUT_CHECK(options.block_size >= 1) << "KvBlockManager: block_size " << options.block_size;
  blocks_.resize(options.num_blocks);
  // Reversed so that block 0 is handed out first.
  free_unregistered_.reserve(options.num_blocks);
  for (BlockId block = options.num_blocks - 1; block >= 0; --block) {
    free_unregistered_.push_back(block);
  }
  if (options.enable_prefix_caching) {
    registered_.reserve(options.num_blocks);
    registered_tokens_.resize(static_cast<size_t>(options.num_blocks) * options.block_size);
  }
}

int32_t KvBlockManager::num_free_blocks() const {
  return static_cast<int32_t>(free_unregistered_.size()) + num_evictable_;
}

int32_t KvBlockManager::ref_count(BlockId block) const {
  CheckBlock(block);
  return blocks_[block].ref_count;
}

int32_t KvBlockManager::BlocksNeeded(const BlockTable& table, int64_t new_length) const {
  ROLLOUT_CHECK(table.num_tokens >= 0 &&
                static_cast<int64_t>(table.blocks.size()) == BlocksFor(table.num_tokens))
      << "KvBlockManager: a table of " << table.num_tokens << " tokens holds "
      << table.blocks.size() << " blocks of " << block_size();
  if (new_length <= table.num_tokens) return 0;
  int64_t needed = BlocksFor(new_length) - static_cast<int64_t>(table.blocks.size());
  if (table.num_tokens % block_size() != 0) {
    CheckBlock(table.blocks.back());
    if (blocks_[table.blocks.back()].ref_count > 1) ++needed;
  }
  return static_cast<int32_t>(std::min<int64_t>(needed, std::numeric_limits<int32_t>::max()));
}

bool KvBlockManager::Grow(BlockTable& table, int64_t new_length, std::vector<BlockCopy>* copies) {
  ROLLOUT_CHECK(copies != nullptr) << "KvBlockManager::Grow: copies must not be null";
  const int32_t needed = BlocksNeeded(table, new_length);
  if (new_length <= table.num_tokens) return true;
  if (needed > num_free_blocks()) return false;
  if (table.num_tokens % block_size() != 0) {
    BlockId& last = table.blocks.back();
    if (blocks_[last].ref_count > 1) {
      const BlockId copy = Allocate();
      copies->push_back(BlockCopy{last, copy});
      Release(last);  // still held by the tables it is shared with
      last = copy;
    }
  }
  const int64_t total = BlocksFor(new_length);
  while (static_cast<int64_t>(table.blocks.size()) < total) table.blocks.push_back(Allocate());
  table.num_tokens = new_length;
  return true;
}

BlockTable KvBlockManager::Fork(const BlockTable& table) {
  for (BlockId block : table.blocks) {
    CheckBlock(block);
    ROLLOUT_CHECK(blocks_[block].ref_count > 0)
        << "KvBlockManager::Fork: block " << block << " is not held by any table";
  }
  for (BlockId block : table.blocks) ++blocks_[block].ref_count;
  return table;
}

void KvBlockManager::Free(BlockTable& table) {
  // Last block first: a freed prefix is then evicted from its end, and its head (the
  // part other prompts most likely share) stays cached longest.
  for (auto it = table.blocks.rbegin(); it != table.blocks.rend(); ++it) Release(*it);
  table.blocks.clear();
  table.hashes.clear();
  table.num_tokens = 0;
}

int64_t KvBlockManager::MatchCachedPrefix(BlockTable& table, absl::Span<const int32_t> tokens) {
  ROLLOUT_CHECK(table.blocks.empty() && table.num_tokens == 0 && table.hashes.empty())
      << "KvBlockManager::MatchCachedPrefix needs an empty table, got one of "
      << table.num_tokens << " tokens";
  if (!options_.enable_prefix_caching || tokens.empty()) return 0;
  const int64_t size = block_size();
  // Whole blocks strictly before the last token: that token's logits must be computed.
  const int64_t max_blocks = (static_cast<int64_t>(tokens.size()) - 1) / size;
  uint64_t prev_hash = 0;
  uint64_t parent_serial = 0;
  for (int64_t i = 0; i < max_blocks; ++i) {
    const absl::Span<const int32_t> block_tokens = tokens.subspan(i * size, size);
    const uint64_t hash = hash_fn_(prev_hash, block_tokens);
    const BlockId block = FindRegistered(hash, block_tokens, parent_serial);
    if (block == kNone) break;
    AddRef(block);
    table.blocks.push_back(block);
    table.hashes.push_back(hash);
    prev_hash = hash;
    parent_serial = blocks_[block].serial;
  }
  table.num_tokens = static_cast<int64_t>(table.blocks.size()) * size;
  return table.num_tokens;
}

// Each newly full block is registered, or, when an identical block computed by another
// sequence holds its hash, certified by that block's registration (so the blocks after
// it can still chain). A different block under the same hash (a collision) ends the
// walk: later blocks would have no certified prefix. A duplicate's certificate can
// outlive the registration it names (that block evicted); blocks registered after it
// are then unreachable until evicted — a lost hit, never wrong KV.
void KvBlockManager::RegisterComputedBlocks(BlockTable& table, absl::Span<const int32_t> tokens,
                                            int64_t computed) {
  if (!options_.enable_prefix_caching) return;
  ROLLOUT_CHECK(computed >= 0 && computed <= table.num_tokens &&
                computed <= static_cast<int64_t>(tokens.size()))
      << "KvBlockManager::RegisterComputedBlocks: computed " << computed
      << " exceeds the table (" << table.num_tokens << " tokens) or the sequence ("
      << tokens.size() << " tokens)";
  const int64_t size = block_size();
  const int64_t full_blocks = computed / size;
  for (int64_t i = static_cast<int64_t>(table.hashes.size()); i < full_blocks; ++i) {
    const absl::Span<const int32_t> block_tokens = tokens.subspan(i * size, size);
    const uint64_t hash = hash_fn_(i == 0 ? 0 : table.hashes[i - 1], block_tokens);
    const uint64_t parent_serial = i == 0 ? 0 : blocks_[table.blocks[i - 1]].certified_by;
    ROLLOUT_CHECK(i == 0 || parent_serial != 0)
        << "KvBlockManager: block " << i - 1 << " is hashed but uncertified";
    const BlockId block = table.blocks[i];
    BlockState& state = blocks_[block];
    if (state.serial != 0) {
      // Registered through a table sharing it (a fork, or a cache match).
      ROLLOUT_CHECK(state.hash == hash)
          << "KvBlockManager::RegisterComputedBlocks: block " << block
          << " was registered with other tokens";
    } else if (registered_.count(hash) == 0) {
      state.serial = next_serial_++;
      state.parent_serial = parent_serial;
      state.hash = hash;
      state.certified_by = state.serial;
      registered_.emplace(hash, block);
      std::copy(block_tokens.begin(), block_tokens.end(),
                registered_tokens_.begin() + static_cast<int64_t>(block) * size);
    } else {
      const BlockId twin = FindRegistered(hash, block_tokens, parent_serial);
      if (twin == kNone) return;
      state.certified_by = blocks_[twin].serial;
    }
    table.hashes.push_back(hash);
  }
}

BlockId KvBlockManager::Allocate() {
  BlockId block;
  if (!free_unregistered_.empty()) {
    block = free_unregistered_.back();
    free_unregistered_.pop_back();
  } else {
    ROLLOUT_CHECK(lru_head_ != kNone) << "KvBlockManager: allocating with no free block";
    block = lru_head_;
    LruRemove(block);
    Unregister(block);
  }
  BlockState& state = blocks_[block];
  state.ref_count = 1;
  state.certified_by = 0;
  return block;
}

void KvBlockManager::AddRef(BlockId block) {
  BlockState& state = blocks_[block];
  if (state.ref_count == 0) LruRemove(block);
  ++state.ref_count;
}

void KvBlockManager::Release(BlockId block) {
  CheckBlock(block);
  BlockState& state = blocks_[block];
  ROLLOUT_CHECK(state.ref_count > 0)
      << "KvBlockManager: block " << block << " released more often than it was held";
  if (--state.ref_count > 0) return;
  if (state.serial != 0) {
    LruPushBack(block);
  } else {
    free_unregistered_.push_back(block);
  }
}

void KvBlockManager::DropPrefixCache() {
  while (lru_head_ != kNone) {
    const BlockId block = lru_head_;
    LruRemove(block);
    Unregister(block);
    free_unregistered_.push_back(block);
  }
  ROLLOUT_CHECK(registered_.empty())
      << "KvBlockManager: DropPrefixCache while a table holds " << registered_.size() << " registered blocks";
}

void KvBlockManager::Unregister(BlockId block) {
  BlockState& state = blocks_[block];
  const auto it = registered_.find(state.hash);
  ROLLOUT_CHECK(it != registered_.end() && it->second == block)
      << "KvBlockManager: block " << block << " is not registered under its hash";
  registered_.erase(it);
  state.serial = 0;
  state.parent_serial = 0;
  state.hash = 0;
  state.certified_by = 0;
}

void KvBlockManager::LruPushBack(BlockId block) {
  BlockState& state = blocks_[block];
  state.lru_prev = lru_tail_;
  state.lru_next = kNone;
  if (lru_tail_ != kNone) {
    blocks_[lru_tail_].lru_next = block;
  } else {
    lru_head_ = block;
  }
  lru_tail_ = block;
  ++num_evictable_;
}

void KvBlockManager::LruRemove(BlockId block) {
  BlockState& state = blocks_[block];
  if (state.lru_prev != kNone) {
    blocks_[state.lru_prev].lru_next = state.lru_next;
  } else {
    lru_head_ = state.lru_next;
  }
  if (state.lru_next != kNone) {
    blocks_[state.lru_next].lru_prev = state.lru_prev;
  } else {
    lru_tail_ = state.lru_prev;
  }
  state.lru_prev = kNone;
  state.lru_next = kNone;
  --num_evictable_;
}

absl::Span<const int32_t> KvBlockManager::RegisteredTokens(BlockId block) const {
  return absl::Span<const int32_t>(registered_tokens_)
      .subspan(static_cast<size_t>(block) * block_size(), block_size());
}

BlockId KvBlockManager::FindRegistered(uint64_t hash, absl::Span<const int32_t> tokens,
                                       uint64_t parent_serial) const {
  const auto it = registered_.find(hash);
  if (it == registered_.end()) return kNone;
  const BlockId block = it->second;
  if (blocks_[block].parent_serial != parent_serial) return kNone;
  const absl::Span<const int32_t> stored = RegisteredTokens(block);
  if (!std::equal(stored.begin(), stored.end(), tokens.begin(), tokens.end())) return kNone;
  return block;
}

int64_t KvBlockManager::BlocksFor(int64_t num_tokens) const {
  return (num_tokens + block_size() - 1) / block_size();
}

void KvBlockManager::CheckBlock(BlockId block) const {
  ROLLOUT_CHECK(block >= 0 && block < num_blocks())
      << "KvBlockManager: block " << block << " is out of range [0, " << num_blocks() << ")";
}

}  // namespace rollout::engine
