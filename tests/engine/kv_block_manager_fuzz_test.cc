// Random fork/grow/free/prefix-cache traffic through KvBlockManager, checked after
// every operation against a model of the KV contents.
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

using ::testing::IsEmpty;

// Random fork/grow/free/prefix-cache traffic against a model of the KV contents: each
// slot holds a digest of the token prefix it was computed for, so a missing copy, a
// write into a shared block or a wrong cache hit shows up as a digest mismatch.
class KvBlockManagerSimulation {
 public:
  KvBlockManagerSimulation(uint32_t seed, const KvBlockManager::Options& options, bool weak_hash,
                           int32_t vocab)
      : rng_(seed),
        manager_(options),
        block_size_(options.block_size),
        caching_(options.enable_prefix_caching),
        vocab_(vocab),
        kv_(static_cast<size_t>(options.num_blocks) * options.block_size, 0) {
    if (weak_hash) KvBlockManagerTestPeer::UseHash(manager_, &WeakHash);
    for (int i = 0; i < 4; ++i) base_prompts_.push_back(RandomTokens(Uniform(1, 24)));
  }

  void Step() {
    const int op = Uniform(0, 99);
    if (op < 30 && sequences_.size() < kMaxSequences) {
      StartSequence();
    } else if (op < 65 && !sequences_.empty()) {
      Extend(Pick());
    } else if (op < 80 && !sequences_.empty() && sequences_.size() < kMaxSequences) {
      const Sequence& parent = sequences_[Pick()];
      Sequence child;
      child.tokens = parent.tokens;
      child.table = manager_.Fork(parent.table);
      sequences_.push_back(std::move(child));
    } else if (!sequences_.empty()) {
      FreeSequence(Pick());
    }
  }

  // Reference counts equal the number of tables holding each block, free counts agree,
  // every table is well formed and every live sequence still reads its own KV.
  void CheckInvariants() {
    std::vector<int32_t> holders(kv_.size() / block_size_, 0);
    for (const Sequence& sequence : sequences_) {
      const BlockTable& table = sequence.table;
      EXPECT_EQ(table.num_tokens, static_cast<int64_t>(sequence.tokens.size()));
      EXPECT_EQ(static_cast<int64_t>(table.blocks.size()),
                (table.num_tokens + block_size_ - 1) / block_size_);
      EXPECT_LE(static_cast<int64_t>(table.hashes.size()), table.num_tokens / block_size_);
      if (!caching_) {
        EXPECT_THAT(table.hashes, IsEmpty());
      }
      for (BlockId block : table.blocks) ++holders[block];
      ExpectKv(sequence, table.num_tokens);
    }
    int32_t free_blocks = 0;
    for (BlockId block = 0; block < static_cast<BlockId>(holders.size()); ++block) {
      EXPECT_EQ(manager_.ref_count(block), holders[block]) << "block " << block;
      free_blocks += holders[block] == 0;
    }
    EXPECT_EQ(manager_.num_free_blocks(), free_blocks);
    EXPECT_EQ(manager_.num_used_blocks(), manager_.num_blocks() - free_blocks);
  }

  void FreeAll() {
    while (!sequences_.empty()) FreeSequence(sequences_.size() - 1);
    EXPECT_EQ(manager_.num_free_blocks(), manager_.num_blocks());
    for (BlockId block = 0; block < manager_.num_blocks(); ++block) {
      EXPECT_EQ(manager_.ref_count(block), 0);
    }
  }

 private:
  static constexpr size_t kMaxSequences = 12;
  static constexpr size_t kMaxTokens = 64;

  struct Sequence {
    std::vector<int32_t> tokens;  // all computed: table.num_tokens == tokens.size()
    BlockTable table;
  };

  static uint64_t WeakHash(uint64_t prev_hash, absl::Span<const int32_t> tokens) {
    return (prev_hash + static_cast<uint64_t>(tokens[0])) % 3;
  }

