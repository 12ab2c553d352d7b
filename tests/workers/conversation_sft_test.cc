// Conversations for SFT and DPO: a conversation's tokens are the chat template's whole
// rendering (Qwen3's included), the loss counts each assistant reply and its end-of-turn tokens but not its
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

// `messages` with every assistant message trained, as unmarked rows have them.
Conversation EveryReplyTrained(const std::vector<models::ChatMessage>& messages) {
  Conversation conversation{messages, {}};
  for (const models::ChatMessage& message : messages) conversation.trained.push_back(message.role == "assistant");
  return conversation;
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
  const ConversationTokens tokens = EncodeConversation(*tokenizer, EveryReplyTrained(kTwoReplies), "row").value();
  EXPECT_EQ(tokens.ids, tokenizer->EncodeChat(kTwoReplies, /*add_generation_prompt=*/false).value());
  ASSERT_EQ(tokens.counted.size(), tokens.ids.size());
  EXPECT_EQ(CountedText(*tokenizer, tokens.ids, tokens.counted), "4<|im_end|>\n6<|im_end|>\n");
}

// Qwen3's template drops a reply's reasoning once a user message follows it, and gives
// the final reply an empty think block: each reply trains as the whole conversation
// writes it, not as it is when it is the last message (verl's per-message rendering).
TEST(EncodeConversation, RepliesTrainAsTheWholeConversationWritesThem) {
  const std::vector<models::ChatMessage> reasoned = {{"user", "2+2?"},
                                                     {"assistant", "<think>\nadd\n</think>\n\n4"},
                                                     {"user", "3+3?"},
                                                     {"assistant", "<think>\ndouble\n</think>\n\n6"}};
  const auto qwen3 = Fixture("qwen3");
  for (const auto& messages : {kTwoReplies, reasoned}) {
    const ConversationTokens tokens = EncodeConversation(*qwen3, EveryReplyTrained(messages), "row").value();
    EXPECT_EQ(tokens.ids, qwen3->EncodeChat(messages, /*add_generation_prompt=*/false).value());
  }
  const ConversationTokens unreasoned = EncodeConversation(*qwen3, EveryReplyTrained(kTwoReplies), "row").value();
  EXPECT_EQ(CountedText(*qwen3, unreasoned.ids, unreasoned.counted),
            "4<|im_end|>\n<think>\n\n</think>\n\n6<|im_end|>\n");
  const ConversationTokens tokens = EncodeConversation(*qwen3, EveryReplyTrained(reasoned), "row").value();
  EXPECT_EQ(CountedText(*qwen3, tokens.ids, tokens.counted), "4<|im_end|>\n<think>\ndouble\n</think>\n\n6<|im_end|>\n");
  // With thinking off, the generation prompt holds the empty think block: the final
  // reply's header then takes it in, and the reply counts from its answer.
  models::TokenizerOptions no_thinking;
  no_thinking.chat_template = "qwen3";
  no_thinking.enable_thinking = false;
  const auto plain = models::Tokenizer::Load("tests/data/tiny-qwen2", no_thinking).value();
  const ConversationTokens answers = EncodeConversation(*plain, EveryReplyTrained(kTwoReplies), "row").value();
  EXPECT_EQ(answers.ids, plain->EncodeChat(kTwoReplies, /*add_generation_prompt=*/false).value());
  EXPECT_EQ(CountedText(*plain, answers.ids, answers.counted), "4<|im_end|>\n6<|im_end|>\n");
}

TEST(EncodeConversation, TheTemplatesErrorsNameTheRow) {
  const auto tokenizer = Fixture();
  EXPECT_THAT(EncodeConversation(*tokenizer, EveryReplyTrained({{"user", "hi"}, {"tool", "42"}}), "sft row 2")
                  .status()
                  .message(),
              HasSubstr("sft row 2: message 1 is a tool result; the chatml prompt format does not render tools"));
}

