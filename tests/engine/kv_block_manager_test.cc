#include "engine/kv_block_manager.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "tests/engine/kv_block_manager_test_peer.h"

namespace rollout::engine {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// Every block collides with every other.
uint64_t ConstantHash(uint64_t, absl::Span<const int32_t>) { return 7; }

// Ignores the previous block: equal blocks after different prefixes collide.
uint64_t TokensOnlyHash(uint64_t, absl::Span<const int32_t> tokens) {
  uint64_t hash = 0;
  for (int32_t token : tokens) hash = hash * 31 + static_cast<uint32_t>(token);
  return hash;
}

KvBlockManager MakeManager(int32_t num_blocks, int32_t block_size, bool prefix_caching = false) {
  KvBlockManager::Options options;
  options.num_blocks = num_blocks;
  options.block_size = block_size;
  options.enable_prefix_caching = prefix_caching;
  return KvBlockManager(options);
}

// What the scheduler does for a new prompt: reuse the cached prefix, reserve the rest,
// compute it, register the full blocks.
BlockTable Prefill(KvBlockManager& manager, const std::vector<int32_t>& tokens) {
  BlockTable table;
  manager.MatchCachedPrefix(table, tokens);
  std::vector<BlockCopy> copies;
  EXPECT_TRUE(manager.Grow(table, static_cast<int64_t>(tokens.size()), &copies));
  EXPECT_THAT(copies, IsEmpty());
  manager.RegisterComputedBlocks(table, tokens, static_cast<int64_t>(tokens.size()));
  return table;
}

int64_t MatchAndFree(KvBlockManager& manager, const std::vector<int32_t>& tokens) {
  BlockTable table;
  const int64_t matched = manager.MatchCachedPrefix(table, tokens);
  manager.Free(table);
  return matched;
}

TEST(KvBlockManagerDeathTest, ConstructorRejectsEmptyPoolAndZeroBlockSize) {
  EXPECT_DEATH(MakeManager(0, 16), "num_blocks 0");
  EXPECT_DEATH(MakeManager(4, 0), "block_size 0");
  KvBlockManager manager = MakeManager(1, 1);
  EXPECT_EQ(manager.num_free_blocks(), 1);
}

TEST(KvBlockManager, GrowTakesOneBlockPerBlockSizeTokensAndFreeReturnsThem) {
  KvBlockManager manager = MakeManager(8, 4);
  EXPECT_EQ(manager.num_free_blocks(), 8);
  BlockTable table;
  std::vector<BlockCopy> copies;
  ASSERT_TRUE(manager.Grow(table, 1, &copies));
  EXPECT_EQ(table.blocks.size(), 1u);
  ASSERT_TRUE(manager.Grow(table, 4, &copies));
  EXPECT_EQ(table.blocks.size(), 1u);
  ASSERT_TRUE(manager.Grow(table, 5, &copies));
  EXPECT_EQ(table.blocks.size(), 2u);
  ASSERT_TRUE(manager.Grow(table, 13, &copies));
  EXPECT_EQ(table.blocks.size(), 4u);
  EXPECT_EQ(table.num_tokens, 13);
  EXPECT_THAT(copies, IsEmpty());
  EXPECT_EQ(manager.num_free_blocks(), 4);
  EXPECT_EQ(manager.num_used_blocks(), 4);
  for (BlockId block : table.blocks) EXPECT_EQ(manager.ref_count(block), 1);

  const std::vector<BlockId> held = table.blocks;
  manager.Free(table);
  EXPECT_THAT(table.blocks, IsEmpty());
  EXPECT_EQ(table.num_tokens, 0);
  EXPECT_EQ(manager.num_free_blocks(), 8);
  for (BlockId block : held) EXPECT_EQ(manager.ref_count(block), 0);
}

TEST(KvBlockManager, GrowToCurrentOrShorterLengthIsANoOp) {
  KvBlockManager manager = MakeManager(2, 4);
  BlockTable table;
  std::vector<BlockCopy> copies;
  ASSERT_TRUE(manager.Grow(table, 6, &copies));
  EXPECT_TRUE(manager.Grow(table, 6, &copies));
  EXPECT_TRUE(manager.Grow(table, 2, &copies));
  EXPECT_EQ(table.num_tokens, 6);
  EXPECT_EQ(table.blocks.size(), 2u);
  EXPECT_EQ(manager.num_free_blocks(), 0);
  EXPECT_EQ(manager.BlocksNeeded(table, 3), 0);
}

TEST(KvBlockManager, ForkSharesBlocksAndCopiesPartialBlockOnWrite) {
  KvBlockManager manager = MakeManager(8, 4);
  BlockTable parent;
  std::vector<BlockCopy> copies;
  ASSERT_TRUE(manager.Grow(parent, 6, &copies));  // one full block, one partial
  BlockTable child = manager.Fork(parent);
  EXPECT_EQ(child.blocks, parent.blocks);
  EXPECT_EQ(child.num_tokens, 6);
  EXPECT_EQ(manager.num_free_blocks(), 6);
  EXPECT_EQ(manager.ref_count(parent.blocks[0]), 2);
  EXPECT_EQ(manager.ref_count(parent.blocks[1]), 2);

  ASSERT_TRUE(manager.Grow(child, 7, &copies));
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0].src, parent.blocks[1]);
  EXPECT_EQ(copies[0].dst, child.blocks[1]);
  EXPECT_NE(child.blocks[1], parent.blocks[1]);
  EXPECT_EQ(child.blocks[0], parent.blocks[0]);  // the full block stays shared
  EXPECT_EQ(manager.ref_count(parent.blocks[0]), 2);
  EXPECT_EQ(manager.ref_count(parent.blocks[1]), 1);
  EXPECT_EQ(manager.ref_count(child.blocks[1]), 1);
  EXPECT_EQ(manager.num_free_blocks(), 5);
}