  int Uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  size_t Pick() { return static_cast<size_t>(Uniform(0, static_cast<int>(sequences_.size()) - 1)); }
  std::vector<int32_t> RandomTokens(int n) {
    std::vector<int32_t> tokens(n);
    for (int32_t& token : tokens) token = Uniform(0, vocab_ - 1);
    return tokens;
  }

  // The digest of tokens[0, p] for each position p.
  static std::vector<uint64_t> Digests(const std::vector<int32_t>& tokens) {
    std::vector<uint64_t> digests;
    uint64_t digest = 0;
    for (int32_t token : tokens) {
      digest = (digest ^ (static_cast<uint64_t>(token) + 0x9e37)) * 0x100000001b3ULL + 1;
      digests.push_back(digest);
    }
    return digests;
  }

  uint64_t& Slot(const BlockTable& table, int64_t position) {
    return kv_[static_cast<size_t>(table.blocks[position / block_size_]) * block_size_ +
               position % block_size_];
  }

  void ExpectKv(const Sequence& sequence, int64_t end) {
    const std::vector<uint64_t> digests = Digests(sequence.tokens);
    for (int64_t p = 0; p < end; ++p) {
      ASSERT_EQ(Slot(sequence.table, p), digests[p]) << "position " << p;
    }
  }

  // "Computes" positions [begin, tokens.size()): only into blocks this table alone holds.
  void Write(Sequence& sequence, int64_t begin) {
    const std::vector<uint64_t> digests = Digests(sequence.tokens);
    for (int64_t p = begin; p < static_cast<int64_t>(sequence.tokens.size()); ++p) {
      ASSERT_EQ(manager_.ref_count(sequence.table.blocks[p / block_size_]), 1)
          << "writing position " << p << " into a shared block";
      Slot(sequence.table, p) = digests[p];
    }
  }

  // Grow, checking it against BlocksNeeded and, on failure, that nothing changed.
  bool CheckedGrow(BlockTable& table, int64_t new_length) {
    std::vector<int32_t> refs;
    for (BlockId block = 0; block < manager_.num_blocks(); ++block) {
      refs.push_back(manager_.ref_count(block));
    }
    const BlockTable before = table;
    const int32_t free_before = manager_.num_free_blocks();
    const int32_t needed = manager_.BlocksNeeded(table, new_length);
    std::vector<BlockCopy> copies;
    const bool grown = manager_.Grow(table, new_length, &copies);
    EXPECT_EQ(grown, needed <= free_before);
    if (!grown) {
      EXPECT_EQ(table.blocks, before.blocks);
      EXPECT_EQ(table.num_tokens, before.num_tokens);
      EXPECT_THAT(copies, IsEmpty());
      EXPECT_EQ(manager_.num_free_blocks(), free_before);
      for (BlockId block = 0; block < manager_.num_blocks(); ++block) {
        EXPECT_EQ(manager_.ref_count(block), refs[block]);
      }
      return false;
    }
    EXPECT_EQ(free_before - manager_.num_free_blocks(), needed);
    EXPECT_LE(copies.size(), 1u);
    for (const BlockCopy& copy : copies) {
      EXPECT_EQ(manager_.ref_count(copy.dst), 1);
      EXPECT_GE(manager_.ref_count(copy.src), 1);
      std::copy_n(kv_.begin() + static_cast<int64_t>(copy.src) * block_size_, block_size_,
                  kv_.begin() + static_cast<int64_t>(copy.dst) * block_size_);
    }
    const size_t full = static_cast<size_t>(before.num_tokens / block_size_);
    for (size_t i = 0; i < full; ++i) EXPECT_EQ(table.blocks[i], before.blocks[i]);
    return true;
  }