TEST(BuildSftBatch, AMessagesResponsesPromptEndsWhereTheFirstReplyStartsAndTheLossSkipsLaterUserTurns) {
  const auto tokenizer = Fixture();
  const ConversationTokens tokens = EncodeConversation(*tokenizer, EveryReplyTrained(kTwoReplies), "row").value();
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

// A conversation with tools (TRL's "tools" column on a prompt): the prompt's tools are
// written into the system message, the assistant's tool calls train, the tool results
// (a user turn) do not.
TEST(BuildSftBatch, ToolCallsTrainAndToolResultsDoNot) {
  const auto qwen3 = Fixture("qwen3");
  SftRows rows;
  rows.prompts = {R"({"messages": [{"role": "user", "content": "2+3?"}], "tools": [{"name": "add", "b": 0, "a": 0}]})"};
  rows.formats = {"chat"};
  rows.responses = {R"([{"role": "assistant", "content": null, "tool_calls": [{"type": "function", "function": )"
                    R"({"name": "add", "arguments": {"a": 2, "b": 3}}}]}, {"role": "tool", "content": "5"}, )"
                    R"({"role": "assistant", "content": "It is 5."}])"};
  rows.response_formats = {"messages"};
  PromptEncoding encoding;
  encoding.max_prompt_length = 400;
  const PolicyBatch batch = BuildSftBatch(*qwen3, rows, encoding, 200).value();
  std::vector<int32_t> prompt, counted;
  for (int64_t t = 0; t < batch.input_ids.size(1) - batch.responses.size(1); ++t) {
    if (batch.attention_mask[0][t].item<int64_t>() == 1) prompt.push_back(batch.input_ids[0][t].item<int32_t>());
  }
  for (int64_t t = 0; t < batch.responses.size(1); ++t) {
    if (batch.response_mask[0][t].item<int64_t>() == 1) counted.push_back(batch.responses[0][t].item<int32_t>());
  }
  EXPECT_THAT(qwen3->Decode(prompt), HasSubstr("<tools>\n{\"name\": \"add\", \"b\": 0, \"a\": 0}\n</tools>"));
  EXPECT_EQ(qwen3->Decode(counted),
            "<tool_call>\n{\"name\": \"add\", \"arguments\": {\"a\": 2, \"b\": 3}}\n</tool_call><|im_end|>\n"
            "<think>\n\n</think>\n\nIt is 5.<|im_end|>\n");
  // The chat template the fixture names (plain ChatML) has no tools: refused, not dropped.
  EXPECT_THAT(BuildSftBatch(*Fixture(), rows, encoding, 200).status().message(),
              HasSubstr("sft row 0: tools are given; the chatml prompt format does not render tools"));
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
  const ConversationTokens tokens = EncodeConversation(*tokenizer, EveryReplyTrained(kTwoReplies), "row").value();
  const size_t first = std::find(tokens.counted.begin(), tokens.counted.end(), 1) - tokens.counted.begin();
  for (int64_t t = 0; t < 4; ++t) {
    EXPECT_EQ(cut.responses[0][t].item<int64_t>(), tokens.ids[first + t]);
    EXPECT_EQ(cut.response_mask[0][t].item<int64_t>(), tokens.counted[first + t]);
  }
  SftRows unanswered = TwoRepliesRow();
  unanswered.responses = {R"([{"role": "user", "content": "hi"}])"};
  EXPECT_THAT(BuildSftBatch(*tokenizer, unanswered, encoding, 40).status().message(),
              HasSubstr("sft row 0: no trained assistant reply has a token to train on"));
  SftRows text_prompt = TwoRepliesRow();
  text_prompt.formats = {"text"};
  EXPECT_THAT(BuildSftBatch(*tokenizer, text_prompt, encoding, 40).status().message(),
              HasSubstr("sft row 0: a messages response needs a chat prompt"));
}

// The counted response tokens of `batch`'s row 0, decoded.
std::string CountedResponse(const models::Tokenizer& tokenizer, const PolicyBatch& batch) {
  std::vector<int32_t> kept;
  for (int64_t t = 0; t < batch.responses.size(1); ++t) {
    if (batch.response_mask[0][t].item<int64_t>() == 1) kept.push_back(batch.responses[0][t].item<int32_t>());
  }
  return tokenizer.Decode(kept);
}

// TRL's prompt-completion rows: the loss is the completion's, even where the chat
// prompt holds earlier replies.
TEST(BuildSftBatch, APromptsRepliesDoNotTrain) {
  const auto tokenizer = Fixture();
  SftRows rows = TwoRepliesRow();
  rows.prompts = {R"([{"role": "user", "content": "2+2?"}, {"role": "assistant", "content": "4"},)"
                  R"( {"role": "user", "content": "3+3?"}])"};
  rows.responses = {R"([{"role": "assistant", "content": "6"}])"};
  PromptEncoding encoding;
  encoding.max_prompt_length = 80;
  EXPECT_EQ(CountedResponse(*tokenizer, BuildSftBatch(*tokenizer, rows, encoding, 40).value()), "6<|im_end|>\n");
}

// verl's "trainable": false and OpenAI's "weight": 0 keep a reply as context only.
TEST(BuildSftBatch, RepliesMarkedOffAreContextOnly) {
  const auto tokenizer = Fixture();
  PromptEncoding encoding;
  encoding.max_prompt_length = 80;
  for (const std::string mark : {R"("trainable": false)", R"("weight": 0)"}) {
    SftRows rows = TwoRepliesRow();
    rows.responses = {R"([{"role": "assistant", "content": "4", )" + mark +
                      R"(}, {"role": "user", "content": "3+3?"}, {"role": "assistant", "content": "6"}])"};
    const PolicyBatch batch = BuildSftBatch(*tokenizer, rows, encoding, 40).value();
    EXPECT_EQ(CountedResponse(*tokenizer, batch), "6<|im_end|>\n") << mark;
    // The prompt runs to the first trained reply: the unmarked row's prompt and more.
    const PolicyBatch unmarked = BuildSftBatch(*tokenizer, TwoRepliesRow(), encoding, 40).value();
    EXPECT_GT(batch.attention_mask[0].narrow(0, 0, 80).sum().item<int64_t>(),
              unmarked.attention_mask[0].narrow(0, 0, 80).sum().item<int64_t>());
  }
  SftRows bad = TwoRepliesRow();
  bad.responses = {R"([{"role": "assistant", "content": "4", "weight": 3}])"};
  EXPECT_EQ(BuildSftBatch(*tokenizer, bad, encoding, 40).status().message(),
            "sft row 0 (response): message 0: \"weight\" must be 0 or 1, not 3");
  bad.responses = {R"({"messages": [{"role": "assistant", "content": "4"}]})"};
  EXPECT_EQ(BuildSftBatch(*tokenizer, bad, encoding, 40).status().message(),
            "sft row 0 (response): not a JSON list of chat messages");
  bad.responses = {R"([{"role": "assistant", "content": "4", "trainable": false}])"};
  EXPECT_EQ(BuildSftBatch(*tokenizer, bad, encoding, 40).status().message(),
            "sft row 0: no trained assistant reply has a token to train on");
}

}  // namespace
}  // namespace rollout::workers