TEST(KvBlockManager, LastSharerOfPartialBlockWritesWithoutCopy) {
  KvBlockManager manager = MakeManager(8, 4);
  BlockTable parent;
  std::vector<BlockCopy> copies;
  ASSERT_TRUE(manager.Grow(parent, 6, &copies));
  BlockTable child = manager.Fork(parent);
  ASSERT_TRUE(manager.Grow(child, 7, &copies));
  ASSERT_EQ(copies.size(), 1u);

  copies.clear();
  const BlockId partial = parent.blocks[1];
  EXPECT_EQ(manager.BlocksNeeded(parent, 8), 0);
  ASSERT_TRUE(manager.Grow(parent, 8, &copies));
  EXPECT_THAT(copies, IsEmpty());
  EXPECT_EQ(parent.blocks[1], partial);
}

TEST(KvBlockManager, SharedFullLastBlockNeedsNoCopy) {
  KvBlockManager manager = MakeManager(8, 4);
  BlockTable parent;
  std::vector<BlockCopy> copies;
  ASSERT_TRUE(manager.Grow(parent, 8, &copies));
  BlockTable child = manager.Fork(parent);
  EXPECT_EQ(manager.BlocksNeeded(child, 9), 1);
  ASSERT_TRUE(manager.Grow(child, 9, &copies));
  EXPECT_THAT(copies, IsEmpty());
  ASSERT_EQ(child.blocks.size(), 3u);
  EXPECT_EQ(child.blocks[0], parent.blocks[0]);
  EXPECT_EQ(child.blocks[1], parent.blocks[1]);
  EXPECT_EQ(manager.ref_count(parent.blocks[1]), 2);
  EXPECT_EQ(manager.ref_count(child.blocks[2]), 1);
}

