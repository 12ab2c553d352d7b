// Fixed-size KV-cache blocks for the rollout engine: which block holds which tokens'
// keys/values, how many sequences share each block, and (optionally) a cache of full
// prompt blocks keyed by content so later requests with the same prefix reuse them.
//
// The manager only does bookkeeping — block ids and reference counts; the tensors live
// in engine/paged_kv_cache.h, which performs the copies this class asks for.
//
// Sharing. Fork() gives a new sequence every block of an existing one (group prefix
// sharing: a GRPO prompt is prefilled once and forked into n samples). A block is
// written only while its reference count is 1: growing a table whose partial last
// block is shared first moves the table to a private copy (copy on write) and reports
// the copy, which must happen before the step writes.
//
// Prefix caching (Options::enable_prefix_caching). A full block whose tokens are all
// computed is registered under a hash of (hash of the previous block, its tokens).
// A new sequence first takes the longest run of registered blocks matching its
// tokens. Blocks nobody holds any more stay registered and are handed out again
// (least recently freed first) only when no never-registered block is free.
// A hash is only a lookup key: a registration keeps the block's tokens and which
// registration certified the tokens before it, and a match compares both, so a hash
// collision costs a cache miss, never wrong KV.
//
// Misuse (a contract below broken) fails a ROLLOUT_CHECK (common/check.h).
//
// Not thread-safe: the scheduler owns it and calls it from one thread.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "absl/types/span.h"

namespace rollout::engine {

using BlockId = int32_t;

// One sequence's blocks: token i's KV lives in blocks[i / block_size] at slot
// i % block_size. `num_tokens` is the number of token slots reserved (the length the
// table was grown to), not how many have been written.
struct BlockTable {
  std::vector<BlockId> blocks;
  int64_t num_tokens = 0;
  // Prefix caching: content hashes of blocks[0, hashes.size()), all full and with
  // registered content (the block itself, or an identical block computed elsewhere).
  // Maintained by the manager; callers only read it.
  std::vector<uint64_t> hashes;
};

// Copy block `src`'s KV into block `dst` (all layers) before the next step writes.
struct BlockCopy {
  BlockId src;
  BlockId dst;
};

class KvBlockManager {
 public:
  struct Options {
    int32_t num_blocks = 0;
    int32_t block_size = 16;
    bool enable_prefix_caching = false;
  };
  // CHECK-fails unless num_blocks >= 1 and block_size >= 1.
  explicit KvBlockManager(const Options& options);

  int32_t block_size() const { return options_.block_size; }
  int32_t num_blocks() const { return options_.num_blocks; }
  // Blocks no table holds (registered-but-unused prefix blocks count as free).
  int32_t num_free_blocks() const;
  // Blocks at least one table holds.
  int32_t num_used_blocks() const { return num_blocks() - num_free_blocks(); }
  int32_t ref_count(BlockId block) const;

  // Free blocks Grow(table, new_length) would take: new blocks for the added tokens
  // plus one when the partial last block is shared and must be copied.
  int32_t BlocksNeeded(const BlockTable& table, int64_t new_length) const;
  // Reserves slots for tokens [table.num_tokens, new_length). Returns false and changes
  // nothing when fewer than BlocksNeeded() blocks are free. Appends copy-on-write
  // copies to `copies` (never null). new_length <= table.num_tokens is a no-op
  // returning true. A shared last block that is full needs no copy: the new tokens go
  // into new blocks. Slots reserved before a Fork() are shared by both tables: the step
  // that writes them must write the same tokens for all (a prompt forked in the step
  // that computes it); tokens that differ need a Grow after the Fork.
  bool Grow(BlockTable& table, int64_t new_length, std::vector<BlockCopy>* copies);
  // A table sharing every block of `table` (each reference count + 1).
  BlockTable Fork(const BlockTable& table);
  // Drops the table's references and empties it. Blocks reaching 0 become free; of a
  // table's registered blocks the last is freed first, so eviction trims a cached
  // prefix from its end.
  void Free(BlockTable& table);

  // Prefix caching; both are no-ops (returning 0) when it is off.
  // For an empty table (CHECKed): takes the longest run of registered blocks matching
  // `tokens` from the start, but always leaves at least one token uncomputed (the step
  // must produce that position's logits). Returns the number of tokens whose KV is
  // reused, a multiple of block_size(); table.num_tokens is set to it.
  int64_t MatchCachedPrefix(BlockTable& table, absl::Span<const int32_t> tokens);
  // Registers table's full blocks among the first `computed` tokens of `tokens` (the
  // sequence's tokens; their KV is written). Blocks already registered are skipped.
  // CHECK-fails unless computed <= table.num_tokens and computed <= tokens.size().
  // Cost: O(block_size) per newly full block, nothing when no block filled up.
  void RegisterComputedBlocks(BlockTable& table, absl::Span<const int32_t> tokens,
                              int64_t computed);
  // Forgets every registration: the model's weights changed, so cached KV is stale.
  // Registered blocks become plain free blocks. Only while no table holds a registered
  // block (between Generate() calls); CHECK-fails otherwise.
  void DropPrefixCache();

 private:
  // Tests swap in a weak hash to force collisions.
  friend class KvBlockManagerTestPeer;
  using HashFn = uint64_t (*)(uint64_t prev_hash, absl::Span<const int32_t> tokens);
  static uint64_t HashBlockTokens(uint64_t prev_hash, absl::Span<const int32_t> tokens);

  static constexpr BlockId kNone = -1;

  struct BlockState {
    int32_t ref_count = 0;
    // Links in the evictable list (registered, reference count 0), oldest first.
    BlockId lru_prev = kNone;
    BlockId lru_next = kNone;
    // Registration; serial 0 = not registered. Serials are never reused, so a
    // parent_serial names one registration even after its block is evicted.
    uint64_t serial = 0;
    uint64_t parent_serial = 0;  // the registration certifying the tokens before
    uint64_t hash = 0;
    // The registration whose tokens and prefix this block's KV equals (its own serial
    // when registered, an identical block's when it is a duplicate; 0 = none).
    uint64_t certified_by = 0;
  };

  BlockId Allocate();
  void AddRef(BlockId block);
  void Release(BlockId block);
  void Unregister(BlockId block);
  void LruPushBack(BlockId block);
  void LruRemove(BlockId block);
  absl::Span<const int32_t> RegisteredTokens(BlockId block) const;
  // The registered block holding `hash`, if it has exactly `tokens` after the prefix
  // certified by `parent_serial`; kNone otherwise.
  BlockId FindRegistered(uint64_t hash, absl::Span<const int32_t> tokens,
                         uint64_t parent_serial) const;
  int64_t BlocksFor(int64_t num_tokens) const;  // ceil(num_tokens / block_size)
  void CheckBlock(BlockId block) const;

  Options options_;
  HashFn hash_fn_ = &HashBlockTokens;
  std::vector<BlockState> blocks_;
  // Free blocks that hold no registration; popped last-in first-out.
  std::vector<BlockId> free_unregistered_;
  // Registered blocks no table holds, least recently freed at the head.
  BlockId lru_head_ = kNone;
  BlockId lru_tail_ = kNone;
  int32_t num_evictable_ = 0;
  // Prefix caching only: hash -> registered block, and each registered block's tokens
  // ([num_blocks * block_size], block b at b * block_size).
  std::unordered_map<uint64_t, BlockId> registered_;
  std::vector<int32_t> registered_tokens_;
  uint64_t next_serial_ = 1;
};

}  // namespace rollout::engine