  void StartSequence() {
    Sequence sequence;
    const std::vector<int32_t>& base = base_prompts_[Uniform(0, 3)];
    sequence.tokens.assign(base.begin(), base.begin() + Uniform(1, base.size()));
    for (int32_t token : RandomTokens(Uniform(0, 6))) sequence.tokens.push_back(token);
    const int64_t matched = manager_.MatchCachedPrefix(sequence.table, sequence.tokens);
    EXPECT_EQ(matched, sequence.table.num_tokens);
    EXPECT_LT(matched, static_cast<int64_t>(sequence.tokens.size()));
    EXPECT_EQ(matched % block_size_, 0);
    if (!caching_) {
      EXPECT_EQ(matched, 0);
    }
    ExpectKv(sequence, matched);
    if (!CheckedGrow(sequence.table, sequence.tokens.size())) {
      manager_.Free(sequence.table);
      return;
    }
    Write(sequence, matched);
    manager_.RegisterComputedBlocks(sequence.table, sequence.tokens, sequence.tokens.size());
    sequences_.push_back(std::move(sequence));
  }

  // Appends one token (a decode step) or a few (a chunk). When the pool is full the
  // sequence waits or, half the time, is preempted (freed).
  void Extend(size_t index) {
    Sequence& sequence = sequences_[index];
    if (sequence.tokens.size() >= kMaxTokens) {
      FreeSequence(index);
      return;
    }
    const int64_t old_length = sequence.tokens.size();
    const int added = Uniform(0, 4) == 0 ? Uniform(1, 5) : 1;
    if (!CheckedGrow(sequence.table, old_length + added)) {
      if (Uniform(0, 1) == 0) FreeSequence(index);
      return;
    }
    for (int32_t token : RandomTokens(added)) sequence.tokens.push_back(token);
    Write(sequence, old_length);
    // Registration sometimes lags: a later call catches up.
    if (Uniform(0, 4) != 0) {
      manager_.RegisterComputedBlocks(sequence.table, sequence.tokens, sequence.tokens.size());
    }
  }

  void FreeSequence(size_t index) {
    manager_.Free(sequences_[index].table);
    EXPECT_THAT(sequences_[index].table.blocks, IsEmpty());
    sequences_.erase(sequences_.begin() + index);
  }

  std::mt19937 rng_;
  KvBlockManager manager_;
  const int64_t block_size_;
  const bool caching_;
  const int32_t vocab_;
  std::vector<uint64_t> kv_;  // [num_blocks * block_size] prefix digests, 0 = never written
  std::vector<std::vector<int32_t>> base_prompts_;
  std::vector<Sequence> sequences_;
};

TEST(KvBlockManagerFuzz, RandomOperationsKeepInvariantsAndLeakNothing) {
  const int32_t block_sizes[] = {1, 2, 3, 4, 8};
  const int32_t vocabs[] = {2, 3, 50};
  for (uint32_t seed = 0; seed < 60; ++seed) {
    std::mt19937 config(seed);
    KvBlockManager::Options options;
    options.block_size = block_sizes[config() % 5];
    options.num_blocks = 1 + static_cast<int32_t>(config() % 48);
    options.enable_prefix_caching = config() % 4 != 0;
    const bool weak_hash = options.enable_prefix_caching && config() % 3 == 0;
    const int32_t vocab = vocabs[config() % 3];
    SCOPED_TRACE(::testing::Message()
                 << "seed " << seed << " block_size " << options.block_size << " num_blocks "
                 << options.num_blocks << " caching " << options.enable_prefix_caching
                 << " weak_hash " << weak_hash << " vocab " << vocab);
    KvBlockManagerSimulation simulation(seed, options, weak_hash, vocab);
    for (int step = 0; step < 2000; ++step) {
      SCOPED_TRACE(::testing::Message() << "step " << step);
      simulation.Step();
      simulation.CheckInvariants();
      if (::testing::Test::HasFailure()) return;
    }
    simulation.FreeAll();
    if (::testing::Test::HasFailure()) return;
  }
}

}  // namespace
}  // namespace rollout::engine