TEST(KvBlockManager, GrowFailureLeavesStateUnchanged) {
  KvBlockManager manager = MakeManager(3, 4);
  BlockTable parent;
  std::vector<BlockCopy> copies;
  ASSERT_TRUE(manager.Grow(parent, 6, &copies));
  BlockTable child = manager.Fork(parent);
  // Copy of the partial block + one new block, with one free.
  ASSERT_EQ(manager.BlocksNeeded(child, 9), 2);
  const BlockTable before = child;
  EXPECT_FALSE(manager.Grow(child, 9, &copies));
  EXPECT_THAT(copies, IsEmpty());
  EXPECT_EQ(child.blocks, before.blocks);
  EXPECT_EQ(child.num_tokens, before.num_tokens);
  EXPECT_EQ(manager.num_free_blocks(), 1);
  EXPECT_EQ(manager.ref_count(parent.blocks[0]), 2);
  EXPECT_EQ(manager.ref_count(parent.blocks[1]), 2);

  BlockTable other;
  EXPECT_FALSE(manager.Grow(other, 5, &copies));
  EXPECT_THAT(other.blocks, IsEmpty());
  EXPECT_EQ(other.num_tokens, 0);
  EXPECT_EQ(manager.num_free_blocks(), 1);
  EXPECT_TRUE(manager.Grow(child, 8, &copies));  // the copy alone fits
}

TEST(KvBlockManager, BlocksNeededMatchesWhatGrowTakes) {
  struct Case {
    int64_t length;
    bool forked;
    int64_t new_length;
    int32_t needed;
  };
  const Case cases[] = {
      {0, false, 0, 0},   {0, false, 1, 1},  {0, false, 4, 1},  {0, false, 5, 2},
      {3, false, 4, 0},   {3, false, 5, 1},  {4, false, 5, 1},  {4, false, 12, 2},
      {3, true, 4, 1},    {3, true, 9, 3},   {4, true, 5, 1},   {8, true, 8, 0},
      {6, true, 5, 0},    {5, false, 4, 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message() << "length " << c.length << " forked " << c.forked
                                      << " new_length " << c.new_length);
    KvBlockManager manager = MakeManager(16, 4);
    BlockTable table;
    std::vector<BlockCopy> copies;
    ASSERT_TRUE(manager.Grow(table, c.length, &copies));
    BlockTable fork;
    if (c.forked) fork = manager.Fork(table);
    EXPECT_EQ(manager.BlocksNeeded(table, c.new_length), c.needed);
    const int32_t free_before = manager.num_free_blocks();
    ASSERT_TRUE(manager.Grow(table, c.new_length, &copies));
    EXPECT_EQ(free_before - manager.num_free_blocks(), c.needed);
  }
}

TEST(KvBlockManager, FreeKeepsSharedBlocksUntilTheLastHolderFrees) {
  KvBlockManager manager = MakeManager(4, 2);
  BlockTable a;
  std::vector<BlockCopy> copies;
  ASSERT_TRUE(manager.Grow(a, 4, &copies));
  BlockTable b = manager.Fork(a);
  BlockTable c = manager.Fork(b);
  const std::vector<BlockId> held = a.blocks;
  manager.Free(a);
  EXPECT_EQ(manager.num_free_blocks(), 2);
  EXPECT_EQ(manager.ref_count(held[0]), 2);
  manager.Free(c);
  EXPECT_EQ(manager.ref_count(held[0]), 1);
  manager.Free(b);
  EXPECT_EQ(manager.ref_count(held[0]), 0);
  EXPECT_EQ(manager.num_free_blocks(), 4);
  manager.Free(b);  // an empty table frees nothing
  EXPECT_EQ(manager.num_free_blocks(), 4);
}

