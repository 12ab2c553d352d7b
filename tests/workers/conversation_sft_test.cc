// Conversations for SFT and DPO: a conversation's tokens are the chat template's whole
// rendering, the loss counts each assistant reply and its end-of-turn tokens but not its
// header nor the other messages, and a chat prompt with a messages response takes verl's
// SFT layout with too-long parts refused or cut as data.truncation says.
#include "workers/conversation_sft.h"

#include "workers/sft_batch.h"

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace rollout::workers {
namespace {

using ::testing::HasSubstr;

std::unique_ptr<models::Tokenizer> Fixture(const std::string& chat_format = "") {
  models::TokenizerOptions options;
  options.chat_template = chat_format;
  return models::Tokenizer::Load("tests/data/tiny-qwen2", options).value();
}

const std::vector<models::ChatMessage> kTwoReplies = {
    {"system", "Be brief."}, {"user", "2+2?"}, {"assistant", "4"}, {"user", "3+3?"}, {"assistant", "6"}};
// kTwoReplies as an SFT row: the messages before the first reply, and the rest.
SftRows TwoRepliesRow() {
  SftRows rows;
  rows.prompts = {R"([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "2+2?"}])"};
  rows.formats = {"chat"};
  rows.responses = {R"([{"role": "assistant", "content": "4"}, {"role": "user", "content": "3+3?"},)"
                    R"( {"role": "assistant", "content": "6"}])"};
  rows.response_formats = {"messages"};
  return rows;
}

// The tokens of `ids` whose `counted` flag is 1, decoded.
std::string CountedText(const models::Tokenizer& tokenizer, const std::vector<int32_t>& ids,
                        const std::vector<uint8_t>& counted) {
  std::vector<int32_t> kept;
  for (size_t t = 0; t < ids.size(); ++t) {
    if (counted[t] == 1) kept.push_back(ids[t]);
  }
  return tokenizer.Decode(kept);
}

TEST(EncodeConversation, CountsEachReplyAndItsEndOfTurnButNotItsHeader) {
  const auto tokenizer = Fixture();
  const ConversationTokens tokens = EncodeConversation(*tokenizer, kTwoReplies, "row").value();
  EXPECT_EQ(tokens.ids, tokenizer->EncodeChat(kTwoReplies, /*add_generation_prompt=*/false).value());
  ASSERT_EQ(tokens.counted.size(), tokens.ids.size());
  EXPECT_EQ(CountedText(*tokenizer, tokens.ids, tokens.counted), "4<|im_end|>\n6<|im_end|>\n");
}

// Qwen3's template drops an earlier reply's think block once a user message follows it,
// so the second reply's tokens cannot be found by rendering the conversation's start.
TEST(EncodeConversation, ATemplateThatRewritesEarlierTurnsIsRefusedNamingTheMessage) {
  const auto tokenizer = Fixture("qwen3");
  const absl::StatusOr<ConversationTokens> tokens = EncodeConversation(*tokenizer, kTwoReplies, "sft row 2");
  EXPECT_EQ(tokens.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(tokens.status().message(),
              HasSubstr("sft row 2: the chat template does not render message 3 by appending to messages 0-2"));
  // One reply is a prompt and its answer: nothing before it is rewritten.
  const std::vector<models::ChatMessage> one_reply(kTwoReplies.begin(), kTwoReplies.begin() + 3);
  const ConversationTokens single = EncodeConversation(*tokenizer, one_reply, "row").value();
  EXPECT_EQ(single.ids, tokenizer->EncodeChat(one_reply, /*add_generation_prompt=*/false).value());
  EXPECT_THAT(CountedText(*tokenizer, single.ids, single.counted), ::testing::EndsWith("4<|im_end|>\n"));
}

TEST(BuildSftBatch, AMessagesResponsesPromptEndsWhereTheFirstReplyStartsAndTheLossSkipsLaterUserTurns) {
  const auto tokenizer = Fixture();
  const ConversationTokens tokens = EncodeConversation(*tokenizer, kTwoReplies, "row").value();
  const size_t first = std::find(tokens.counted.begin(), tokens.counted.end(), 1) - tokens.counted.begin();
  PromptEncoding encoding;
  encoding.max_prompt_length = 40;
  const int64_t response_length = 40;
  const PolicyBatch batch = BuildSftBatch(*tokenizer, TwoRepliesRow(), encoding, response_length).value();
  EXPECT_TRUE(CheckPolicyBatch(batch).ok());
  EXPECT_EQ(batch.attention_mask.sum().item<int64_t>(), static_cast<int64_t>(tokens.ids.size()));
  EXPECT_EQ(batch.attention_mask[0].narrow(0, 0, 40).sum().item<int64_t>(), static_cast<int64_t>(first));
  EXPECT_EQ(batch.input_ids[0][39].item<int64_t>(), tokens.ids[first - 1]);  // the prompt ends at the boundary
  const int64_t rest = static_cast<int64_t>(tokens.ids.size() - first);
  for (int64_t t = 0; t < rest; ++t) {
    EXPECT_EQ(batch.responses[0][t].item<int64_t>(), tokens.ids[first + t]) << t;
    EXPECT_EQ(batch.response_mask[0][t].item<int64_t>(), tokens.counted[first + t]) << t;
  }
  EXPECT_EQ(batch.response_mask.sum().item<int64_t>(),
            std::count(tokens.counted.begin(), tokens.counted.end(), 1));
  EXPECT_LT(batch.response_mask.sum().item<int64_t>(), rest);  // the second user turn is not counted
}

TEST(BuildSftBatch, TooLongConversationPartsFollowTruncationAndOnesWithoutAReplyAreRefused) {
  const auto tokenizer = Fixture();
  PromptEncoding encoding;
  encoding.max_prompt_length = 40;
  EXPECT_THAT(BuildSftBatch(*tokenizer, TwoRepliesRow(), encoding, 4).status().message(),
              HasSubstr("sft row 0: the conversation from its first reply has"));
  EXPECT_THAT(BuildSftBatch(*tokenizer, TwoRepliesRow(), encoding, 4).status().message(),
              HasSubstr("more than data.max_response_length (4)"));
  encoding.max_prompt_length = 3;
  EXPECT_THAT(BuildSftBatch(*tokenizer, TwoRepliesRow(), encoding, 40).status().message(),
              HasSubstr("sft row 0: the conversation before its first reply has"));
  encoding.max_prompt_length = 40;
  encoding.truncation = "right";
  const PolicyBatch cut = BuildSftBatch(*tokenizer, TwoRepliesRow(), encoding, 4).value();
  const ConversationTokens tokens = EncodeConversation(*tokenizer, kTwoReplies, "row").value();
  const size_t first = std::find(tokens.counted.begin(), tokens.counted.end(), 1) - tokens.counted.begin();
  for (int64_t t = 0; t < 4; ++t) {
    EXPECT_EQ(cut.responses[0][t].item<int64_t>(), tokens.ids[first + t]);
    EXPECT_EQ(cut.response_mask[0][t].item<int64_t>(), tokens.counted[first + t]);
  }
  SftRows unanswered = TwoRepliesRow();
  unanswered.responses = {R"([{"role": "user", "content": "hi"}])"};
  EXPECT_THAT(BuildSftBatch(*tokenizer, unanswered, encoding, 40).status().message(),
              HasSubstr("sft row 0: no assistant reply has a token to train on"));
  SftRows text_prompt = TwoRepliesRow();
  text_prompt.formats = {"text"};
  EXPECT_THAT(BuildSftBatch(*tokenizer, text_prompt, encoding, 40).status().message(),
              HasSubstr("sft row 0: a messages response needs a chat prompt"));
}

}  // namespace
}  // namespace rollout::workers
