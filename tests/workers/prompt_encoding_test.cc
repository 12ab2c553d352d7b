// verl's data.truncation for prompts longer than data.max_prompt_length, and the
// untruncated token counts data.filter_overlong_prompts drops prompts by.
#include "workers/prompt_encoding.h"

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace rollout::workers {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(TruncateTokens, ShortPromptsAreKept) {
  EXPECT_THAT(TruncateTokens({1, 2, 3}, 3, "data.max_prompt_length", "error", "p").value(), ElementsAre(1, 2, 3));
}

TEST(TruncateTokens, ModesKeepTheirEnds) {
  const std::vector<int32_t> ids = {1, 2, 3, 4, 5};
  EXPECT_THAT(TruncateTokens(ids, 3, "data.max_prompt_length", "left", "p").value(), ElementsAre(3, 4, 5));
  EXPECT_THAT(TruncateTokens(ids, 3, "data.max_prompt_length", "right", "p").value(), ElementsAre(1, 2, 3));
  EXPECT_THAT(TruncateTokens(ids, 3, "data.max_prompt_length", "middle", "p").value(), ElementsAre(1, 4, 5));
  EXPECT_THAT(TruncateTokens(ids, 4, "data.max_prompt_length", "middle", "p").value(), ElementsAre(1, 2, 4, 5));
}

TEST(TruncateTokens, ErrorModeNamesWhatIsTooLongAndTheLimit) {
  const absl::Status status = TruncateTokens({1, 2, 3, 4}, 2, "data.max_prompt_length", "error", "prompt 7: the prompt").status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("prompt 7: the prompt has 4 tokens, more than data.max_prompt_length (2)"));
  EXPECT_THAT(TruncateTokens({1, 2, 3}, 2, "data.max_prompt_length", "sideways", "p").status().message(),
              HasSubstr("unknown data.truncation 'sideways'"));
}

TEST(TruncateTokens, TrlsModesCutAPromptAtItsStartOrEndAndAResponseAtItsEnd) {
  EXPECT_EQ(PromptTruncation("keep_end"), "left");
  EXPECT_EQ(PromptTruncation("keep_start"), "right");
  EXPECT_EQ(ResponseTruncation("keep_end"), "right");
  EXPECT_EQ(ResponseTruncation("keep_start"), "right");
  for (const char* verl : {"error", "left", "right", "middle"}) {
    EXPECT_EQ(PromptTruncation(verl), verl);
    EXPECT_EQ(ResponseTruncation(verl), verl);
  }
}

// The counts are the ids the rollout encodes (text as is, chat through the template),
// before truncation.
TEST(PromptLengths, CountEachPromptsTokensUntruncated) {
  config::Recipe recipe;
  recipe.mutable_actor()->mutable_model()->set_path("tests/data/tiny-qwen2");
  const std::unique_ptr<models::Tokenizer> tokenizer = LoadActorTokenizer(recipe).value();
  const std::string text = "12+35= and a longer question about numbers";
  const std::string chat = R"([{"role": "user", "content": "hi"}])";
  Batch input;
  ASSERT_TRUE(input.AddStrings("prompt", {text, chat}).ok());
  ASSERT_TRUE(input.AddStrings("prompt_format", {"text", "chat"}).ok());
  const at::Tensor lengths = PromptLengths(*tokenizer, input).value().Tensor("prompt_length").value();
  PromptEncoding short_prompts;
  short_prompts.max_prompt_length = 4;
  short_prompts.truncation = "left";
  const auto whole = [&](const std::string& prompt, bool is_chat) {
    PromptEncoding roomy;
    roomy.max_prompt_length = 1 << 20;
    return static_cast<int64_t>(EncodePrompt(*tokenizer, prompt, is_chat, roomy, "p").value().size());
  };
  EXPECT_EQ(lengths[0].item<int64_t>(), whole(text, false));
  EXPECT_EQ(lengths[1].item<int64_t>(), whole(chat, true));
  EXPECT_GT(lengths[0].item<int64_t>(), 4);
  EXPECT_EQ(EncodePrompt(*tokenizer, text, false, short_prompts, "p").value().size(), 4u);

  Batch bad;
  ASSERT_TRUE(bad.AddStrings("prompt", {text}).ok());
  ASSERT_TRUE(bad.AddStrings("prompt_format", {"html"}).ok());
  EXPECT_THAT(PromptLengths(*tokenizer, bad).status().message(),
              HasSubstr("prompt row 0: prompt_format 'html'; expected text or chat"));
}

// A rollout prompt offering tools ({"messages", "tools"}, as the controller sends a row
// with a tools column) is the template's rendering with the tools; a template without
// tools refuses it, naming the prompt.
TEST(EncodePrompt, ChatPromptsOfferTheirTools) {
  config::Recipe recipe;
  recipe.mutable_actor()->mutable_model()->set_path("tests/data/tiny-qwen2");
  recipe.mutable_actor()->mutable_model()->set_custom_chat_template("qwen3");
  const std::unique_ptr<models::Tokenizer> qwen3 = LoadActorTokenizer(recipe).value();
  const std::string prompt = R"({"messages": [{"role": "user", "content": "hi"}], "tools": [{"name": "f"}]})";
  PromptEncoding roomy;
  roomy.max_prompt_length = 1 << 20;
  const std::vector<int32_t> ids = EncodePrompt(*qwen3, prompt, /*is_chat=*/true, roomy, "prompt 3").value();
  EXPECT_EQ(ids, qwen3->EncodeChat({{"user", "hi"}}, /*add_generation_prompt=*/true, {{{"name", "f"}}}).value());
  EXPECT_THAT(qwen3->Decode(ids), HasSubstr("<tools>\n{\"name\": \"f\"}\n</tools>"));

  recipe.mutable_actor()->mutable_model()->clear_custom_chat_template();
  const std::unique_ptr<models::Tokenizer> plain = LoadActorTokenizer(recipe).value();
  EXPECT_THAT(EncodePrompt(*plain, prompt, true, roomy, "prompt 3").status().message(),
              HasSubstr("prompt 3: tools are given; the chatml prompt format does not render tools"));
}

}  // namespace
}  // namespace rollout::workers