TEST(KvBlockManagerDeathTest, MisuseFailsACheck) {
  KvBlockManager manager = MakeManager(4, 2, /*prefix_caching=*/true);
  EXPECT_DEATH(manager.ref_count(-1), "block -1 is out of range");
  EXPECT_DEATH(manager.ref_count(4), "block 4 is out of range");
  BlockTable table;
  EXPECT_DEATH(manager.Grow(table, 2, nullptr), "copies must not be null");
  const std::vector<int32_t> tokens = {1, 2, 3};
  table = Prefill(manager, tokens);
  EXPECT_DEATH(manager.MatchCachedPrefix(table, tokens), "needs an empty table");
  EXPECT_DEATH(manager.RegisterComputedBlocks(table, tokens, 4), "computed 4 exceeds");
  EXPECT_DEATH(manager.RegisterComputedBlocks(table, {1}, 2), "computed 2 exceeds");
  BlockTable fork = manager.Fork(table);
  fork.hashes.clear();
  EXPECT_DEATH(manager.RegisterComputedBlocks(fork, {9, 9, 9}, 3), "registered with other tokens");
  BlockTable mangled = table;
  mangled.num_tokens = 5;  // three blocks' worth, two blocks held
  EXPECT_DEATH(manager.BlocksNeeded(mangled, 6), "holds 2 blocks");
  BlockTable stale = table;
  manager.Free(table);
  manager.Free(fork);
  EXPECT_DEATH(manager.Fork(stale), "not held by any table");
  EXPECT_DEATH(manager.Free(stale), "released more often than it was held");
}

TEST(KvBlockManagerPrefixCache, OffMatchesNothing) {
  KvBlockManager manager = MakeManager(4, 2);
  const std::vector<int32_t> tokens = {1, 2, 3, 4, 5};
  BlockTable table = Prefill(manager, tokens);
  EXPECT_THAT(table.hashes, IsEmpty());
  manager.Free(table);
  EXPECT_EQ(MatchAndFree(manager, tokens), 0);
  EXPECT_EQ(manager.num_free_blocks(), 4);
}

TEST(KvBlockManagerPrefixCache, HitReusesRegisteredBlocksOfAFreedSequence) {
  KvBlockManager manager = MakeManager(8, 4, /*prefix_caching=*/true);
  const std::vector<int32_t> prompt = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  BlockTable first = Prefill(manager, prompt);
  EXPECT_EQ(first.hashes.size(), 2u);
  const std::vector<BlockId> cached = {first.blocks[0], first.blocks[1]};
  manager.Free(first);
  EXPECT_EQ(manager.num_free_blocks(), 8);

  BlockTable second;
  std::vector<int32_t> longer = prompt;
  longer.push_back(11);
  EXPECT_EQ(manager.MatchCachedPrefix(second, longer), 8);
  EXPECT_EQ(second.num_tokens, 8);
  EXPECT_EQ(second.blocks, cached);
  EXPECT_EQ(second.hashes.size(), 2u);
  EXPECT_EQ(manager.ref_count(cached[0]), 1);
  EXPECT_EQ(manager.num_free_blocks(), 6);
}

TEST(KvBlockManagerPrefixCache, DropForgetsEveryRegistrationAndKeepsBlocksFree) {
  KvBlockManager manager = MakeManager(8, 4, /*prefix_caching=*/true);
  const std::vector<int32_t> prompt = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  BlockTable first = Prefill(manager, prompt);
  manager.Free(first);
  manager.DropPrefixCache();
  EXPECT_EQ(manager.num_free_blocks(), 8);
  EXPECT_EQ(MatchAndFree(manager, prompt), 0);
  // Registering again after the drop works as on a fresh manager.
  BlockTable again = Prefill(manager, prompt);
  EXPECT_EQ(again.hashes.size(), 2u);
  manager.Free(again);
  EXPECT_EQ(MatchAndFree(manager, prompt), 8);
}

TEST(KvBlockManagerDeathTest, DropWhileATableHoldsRegisteredBlocksFails) {
  KvBlockManager manager = MakeManager(8, 4, /*prefix_caching=*/true);
  BlockTable held = Prefill(manager, {1, 2, 3, 4, 5});
  EXPECT_DEATH(manager.DropPrefixCache(), "DropPrefixCache while a table holds 1 registered blocks");
}

