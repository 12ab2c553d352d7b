// Native chat prompt formats. Expected prompts were rendered from the same template
// texts with Python's jinja2 (as transformers' apply_chat_template does).
#include "models/chat_template.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/file_util.h"

namespace rollout::models {
namespace {

using ::testing::HasSubstr;

// Qwen2.5-Instruct's template, with the tool parts cut short (so it renders no tools;
// the whole template is tests/data/qwen2.5_chat_template.jinja).
constexpr char kQwen25Template[] = R"tpl({%- if tools %}
    {{- '<|im_start|>system\n' }}
    {%- if messages[0]['role'] == 'system' %}
        {{- messages[0]['content'] }}
    {%- else %}
        {{- 'You are Qwen, created by Alibaba Cloud. You are a helpful assistant.' }}
    {%- endif %}
    {{- "\n\n# Tools\n\n<tools>" }}
    {{- "\n</tools><|im_end|>\n" }}
{%- else %}
    {%- if messages[0]['role'] == 'system' %}
        {{- '<|im_start|>system\n' + messages[0]['content'] + '<|im_end|>\n' }}
    {%- else %}
        {{- '<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n' }}
    {%- endif %}
{%- endif %}
{%- for message in messages %}
    {%- if (message.role == "user") or (message.role == "system" and not loop.first) or (message.role == "assistant" and not message.tool_calls) %}
        {{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>' + '\n' }}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\n' }}
{%- endif %}
)tpl";

// Qwen3's template (Qwen3-0.6B ... 32B), with the tool parts cut short.
std::string Qwen3Template() {
  return ReadFile("tests/data/qwen3_chat_template.jinja").value();
}

// Llama 3.2 Instruct's template (its tools: tests/models/chat_tools_test.cc).
std::string Llama32Template() {
  return ReadFile("tests/data/llama3.2_chat_template.jinja").value();
}

// DeepSeek-R1-Distill's template (Qwen 1.5B ... 32B, Llama 8B and 70B), current
// revision: the generation prompt opens a think block.
std::string DeepSeekR1Template() {
  return ReadFile("tests/data/deepseek_r1_distill_chat_template.jinja").value();
}

// Meta-Llama-3-8B-Instruct's template.
constexpr char kLlama3Template[] =
    "{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = "
    "'<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | "
    "trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% "
    "endif %}{{ content }}{% endfor %}{% if add_generation_prompt %}{{ "
    "'<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}";

ChatTemplate MustRecognize(absl::string_view text) {
  absl::StatusOr<ChatTemplate> chat = ChatTemplate::Recognize(text);
  EXPECT_TRUE(chat.ok()) << chat.status();
  return chat.ok() ? *chat : *ChatTemplate::FromFormatName("chatml");
}

std::string MustRender(const ChatTemplate& chat, const std::vector<ChatMessage>& messages,
                       bool add_generation_prompt = true) {
  absl::StatusOr<std::string> text = chat.Render(messages, add_generation_prompt);
  EXPECT_TRUE(text.ok()) << text.status();
  return text.value_or("");
}

TEST(ChatTemplate, FixtureTemplateIsPlainChatMl) {
  absl::StatusOr<std::string> text = ReadFile("tests/data/tiny-qwen2/chat_template.jinja");
  ASSERT_TRUE(text.ok()) << text.status();
  const ChatTemplate chat = MustRecognize(*text);
  EXPECT_EQ(chat.Describe(), "chatml");
  EXPECT_EQ(MustRender(chat, {{"user", "Hi"}, {"assistant", "Hello"}}, false),
            "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nHello<|im_end|>\n");
}

TEST(ChatTemplate, Qwen25AddsItsDefaultSystemMessageOnlyWhenNoneIsGiven) {
  const ChatTemplate chat = MustRecognize(kQwen25Template);
  EXPECT_THAT(chat.Describe(), HasSubstr("You are Qwen, created by Alibaba Cloud."));
  EXPECT_EQ(MustRender(chat, {{"user", "Hi"}}),
            "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful "
            "assistant.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(MustRender(chat, {{"system", "Be brief."}, {"user", "Hi"}}),
            "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
            "<|im_start|>assistant\n");
}

TEST(ChatTemplate, Llama3RendersTheOfficialFormat) {
  const ChatTemplate chat = MustRecognize(kLlama3Template);
  EXPECT_EQ(chat.Describe(), "llama3");
  EXPECT_EQ(MustRender(chat, {{"user", "Hi"}}),
            "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
}

TEST(ChatTemplate, Llama3TrimsContentAndPutsBeginOfTextOnlyFirst) {
  const ChatTemplate chat = *ChatTemplate::FromFormatName("llama3");
  EXPECT_EQ(
      MustRender(
          chat,
          {{"system", "  Be brief.\n"}, {"user", "Hi"}, {"assistant", "Hello!"}, {"user", "2+2?"}}),
      "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>"
      "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|><|start_header_id|>assistant"
      "<|end_header_id|>\n\nHello!<|eot_id|><|start_header_id|>user<|end_header_id|>\n\n"
      "2+2?<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n");
}

TEST(ChatTemplate, Qwen3RendersAsItsJinjaTemplateDoes) {
  ChatTemplate chat = MustRecognize(Qwen3Template());
  EXPECT_EQ(chat.Describe(), "qwen3");
  EXPECT_EQ(MustRender(chat, {{"user", "Hi"}}), "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  // Reasoning of earlier turns is dropped.
  EXPECT_EQ(MustRender(chat, {{"user", "2+2?"}, {"assistant", "<think>\nadd\n</think>\n\n4"}, {"user", "3+3?"}}),
            "<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>assistant\n4<|im_end|>\n"
            "<|im_start|>user\n3+3?<|im_end|>\n<|im_start|>assistant\n");
  // The answer to the last query keeps its reasoning, or gets an empty block.
  EXPECT_EQ(MustRender(chat, {{"user", "2+2?"}, {"assistant", "<think>\nadd them\n</think>\n\n4"}}, false),
            "<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>assistant\n<think>\nadd them\n</think>\n\n4"
            "<|im_end|>\n");
  EXPECT_EQ(MustRender(chat, {{"user", "2+2?"}, {"assistant", "4"}}, false),
            "<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n4<|im_end|>\n");
  // After the last query, a message that is neither last nor reasoning is plain.
  EXPECT_EQ(MustRender(chat, {{"user", "Hi"}, {"assistant", "A"}, {"assistant", "<think>x</think>B"}}, false),
            "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nA<|im_end|>\n"
            "<|im_start|>assistant\n<think>\nx\n</think>\n\nB<|im_end|>\n");
  // Without a user message no assistant message follows a query.
  EXPECT_EQ(MustRender(chat, {{"system", "S"}, {"assistant", "<think>r</think>\n\nA"}}),
            "<|im_start|>system\nS<|im_end|>\n<|im_start|>assistant\nA<|im_end|>\n"
            "<|im_start|>assistant\n");
  chat.set_enable_thinking(false);
  EXPECT_EQ(MustRender(chat, {{"system", "Be brief."}, {"user", "Hi"}}),
            "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
            "<|im_start|>assistant\n<think>\n\n</think>\n\n");
}

// Fine-tunes that always close the think block, or open one, in the generation prompt.
TEST(ChatTemplate, Qwen3VariantsAreRefusedNotApproximated) {
  std::string always_closed = Qwen3Template();
  const std::string condition = "{%- if enable_thinking is defined and enable_thinking is false %}";
  always_closed.replace(always_closed.find(condition), condition.size(), "{%- if true %}");
  std::string opened = Qwen3Template();
  const std::string prompt = "{{- '<|im_start|>assistant\\n' }}";
  ASSERT_NE(opened.find(prompt), std::string::npos);
  opened.replace(opened.find(prompt), prompt.size(), "{{- '<|im_start|>assistant\\n<think>\\n' }}");
  for (const std::string& variant : {always_closed, opened}) {
    absl::StatusOr<ChatTemplate> chat = ChatTemplate::Recognize(variant);
    EXPECT_EQ(chat.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(chat.status().message(), HasSubstr("other than Qwen3's"));
  }
}

TEST(ChatTemplate, UnknownTemplateIsRefusedWithAHint) {
  absl::StatusOr<ChatTemplate> chat = ChatTemplate::Recognize(
      "{{ bos_token }}{% for message in messages %}[INST] {{ message['content'] }} [/INST]{% "
      "endfor %}");
  EXPECT_EQ(chat.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(chat.status().message(), HasSubstr("unknown chat template"));
  EXPECT_THAT(chat.status().message(), HasSubstr("explicit prompt format"));
}

TEST(ChatTemplate, ReasoningAndLlamaVisionTemplatesAreRefusedNotApproximated) {
  absl::StatusOr<ChatTemplate> qwen3 = ChatTemplate::Recognize(
      "{{- '<|im_start|>' + message.role + '\\n<think>\\n' + reasoning_content }}<|im_end|>");
  EXPECT_THAT(qwen3.status().message(), HasSubstr("<think>"));
  std::string vision = Llama32Template();
  vision.replace(vision.find("{%- for message in messages %}"), 0, "{{- '<|image|>' }}");
  EXPECT_THAT(ChatTemplate::Recognize(vision).status().message(), HasSubstr("Llama 3.2 Vision"));
}

// Llama 3.2's template with the date pinned (apply_chat_template(date_string=...)); the
// expected prompts are jinja2's renders of tests/data/llama3.2_chat_template.jinja.
TEST(ChatTemplate, Llama32RendersItsSystemHeaderWithTheDate) {
  ChatTemplate chat = MustRecognize(Llama32Template());
  EXPECT_EQ(chat.Describe(), "llama3.1 with tools");
  chat.set_date_string("05 Mar 2026");
  EXPECT_EQ(MustRender(chat, {{"user", "Hi"}}),
            "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: "
            "December 2023\nToday Date: 05 Mar 2026\n\n<|eot_id|><|start_header_id|>user<|end_header_id|>"
            "\n\nHi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n");
  EXPECT_EQ(MustRender(chat, {{"system", "  Be brief.\n"}, {"user", " 2+2? "}, {"assistant", "4\n"}, {"user", "3+3?"}}),
            "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: "
            "December 2023\nToday Date: 05 Mar 2026\n\nBe brief.<|eot_id|><|start_header_id|>user"
            "<|end_header_id|>\n\n2+2?<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n4"
            "<|eot_id|><|start_header_id|>user<|end_header_id|>\n\n3+3?<|eot_id|><|start_header_id|>"
            "assistant<|end_header_id|>\n\n");
}

// Unpinned, Llama 3.2's template takes today's date from strftime_now, as transformers
// renders it; Llama 3.1's (no strftime_now) writes its own "26 Jul 2024".
TEST(ChatTemplate, Llama31DatesAreTodayOnlyWhenTheTemplateAsksForIt) {
  const std::string before = absl::FormatTime("%d %b %Y", absl::Now(), absl::LocalTimeZone());
  const std::string rendered = MustRender(MustRecognize(Llama32Template()), {{"user", "Hi"}});
  const std::string after = absl::FormatTime("%d %b %Y", absl::Now(), absl::LocalTimeZone());
  EXPECT_TRUE(absl::StrContains(rendered, "Today Date: " + before + "\n") ||
              absl::StrContains(rendered, "Today Date: " + after + "\n"))
      << rendered;
  std::string llama31 = Llama32Template();
  const size_t from = llama31.find("{%- if not date_string is defined %}");
  const size_t to = llama31.find("{%- if not tools is defined %}");
  llama31.replace(from, to - from,
                  "{%- if not date_string is defined %}\n    {%- set date_string = \"26 Jul 2024\" %}\n"
                  "{%- endif %}\n");
  EXPECT_EQ(MustRender(MustRecognize(llama31), {{"user", "Hi"}, {"assistant", "Hello"}}, false),
            "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: "
            "December 2023\nToday Date: 26 Jul 2024\n\n<|eot_id|><|start_header_id|>user<|end_header_id|>"
            "\n\nHi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nHello<|eot_id|>");
}

// The expected prompts are jinja2's renders of
// tests/data/deepseek_r1_distill_chat_template.jinja (bos_token <｜begin▁of▁sentence｜>).
TEST(ChatTemplate, DeepSeekR1DistillRendersAsItsJinjaTemplateDoes) {
  const ChatTemplate chat = MustRecognize(DeepSeekR1Template());
  EXPECT_EQ(chat.Describe(), "deepseek-r1");
  EXPECT_EQ(MustRender(chat, {{"user", "What is 2+3?"}}),
            "<｜begin▁of▁sentence｜><｜User｜>What is 2+3?<｜Assistant｜><think>\n");
  EXPECT_EQ(MustRender(chat, {{"system", "Be brief."}, {"user", "Hi"}}, false),
            "<｜begin▁of▁sentence｜>Be brief.<｜User｜>Hi");
  // The last system message wins, wherever it is; an answer keeps only what follows
  // its last </think>, unstripped.
  EXPECT_EQ(MustRender(chat, {{"system", "S1"},
                              {"user", "Q1"},
                              {"assistant", "<think>\nreason\n</think>\n\nA1"},
                              {"system", "S2"},
                              {"user", "Q2"}}),
            "<｜begin▁of▁sentence｜>S2<｜User｜>Q1<｜Assistant｜>\n\nA1<｜end▁of▁sentence｜><｜User｜>Q2"
            "<｜Assistant｜><think>\n");
}

TEST(ChatTemplate, DeepSeekR1DistillFirstRevisionEndsAtTheAssistantTag) {
  std::string first = DeepSeekR1Template();
  const std::string prompt = "{{'<｜Assistant｜><think>\\n'}}";
  ASSERT_NE(first.find(prompt), std::string::npos);
  first.replace(first.find(prompt), prompt.size(), "{{'<｜Assistant｜>'}}");
  const ChatTemplate chat = MustRecognize(first);
  EXPECT_EQ(chat.Describe(), "deepseek-r1 without <think> in the generation prompt");
  EXPECT_EQ(MustRender(chat, {{"user", "What is 2+3?"}}),
            "<｜begin▁of▁sentence｜><｜User｜>What is 2+3?<｜Assistant｜>");
}

TEST(ChatTemplate, OtherDeepSeekTemplatesAreRefusedNotApproximated) {
  // R1-0528 and V3 render user turns differently (content joined, or after a tool check).
  std::string variant = DeepSeekR1Template();
  const std::string user = "{{'<｜User｜>' + message['content']}}";
  variant.replace(variant.find(user), user.size(), "{{'<｜User｜>' + content}}");
  absl::StatusOr<ChatTemplate> chat = ChatTemplate::Recognize(variant);
  EXPECT_EQ(chat.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(chat.status().message(), HasSubstr("DeepSeek one other than DeepSeek-R1-Distill's"));
  EXPECT_THAT(chat.status().message(), HasSubstr("deepseek-r1"));
}

TEST(ChatTemplate, FormatNamesChooseTheirFormats) {
  EXPECT_EQ(MustRender(*ChatTemplate::FromFormatName("chatml"), {{"user", "Hi"}}),
            "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(ChatTemplate::FromFormatName("qwen3")->Describe(), "qwen3");
  EXPECT_EQ(ChatTemplate::FromFormatName("llama3.1")->Describe(), "llama3.1");
  EXPECT_EQ(ChatTemplate::FromFormatName("deepseek-r1")->Describe(), "deepseek-r1");
  absl::StatusOr<ChatTemplate> unknown = ChatTemplate::FromFormatName("vicuna");
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(unknown.status().message(), HasSubstr("'vicuna'"));
}

// Tool results are refused by formats without tools (tests/models/chat_tools_test.cc).
TEST(ChatTemplate, RoleOtherThanSystemUserAssistantToolIsRefused) {
  absl::StatusOr<std::string> text =
      ChatTemplate::FromFormatName("chatml")->Render({{"user", "Hi"}, {"ipython", "42"}}, true);
  EXPECT_EQ(text.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(text.status().message(), HasSubstr("message 1 has role 'ipython'"));
  EXPECT_THAT(ChatTemplate::FromFormatName("chatml")->RenderWithMessageEnds({{"tool", "42"}}).status().message(),
              HasSubstr("message 0 is a tool result"));
}

// Each message's part of a whole conversation's text: text[ends[i - 1], ends[i]).
std::vector<std::string> MessageParts(const ChatTemplate& chat, const std::vector<ChatMessage>& messages) {
  absl::StatusOr<RenderedChat> rendered = chat.RenderWithMessageEnds(messages);
  EXPECT_TRUE(rendered.ok()) << rendered.status();
  if (!rendered.ok()) return {};
  EXPECT_EQ(rendered->text, MustRender(chat, messages, /*add_generation_prompt=*/false));
  EXPECT_EQ(rendered->message_ends.size(), messages.size());
  std::vector<std::string> parts;
  size_t start = 0;
  for (const size_t end : rendered->message_ends) {
    EXPECT_LE(start, end);
    parts.push_back(rendered->text.substr(start, end - start));
    start = end;
  }
  EXPECT_EQ(start, rendered->text.size());
  return parts;
}

TEST(ChatTemplate, MessageEndsCutTheWholeConversationAtEachMessage) {
  const std::vector<ChatMessage> two_replies = {{"user", "2+2?"}, {"assistant", "4"}, {"user", "3+3?"}, {"assistant", "6"}};
  // What a format writes before the first message belongs to it.
  EXPECT_THAT(MessageParts(MustRecognize(kQwen25Template), two_replies),
              ::testing::ElementsAre("<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful "
                                     "assistant.<|im_end|>\n<|im_start|>user\n2+2?<|im_end|>\n",
                                     "<|im_start|>assistant\n4<|im_end|>\n", "<|im_start|>user\n3+3?<|im_end|>\n",
                                     "<|im_start|>assistant\n6<|im_end|>\n"));
  EXPECT_THAT(MessageParts(*ChatTemplate::FromFormatName("llama3"), two_replies),
              ::testing::ElementsAre("<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\n2+2?<|eot_id|>",
                                     "<|start_header_id|>assistant<|end_header_id|>\n\n4<|eot_id|>",
                                     "<|start_header_id|>user<|end_header_id|>\n\n3+3?<|eot_id|>",
                                     "<|start_header_id|>assistant<|end_header_id|>\n\n6<|eot_id|>"));
  ChatTemplate llama31 = *ChatTemplate::FromFormatName("llama3.1");
  llama31.set_date_string("26 Jul 2024");
  const std::vector<std::string> llama31_parts = MessageParts(llama31, {{"system", "S"}, {"user", "Hi"}});
  ASSERT_EQ(llama31_parts.size(), 2u);
  EXPECT_THAT(llama31_parts[0], ::testing::EndsWith("Today Date: 26 Jul 2024\n\nS<|eot_id|>"));
  EXPECT_EQ(llama31_parts[1], "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>");
  // Qwen3: the first reply as the whole conversation writes it (reasoning dropped, no
  // think block), not as it is when it is the last message.
  EXPECT_THAT(MessageParts(MustRecognize(Qwen3Template()),
                           {{"user", "2+2?"}, {"assistant", "<think>\nadd\n</think>\n\n4"}, {"user", "3+3?"}, {"assistant", "6"}}),
              ::testing::ElementsAre("<|im_start|>user\n2+2?<|im_end|>\n", "<|im_start|>assistant\n4<|im_end|>\n",
                                     "<|im_start|>user\n3+3?<|im_end|>\n",
                                     "<|im_start|>assistant\n<think>\n\n</think>\n\n6<|im_end|>\n"));
  // DeepSeek-R1 writes the system message at the front: nothing where it stands.
  EXPECT_THAT(MessageParts(MustRecognize(DeepSeekR1Template()),
                           {{"user", "Q1"}, {"assistant", "A1"}, {"system", "S"}, {"user", "Q2"}}),
              ::testing::ElementsAre("<｜begin▁of▁sentence｜>S<｜User｜>Q1", "<｜Assistant｜>A1<｜end▁of▁sentence｜>", "",
                                     "<｜User｜>Q2"));
  EXPECT_TRUE(MessageParts(MustRecognize(Qwen3Template()), {}).empty());
}

}  // namespace
}  // namespace rollout::models
