// SFT pairs in verl's layout: the prompt left-padded, the answer and EOS right-padded
// and masked for the loss, too-long answers refused or cut as data.truncation says.
#include "workers/sft_batch.h"

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace rollout::workers {
namespace {

std::unique_ptr<models::Tokenizer> Fixture() { return models::Tokenizer::Load("tests/data/tiny-qwen2").value(); }

// One row: a text prompt and a text response.
SftRows TextRow(const std::string& prompt, const std::string& response) {
  SftRows rows;
  rows.prompts = {prompt};
  rows.formats = {"text"};
  rows.responses = {response};
  rows.response_formats = {"text"};
  return rows;
}

TEST(BuildSftBatch, AnswerAndEosAreTheMaskedResponse) {
  auto tokenizer = Fixture();
  const SftRows rows = TextRow("12+35=", "47");
  PromptEncoding encoding;
  encoding.max_prompt_length = 12;
  const PolicyBatch batch = BuildSftBatch(*tokenizer, rows, encoding, 6).value();
  const std::vector<int32_t> prompt = tokenizer->Encode("12+35=");
  std::vector<int32_t> answer = tokenizer->Encode("47");
  answer.push_back(tokenizer->eos_token_ids().front());
  EXPECT_EQ(batch.input_ids.size(1), 18);
  EXPECT_EQ(batch.attention_mask.sum().item<int64_t>(), static_cast<int64_t>(prompt.size() + answer.size()));
  EXPECT_EQ(batch.response_mask.sum().item<int64_t>(), static_cast<int64_t>(answer.size()));
  for (size_t t = 0; t < answer.size(); ++t) {
    EXPECT_EQ(batch.responses[0][static_cast<int64_t>(t)].item<int64_t>(), answer[t]);
  }
  EXPECT_EQ(batch.input_ids[0][11].item<int64_t>(), prompt.back());  // prompt ends at the boundary
  EXPECT_TRUE(CheckPolicyBatch(batch).ok());
}

TEST(BuildSftBatch, TooLongAnswersFollowTruncation) {
  auto tokenizer = Fixture();
  const SftRows rows = TextRow("q", "a very long answer that does not fit");
  PromptEncoding encoding;
  encoding.max_prompt_length = 4;
  EXPECT_THAT(BuildSftBatch(*tokenizer, rows, encoding, 3).status().message(),
              ::testing::HasSubstr("sft row 0: the response has 24 tokens, more than data.max_response_length (3)"));
  encoding.truncation = "right";
  EXPECT_EQ(BuildSftBatch(*tokenizer, rows, encoding, 3).value().response_mask.sum().item<int64_t>(), 3);
}

// TRL's keep_end: a prompt keeps its end, a response its start.
TEST(BuildSftBatch, KeepEndKeepsThePromptsEndAndTheResponsesStart) {
  auto tokenizer = Fixture();
  const SftRows rows = TextRow("a long question that does not fit", "a very long answer that does not fit");
  PromptEncoding encoding;
  encoding.max_prompt_length = 4;
  encoding.truncation = "keep_end";
  const PolicyBatch batch = BuildSftBatch(*tokenizer, rows, encoding, 3).value();
  const std::vector<int32_t> prompt = tokenizer->Encode(rows.prompts[0]);
  const std::vector<int32_t> response = tokenizer->Encode(rows.responses[0]);
  ASSERT_GT(prompt.size(), 4u);
  for (int64_t t = 0; t < 4; ++t) {
    EXPECT_EQ(batch.input_ids[0][t].item<int64_t>(), prompt[prompt.size() - 4 + static_cast<size_t>(t)]);
  }
  for (int64_t t = 0; t < 3; ++t) {
    EXPECT_EQ(batch.responses[0][t].item<int64_t>(), response[static_cast<size_t>(t)]);
  }
}

}  // namespace
}  // namespace rollout::workers