TEST(KvBlockManagerPrefixCache, HitSharesBlocksWithALiveSequenceAndGrowsWithoutCopy) {
  KvBlockManager manager = MakeManager(8, 4, /*prefix_caching=*/true);
  const std::vector<int32_t> prompt = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  BlockTable first = Prefill(manager, prompt);
  BlockTable second;
  EXPECT_EQ(manager.MatchCachedPrefix(second, prompt), 8);
  EXPECT_EQ(manager.ref_count(first.blocks[1]), 2);
  std::vector<BlockCopy> copies;
  ASSERT_TRUE(manager.Grow(second, 9, &copies));
  EXPECT_THAT(copies, IsEmpty());
  EXPECT_NE(second.blocks[2], first.blocks[2]);
}

TEST(KvBlockManagerPrefixCache, MissesFromTheFirstDifferingBlock) {
  KvBlockManager manager = MakeManager(8, 4, /*prefix_caching=*/true);
  BlockTable first = Prefill(manager, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  EXPECT_EQ(MatchAndFree(manager, {1, 2, 3, 4, 5, 6, 0, 8, 9}), 4);
  EXPECT_EQ(MatchAndFree(manager, {0, 2, 3, 4, 5, 6, 7, 8, 9}), 0);
  EXPECT_EQ(MatchAndFree(manager, {1, 2, 3}), 0);
}

TEST(KvBlockManagerPrefixCache, AlwaysLeavesOneTokenToCompute) {
  KvBlockManager manager = MakeManager(8, 4, /*prefix_caching=*/true);
  const std::vector<int32_t> prompt = {1, 2, 3, 4, 5, 6, 7, 8};
  BlockTable first = Prefill(manager, prompt);
  ASSERT_EQ(first.hashes.size(), 2u);
  EXPECT_EQ(MatchAndFree(manager, prompt), 4);
  EXPECT_EQ(MatchAndFree(manager, {1, 2, 3, 4}), 0);
  EXPECT_EQ(MatchAndFree(manager, {1, 2, 3, 4, 5}), 4);
  EXPECT_EQ(MatchAndFree(manager, {1, 2, 3, 4, 5, 6, 7, 8, 0}), 8);
  EXPECT_EQ(MatchAndFree(manager, {}), 0);

  KvBlockManager single = MakeManager(4, 1, /*prefix_caching=*/true);
  BlockTable one = Prefill(single, {5, 6});
  EXPECT_EQ(MatchAndFree(single, {5, 6}), 1);
  EXPECT_EQ(MatchAndFree(single, {5}), 0);
}

TEST(KvBlockManagerPrefixCache, PartialPromptBlockIsNotRegistered) {
  KvBlockManager manager = MakeManager(8, 4, /*prefix_caching=*/true);
  BlockTable first = Prefill(manager, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(first.hashes.size(), 1u);
  manager.Free(first);
  EXPECT_EQ(MatchAndFree(manager, {1, 2, 3, 4, 5, 6, 7, 8, 9}), 4);
}

TEST(KvBlockManagerPrefixCache, RegistersOnlyComputedTokens) {
  KvBlockManager manager = MakeManager(8, 4, /*prefix_caching=*/true);
  const std::vector<int32_t> tokens = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  BlockTable table;
  std::vector<BlockCopy> copies;
  ASSERT_TRUE(manager.Grow(table, 9, &copies));
  manager.RegisterComputedBlocks(table, tokens, 7);
  EXPECT_EQ(table.hashes.size(), 1u);
  EXPECT_EQ(MatchAndFree(manager, tokens), 4);
  manager.RegisterComputedBlocks(table, tokens, 9);
  EXPECT_EQ(table.hashes.size(), 2u);
  EXPECT_EQ(MatchAndFree(manager, tokens), 8);
}

TEST(KvBlockManagerPrefixCache, CachedFreeBlocksCountAsFreeAndAreHandedOut) {
  KvBlockManager manager = MakeManager(3, 2, /*prefix_caching=*/true);
  BlockTable first = Prefill(manager, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(first.hashes.size(), 3u);
  manager.Free(first);
  EXPECT_EQ(manager.num_free_blocks(), 3);
  EXPECT_EQ(manager.num_used_blocks(), 0);
  BlockTable other;
  std::vector<BlockCopy> copies;
  ASSERT_TRUE(manager.Grow(other, 6, &copies));
  EXPECT_EQ(manager.num_free_blocks(), 0);
  manager.Free(other);
  EXPECT_EQ(MatchAndFree(manager, {1, 2, 3, 4, 5, 6, 7}), 0);  // all evicted
}

TEST(KvBlockManagerPrefixCache, PrefersNeverRegisteredBlocksOverEvicting) {
  KvBlockManager manager = MakeManager(4, 2, /*prefix_caching=*/true);
  BlockTable first = Prefill(manager, {1, 2, 3});  // block 0 registered, block 1 partial
  manager.Free(first);
  BlockTable other;
  std::vector<BlockCopy> copies;
  ASSERT_TRUE(manager.Grow(other, 6, &copies));  // the three never-registered blocks
  EXPECT_EQ(MatchAndFree(manager, {1, 2, 3}), 2);
  BlockTable last;
  ASSERT_TRUE(manager.Grow(last, 1, &copies));  // now the cached block goes
  EXPECT_EQ(MatchAndFree(manager, {1, 2, 3}), 0);
}

TEST(KvBlockManagerPrefixCache, EvictsLeastRecentlyFreedFirst) {
  KvBlockManager manager = MakeManager(4, 2, /*prefix_caching=*/true);
  BlockTable a = Prefill(manager, {1, 2, 3});
  BlockTable b = Prefill(manager, {4, 5, 6});
  manager.Free(a);
  manager.Free(b);
  BlockTable other;
  std::vector<BlockCopy> copies;
  ASSERT_TRUE(manager.Grow(other, 4, &copies));  // the two partial blocks
  ASSERT_TRUE(manager.Grow(other, 5, &copies));  // evicts a's block
  EXPECT_EQ(MatchAndFree(manager, {1, 2, 3}), 0);
  EXPECT_EQ(MatchAndFree(manager, {4, 5, 6}), 2);
}

TEST(KvBlockManagerPrefixCache, EvictionTrimsAFreedPrefixFromItsEnd) {
  KvBlockManager manager = MakeManager(3, 2, /*prefix_caching=*/true);
  BlockTable first = Prefill(manager, {1, 2, 3, 4, 5});
  ASSERT_EQ(first.hashes.size(), 2u);
  const BlockId head = first.blocks[0];
  manager.Free(first);
  BlockTable other;
  std::vector<BlockCopy> copies;
  ASSERT_TRUE(manager.Grow(other, 4, &copies));  // the partial block, then one eviction
  BlockTable again;
  EXPECT_EQ(manager.MatchCachedPrefix(again, {1, 2, 3, 4, 5}), 2);
  EXPECT_THAT(again.blocks, ElementsAre(head));
}

TEST(KvBlockManagerPrefixCache, MatchedBlockLeavesTheEvictionQueue) {
  KvBlockManager manager = MakeManager(2, 2, /*prefix_caching=*/true);
  BlockTable first = Prefill(manager, {1, 2, 3});
  manager.Free(first);
  BlockTable holder;
  ASSERT_EQ(manager.MatchCachedPrefix(holder, {1, 2, 3}), 2);
  EXPECT_EQ(manager.num_free_blocks(), 1);
  BlockTable other;
  std::vector<BlockCopy> copies;
  ASSERT_TRUE(manager.Grow(other, 2, &copies));
  EXPECT_FALSE(manager.Grow(other, 3, &copies));
  EXPECT_EQ(manager.ref_count(holder.blocks[0]), 1);
  BlockTable sharer;
  EXPECT_EQ(manager.MatchCachedPrefix(sharer, {1, 2, 9}), 2);
  EXPECT_EQ(manager.ref_count(holder.blocks[0]), 2);
}

TEST(KvBlockManagerPrefixCache, HashCollisionNeverMatchesDifferentTokens) {
  KvBlockManager manager = MakeManager(8, 2, /*prefix_caching=*/true);
  KvBlockManagerTestPeer::UseHash(manager, &ConstantHash);
  BlockTable first = Prefill(manager, {1, 2, 3});
  ASSERT_EQ(first.hashes.size(), 1u);
  EXPECT_EQ(MatchAndFree(manager, {5, 6, 7}), 0);
  BlockTable second = Prefill(manager, {5, 6, 7});
  EXPECT_THAT(second.hashes, IsEmpty());  // its hash is taken by other tokens
  manager.Free(second);
  manager.Free(first);
  EXPECT_EQ(MatchAndFree(manager, {1, 2, 3}), 2);
  EXPECT_EQ(MatchAndFree(manager, {5, 6, 7}), 0);
}

TEST(KvBlockManagerPrefixCache, BlockComputedAfterADifferentPrefixNeverMatches) {
  KvBlockManager manager = MakeManager(8, 2, /*prefix_caching=*/true);
  KvBlockManagerTestPeer::UseHash(manager, &TokensOnlyHash);
  BlockTable a = Prefill(manager, {1, 2, 5, 6, 9});
  BlockTable c = Prefill(manager, {3, 4, 0});
  manager.Free(a);
  manager.Free(c);
  // [5, 6] after [3, 4] hashes like [5, 6] after [1, 2], but its KV differs.
  EXPECT_EQ(MatchAndFree(manager, {3, 4, 5, 6, 7}), 2);
  EXPECT_EQ(MatchAndFree(manager, {1, 2, 5, 6, 7}), 4);
}

TEST(KvBlockManagerPrefixCache, IdenticalBlocksComputedTwiceRegisterOnceAndChainOn) {
  KvBlockManager manager = MakeManager(8, 2, /*prefix_caching=*/true);
  BlockTable first;
  BlockTable second;
  ASSERT_EQ(manager.MatchCachedPrefix(first, {1, 2, 3, 4, 5}), 0);
  ASSERT_EQ(manager.MatchCachedPrefix(second, {1, 2, 3, 4, 6}), 0);
  std::vector<BlockCopy> copies;
  ASSERT_TRUE(manager.Grow(first, 5, &copies));
  ASSERT_TRUE(manager.Grow(second, 5, &copies));
  manager.RegisterComputedBlocks(first, {1, 2, 3, 4, 5}, 5);
  manager.RegisterComputedBlocks(second, {1, 2, 3, 4, 6}, 5);
  EXPECT_EQ(second.hashes, first.hashes);
  ASSERT_TRUE(manager.Grow(second, 7, &copies));
  manager.RegisterComputedBlocks(second, {1, 2, 3, 4, 6, 7, 8}, 7);
  EXPECT_EQ(second.hashes.size(), 3u);

  BlockTable third;
  EXPECT_EQ(manager.MatchCachedPrefix(third, {1, 2, 3, 4, 6, 7, 8}), 6);
  EXPECT_THAT(third.blocks, ElementsAre(first.blocks[0], first.blocks[1], second.blocks[2]));
}

TEST(KvBlockManagerPrefixCache, ForkedSequencesRegisterSharedBlocksOnce) {
  KvBlockManager manager = MakeManager(8, 2, /*prefix_caching=*/true);
  const std::vector<int32_t> tokens = {1, 2, 3, 4, 5};
  BlockTable parent;
  std::vector<BlockCopy> copies;
  ASSERT_TRUE(manager.Grow(parent, 5, &copies));
  BlockTable child = manager.Fork(parent);
  manager.RegisterComputedBlocks(parent, tokens, 5);
  manager.RegisterComputedBlocks(child, tokens, 5);
  EXPECT_EQ(child.hashes, parent.hashes);
  BlockTable reader;
  EXPECT_EQ(manager.MatchCachedPrefix(reader, tokens), 4);
  EXPECT_THAT(reader.blocks, ElementsAre(parent.blocks[0], parent.blocks[1]));
  EXPECT_EQ(manager.ref_count(parent.blocks[0]), 3);
}

}  // namespace
}  // namespace rollout::engine
