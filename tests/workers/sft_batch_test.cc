// SFT pairs in verl's layout: the prompt left-padded, the answer and EOS right-padded
// and masked for the loss, too-long answers refused or cut as data.truncation says;
// bounded as whole rows (data.max_length), left-aligned with the prompt and answer
// together refused or cut.
#include "workers/sft_batch.h"

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

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

// The prompt's and the answer's tokens with EOS.
std::vector<int32_t> RowIds(const models::Tokenizer& tokenizer, const SftRows& rows, size_t* prompt_length) {
  std::vector<int32_t> ids = tokenizer.Encode(rows.prompts[0]);
  *prompt_length = ids.size();
  for (const int32_t id : tokenizer.Encode(rows.responses[0])) ids.push_back(id);
  ids.push_back(tokenizer.eos_token_ids().front());
  return ids;
}

TEST(BuildSftBatchWithin, RowsSitLeftAlignedWithEveryTokenButTheFirstInTheResponses) {
  auto tokenizer = Fixture();
  SftRows rows = TextRow("12+35=", "47");
  rows.prompts.push_back("1+1=");
  rows.formats.push_back("text");
  rows.responses.push_back("2");
  rows.response_formats.push_back("text");
  size_t prompt_length = 0;
  const std::vector<int32_t> ids = RowIds(*tokenizer, rows, &prompt_length);
  const int64_t length = static_cast<int64_t>(ids.size());
  const PolicyBatch batch = BuildSftBatchWithin(*tokenizer, rows, 64, "error").value();
  ASSERT_TRUE(CheckPolicyBatch(batch).ok());
  EXPECT_EQ(batch.input_ids.size(1), length);  // the longest row, not max_length
  EXPECT_EQ(batch.responses.size(1), length - 1);
  EXPECT_EQ(batch.attention_mask[0].sum().item<int64_t>(), length);
  for (int64_t t = 0; t < length; ++t) EXPECT_EQ(batch.input_ids[0][t].item<int64_t>(), ids[static_cast<size_t>(t)]);
  for (int64_t t = 1; t < length; ++t) {
    EXPECT_EQ(batch.responses[0][t - 1].item<int64_t>(), ids[static_cast<size_t>(t)]);
    EXPECT_EQ(batch.response_mask[0][t - 1].item<int64_t>(), t >= static_cast<int64_t>(prompt_length) ? 1 : 0) << t;
  }
  // The shorter row is right-padded, its padding neither attended nor counted.
  const int64_t second = batch.attention_mask[1].sum().item<int64_t>();
  EXPECT_LT(second, length);
  EXPECT_EQ(batch.response_mask[1].narrow(0, second - 1, length - second).sum().item<int64_t>(), 0);
  EXPECT_EQ(batch.position_ids[1][second - 1].item<int64_t>(), second - 1);
}

TEST(BuildSftBatchWithin, ARowLongerThanMaxLengthIsRefusedOrCutWhole) {
  auto tokenizer = Fixture();
  const SftRows rows = TextRow("a long question that does not fit", "a long answer");
  size_t prompt_length = 0;
  const std::vector<int32_t> ids = RowIds(*tokenizer, rows, &prompt_length);
  const int64_t length = static_cast<int64_t>(ids.size());
  const size_t answer_length = ids.size() - prompt_length;
  ASSERT_GT(prompt_length, 4u);
  const int64_t max_length = static_cast<int64_t>(answer_length) + 3;
  EXPECT_EQ(BuildSftBatchWithin(*tokenizer, rows, max_length, "error").status().message(),
            absl::StrCat("sft row 0: the row has ", length, " tokens, more than data.max_length (", max_length,
                         "); raise it, or set data.truncation to cut it (left, right, middle, keep_end, keep_start)"));
  // left (verl) and keep_end (TRL): the row's end, so the whole answer with the prompt's last 3 tokens.
  for (const std::string truncation : {"left", "keep_end"}) {
    const PolicyBatch cut = BuildSftBatchWithin(*tokenizer, rows, max_length, truncation).value();
    ASSERT_EQ(cut.input_ids.size(1), max_length) << truncation;
    for (int64_t t = 0; t < max_length; ++t) {
      EXPECT_EQ(cut.input_ids[0][t].item<int64_t>(), ids[ids.size() - static_cast<size_t>(max_length - t)]);
    }
    EXPECT_EQ(cut.response_mask.sum().item<int64_t>(), static_cast<int64_t>(answer_length)) << truncation;
  }
  // right (verl) and keep_start: the row's start, the answer cut to its first 2 tokens.
  const int64_t short_length = static_cast<int64_t>(prompt_length) + 2;
  for (const std::string truncation : {"right", "keep_start"}) {
    const PolicyBatch cut = BuildSftBatchWithin(*tokenizer, rows, short_length, truncation).value();
    ASSERT_EQ(cut.input_ids.size(1), short_length) << truncation;
    for (int64_t t = 0; t < short_length; ++t) EXPECT_EQ(cut.input_ids[0][t].item<int64_t>(), ids[static_cast<size_t>(t)]);
    EXPECT_EQ(cut.response_mask.sum().item<int64_t>(), 2) << truncation;
  }
}

}  // namespace
}  // namespace rollout::workers
