// The GPT-2 byte mapping and BPE merge order on a small hand-made vocabulary.
#include "models/byte_level_bpe.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace rollout::models {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(ByteLevel, PrintableBytesStayAndOthersShiftAboveU0100) {
  EXPECT_EQ(BytesToByteLevel("Hi there"), "Hi\xc4\xa0there");  // space -> U+0120 'Ġ'
  EXPECT_EQ(BytesToByteLevel("\n"), "\xc4\x8a");               // newline -> U+010A 'Ċ'
  EXPECT_EQ(BytesToByteLevel("\xe4\xbd\xa0"), "\xc3\xa4\xc2\xbd\xc5\x82");  // 你 -> ä½ł
}

TEST(ByteLevel, MappingRoundTripsEveryByte) {
  std::string all;
  for (int b = 0; b < 256; ++b) all.push_back(static_cast<char>(b));
  EXPECT_EQ(ByteLevelToBytes(BytesToByteLevel(all)), all);
}

TEST(ByteLevel, TokensWithUnmappedCharactersDecodeToTheirOwnBytes) {
  EXPECT_EQ(ByteLevelToBytes("<|im_end|>"), "<|im_end|>");
  EXPECT_EQ(ByteLevelToBytes("a b"), "a b");  // ' ' is not a mapped character
}

// Vocabulary over "abc" with merges: (a b) rank 0, (b c) rank 1, (ab c) rank 2.
BpeModelSpec AbcSpec() {
  BpeModelSpec spec;
  int32_t id = 0;
  for (const char* token : {"a", "b", "c", "ab", "bc", "abc"}) spec.vocab[token] = id++;
  spec.merges = {{"a", "b"}, {"b", "c"}, {"ab", "c"}};
  return spec;
}

std::vector<int32_t> EncodeWord(const ByteLevelBpe& bpe, absl::string_view word) {
  std::vector<int32_t> ids;
  bpe.EncodeWord(word, &ids);
  return ids;
}

TEST(ByteLevelBpe, AppliesLowestRankMergesFirst) {
  absl::StatusOr<std::unique_ptr<ByteLevelBpe>> bpe = ByteLevelBpe::Create(AbcSpec());
  ASSERT_TRUE(bpe.ok()) << bpe.status();
  EXPECT_THAT(EncodeWord(**bpe, "abc"), ElementsAre(5));      // (a b) then (ab c)
  EXPECT_THAT(EncodeWord(**bpe, "bcab"), ElementsAre(4, 3));  // bc, ab
  EXPECT_THAT(EncodeWord(**bpe, "cba"), ElementsAre(2, 1, 0));
  EXPECT_THAT(EncodeWord(**bpe, "abc"), ElementsAre(5));  // again, from the cache
}

TEST(ByteLevelBpe, EqualRanksMergeLeftmostFirst) {
  BpeModelSpec spec;
  spec.vocab = {{"a", 0}, {"aa", 1}};
  spec.merges = {{"a", "a"}};
  absl::StatusOr<std::unique_ptr<ByteLevelBpe>> bpe = ByteLevelBpe::Create(std::move(spec));
  ASSERT_TRUE(bpe.ok()) << bpe.status();
  EXPECT_THAT(EncodeWord(**bpe, "aaa"), ElementsAre(1, 0));
}

TEST(ByteLevelBpe, BytesMissingFromTheVocabularyAreDropped) {
  absl::StatusOr<std::unique_ptr<ByteLevelBpe>> bpe = ByteLevelBpe::Create(AbcSpec());
  ASSERT_TRUE(bpe.ok()) << bpe.status();
  EXPECT_THAT(EncodeWord(**bpe, "czc"), ElementsAre(2, 2));
  // As in tokenizers, the bytes either side of a dropped one become neighbours.
  EXPECT_THAT(EncodeWord(**bpe, "azb"), ElementsAre(3));
}

TEST(ByteLevelBpe, MergeOutsideTheVocabularyIsRefused) {
  BpeModelSpec spec = AbcSpec();
  spec.merges.push_back({"c", "a"});
  absl::StatusOr<std::unique_ptr<ByteLevelBpe>> bpe = ByteLevelBpe::Create(std::move(spec));
  EXPECT_EQ(bpe.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bpe.status().message(), HasSubstr("merge 3 'c a'"));
  EXPECT_THAT(bpe.status().message(), HasSubstr("('ca')"));
}

}  // namespace
}  // namespace rollout::models
