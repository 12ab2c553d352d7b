// Streaming detokenization never emits half a character and adds up to Decode().
#include "models/streaming_decoder.h"

#include <gtest/gtest.h>

#include "models/byte_level_bpe.h"
#include "models/unicode.h"

namespace rollout::models {
namespace {

std::unique_ptr<Tokenizer> LoadFixture() {
  absl::StatusOr<std::unique_ptr<Tokenizer>> tokenizer = Tokenizer::Load("tests/data/tiny-qwen2");
  EXPECT_TRUE(tokenizer.ok()) << tokenizer.status();
  return tokenizer.ok() ? *std::move(tokenizer) : nullptr;
}

// The single-byte tokens of `text`: every multi-byte character spans several tokens.
std::vector<int32_t> ByteTokens(const Tokenizer& tokenizer, absl::string_view text) {
  std::vector<int32_t> ids;
  for (char byte : text) ids.push_back(tokenizer.TokenToId(BytesToByteLevel(std::string(1, byte))));
  return ids;
}

// Feeds `ids` one at a time; checks each piece is valid UTF-8; returns the whole text.
std::string Stream(const Tokenizer& tokenizer, const std::vector<int32_t>& ids, bool skip) {
  StreamingDecoder decoder(tokenizer, skip);
  std::string text;
  for (int32_t id : ids) {
    const std::string piece = decoder.Add(id);
    EXPECT_TRUE(IsValidUtf8(piece)) << "after id " << id;
    text += piece;
  }
  return text + decoder.Finish();
}

TEST(StreamingDecoder, HoldsBytesUntilTheCharacterIsComplete) {
  std::unique_ptr<Tokenizer> tokenizer = LoadFixture();
  ASSERT_NE(tokenizer, nullptr);
  const std::vector<int32_t> ids = ByteTokens(*tokenizer, "你🚀");  // 3 + 4 bytes
  StreamingDecoder decoder(*tokenizer);
  EXPECT_EQ(decoder.Add(ids[0]), "");
  EXPECT_EQ(decoder.Add(ids[1]), "");
  EXPECT_EQ(decoder.pending_bytes(), 2u);
  EXPECT_EQ(decoder.Add(ids[2]), "你");
  EXPECT_EQ(decoder.Add({ids[3], ids[4], ids[5]}), "");
  EXPECT_EQ(decoder.Add(ids[6]), "🚀");
  EXPECT_EQ(decoder.Finish(), "");
}

TEST(StreamingDecoder, PiecesAddUpToTheFullDecode) {
  std::unique_ptr<Tokenizer> tokenizer = LoadFixture();
  ASSERT_NE(tokenizer, nullptr);
  for (const char* text :
       {"强化学习 训练", "emoji 🚀🔥 ok", "你好，世界！", "Ünïcödé façade naïve"}) {
    for (const std::vector<int32_t>& ids :
         {tokenizer->Encode(text), ByteTokens(*tokenizer, text)}) {
      EXPECT_EQ(Stream(*tokenizer, ids, false), tokenizer->Decode(ids)) << text;
      EXPECT_EQ(Stream(*tokenizer, ids, false), text);
    }
  }
}

TEST(StreamingDecoder, UnfinishedOrBrokenCharactersMatchDecodeReplacement) {
  std::unique_ptr<Tokenizer> tokenizer = LoadFixture();
  ASSERT_NE(tokenizer, nullptr);
  std::vector<int32_t> truncated = ByteTokens(*tokenizer, "ok\xf0\x9f\x9a");
  EXPECT_EQ(Stream(*tokenizer, truncated, false), "ok\xef\xbf\xbd");
  EXPECT_EQ(Stream(*tokenizer, truncated, false), tokenizer->Decode(truncated));
  std::vector<int32_t> broken = ByteTokens(*tokenizer,
                                           "\xe4\xbd"
                                           "A");
  EXPECT_EQ(Stream(*tokenizer, broken, false),
            "\xef\xbf\xbd"
            "A");
  EXPECT_EQ(Stream(*tokenizer, broken, false), tokenizer->Decode(broken));
}

TEST(StreamingDecoder, SkipsSpecialTokensWhenAsked) {
  std::unique_ptr<Tokenizer> tokenizer = LoadFixture();
  ASSERT_NE(tokenizer, nullptr);
  const std::vector<int32_t> ids = tokenizer->Encode("<|im_start|>user\nhi<|im_end|>");
  EXPECT_EQ(Stream(*tokenizer, ids, true), "user\nhi");
  EXPECT_EQ(Stream(*tokenizer, ids, false), "<|im_start|>user\nhi<|im_end|>");
}

TEST(StreamingDecoder, FinishStartsANewSequence) {
  std::unique_ptr<Tokenizer> tokenizer = LoadFixture();
  ASSERT_NE(tokenizer, nullptr);
  const std::vector<int32_t> ids = ByteTokens(*tokenizer, "\xe4\xbd");
  StreamingDecoder decoder(*tokenizer);
  decoder.Add(absl::MakeConstSpan(ids));
  EXPECT_EQ(decoder.Finish(), "\xef\xbf\xbd");
  EXPECT_EQ(decoder.pending_bytes(), 0u);
  EXPECT_EQ(decoder.Add(tokenizer->Encode("ok")), "ok");
}

}  // namespace
}  // namespace rollout::models
