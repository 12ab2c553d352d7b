// Tools, tool calls and tool results in chat prompts: JSON as datasets hold it (keys in
// their order) rendered natively against what jinja2 rendered from Qwen2.5's, Qwen3's and
// Llama 3.2's templates (tests/data/chat_tools/make_expect.py, as transformers does), and
// refused by formats that do not render them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "models/chat_template.h"
#include "models/json_prompt.h"

namespace rollout::models {
namespace {

using nlohmann::ordered_json;
using ::testing::HasSubstr;

ChatTemplate Recognized(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  EXPECT_TRUE(text.ok()) << text.status();
  absl::StatusOr<ChatTemplate> chat = ChatTemplate::Recognize(text.value_or(""));
  EXPECT_TRUE(chat.ok()) << chat.status();
  return chat.ok() ? *chat : *ChatTemplate::FromFormatName("llama3");
}

ChatPrompt MustParse(const ordered_json& prompt) {
  absl::StatusOr<ChatPrompt> parsed = ParseChatPrompt(prompt);
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  return parsed.value_or(ChatPrompt{});
}

TEST(ChatTools, RenderAsTransformersRendersTheirTemplates) {
  const absl::StatusOr<std::string> text = ReadFile("tests/data/chat_tools/chat_tools_expect.json");
  ASSERT_TRUE(text.ok()) << text.status();
  const ordered_json cases = ordered_json::parse(*text).at("cases");
  ASSERT_EQ(cases.size(), 13u);
  for (const ordered_json& c : cases) {
    const std::string name = c.at("template").get<std::string>();
    ChatTemplate chat = Recognized(absl::StrCat("tests/data/", name, "_chat_template.jinja"));
    chat.set_date_string("05 Mar 2026");  // as make_expect.py rendered Llama's
    const ChatPrompt prompt = MustParse(c.at("prompt"));
    const bool add_generation_prompt = c.at("add_generation_prompt").get<bool>();
    absl::StatusOr<std::string> rendered = chat.Render(prompt.messages, add_generation_prompt, prompt.tools);
    ASSERT_TRUE(rendered.ok()) << rendered.status();
    EXPECT_EQ(*rendered, c.at("rendered").get<std::string>()) << name << ": " << c.at("prompt").dump();
    absl::StatusOr<RenderedChat> whole = chat.RenderWithMessageEnds(prompt.messages, prompt.tools);
    ASSERT_TRUE(whole.ok()) << whole.status();
    EXPECT_EQ(whole->message_ends.size(), prompt.messages.size());
    EXPECT_EQ(*chat.Render(prompt.messages, false, prompt.tools), whole->text);
  }
}

TEST(ChatTools, TheirTemplatesAreRecognisedAsRenderingTools) {
  EXPECT_EQ(Recognized("tests/data/qwen2.5_chat_template.jinja").Describe(),
            "chatml with default system prompt 'You are Qwen, created by Alibaba Cloud. You are a helpful "
            "assistant.', and tools");
  EXPECT_EQ(Recognized("tests/data/qwen3_chat_template.jinja").Describe(), "qwen3");
  EXPECT_EQ(Recognized("tests/data/llama3.2_chat_template.jinja").Describe(), "llama3.1 with tools");
}

// What Llama 3.1+'s template refuses (raise_exception), and what it would write as
// another role's message, is refused.
TEST(ChatTools, LlamaNeedsAUserMessageForTheToolsAndOneCallAMessage) {
  const ChatTemplate llama = Recognized("tests/data/llama3.2_chat_template.jinja");
  const std::vector<ordered_json> tools = {{{"name", "f"}}};
  EXPECT_EQ(llama.Render({{"system", "S"}}, true, tools).status().message(),
            "tools are given, which Llama 3.1+'s template puts in the first message after the system one, but there "
            "is none; it must be the user's");
  EXPECT_THAT(llama.Render({{"assistant", "A"}}, true, tools).status().message(),
              HasSubstr("but message 0 is assistant's; it must be the user's"));
  ChatMessage two_calls{"assistant", "", {{"f", ordered_json::object()}, {"g", ordered_json::object()}}};
  EXPECT_EQ(llama.Render({{"user", "q"}, two_calls}, true).status().message(),
            "message 1 makes 2 tool calls; Llama 3.1+'s template writes one a message");
  EXPECT_THAT(ChatTemplate::FromFormatName("llama3.1")->Render({{"user", "q"}}, true, tools).status().message(),
              HasSubstr("tools are given; the llama3.1 prompt format does not render tools"));
}

// Each message's part of a conversation with tools: the system message is the tool
// header's, and results of one run share a user turn.
TEST(ChatTools, MessageEndsCutToolHeadersAndResultRuns) {
  const ChatPrompt prompt = MustParse(ordered_json::parse(R"({"messages": [
      {"role": "system", "content": "S"}, {"role": "user", "content": "q"},
      {"role": "assistant", "content": "", "tool_calls": [{"name": "f", "arguments": {"x": 1}}]},
      {"role": "tool", "content": "a"}, {"role": "tool", "content": "b"}], "tools": [{"name": "f"}]})"));
  for (const char* path : {"tests/data/qwen2.5_chat_template.jinja", "tests/data/qwen3_chat_template.jinja"}) {
    absl::StatusOr<RenderedChat> rendered = Recognized(path).RenderWithMessageEnds(prompt.messages, prompt.tools);
    ASSERT_TRUE(rendered.ok()) << rendered.status();
    std::vector<std::string> parts;
    size_t start = 0;
    for (const size_t end : rendered->message_ends) {
      parts.push_back(rendered->text.substr(start, end - start));
      start = end;
    }
    ASSERT_EQ(parts.size(), 5u);
    EXPECT_THAT(parts[0], HasSubstr("<|im_start|>system\nS\n\n# Tools"));
    EXPECT_THAT(parts[0], HasSubstr("<tools>\n{\"name\": \"f\"}\n</tools>"));
    EXPECT_EQ(parts[1], "<|im_start|>user\nq<|im_end|>\n");
    EXPECT_EQ(parts[2], "<|im_start|>assistant\n<tool_call>\n{\"name\": \"f\", \"arguments\": {\"x\": 1}}\n</tool_call><|im_end|>\n");
    EXPECT_EQ(parts[3], "<|im_start|>user\n<tool_response>\na\n</tool_response>");
    EXPECT_EQ(parts[4], "\n<tool_response>\nb\n</tool_response><|im_end|>\n");
  }
}

TEST(ChatTools, FormatsWithoutToolsRefuseThemRatherThanDropThem) {
  const ChatTemplate plain = *ChatTemplate::FromFormatName("chatml");
  EXPECT_EQ(plain.Render({{"user", "q"}}, true, {{{"name", "f"}}}).status().message(),
            "tools are given; the chatml prompt format does not render tools (Qwen2.5's, Qwen3's and Llama 3.1+'s "
            "templates do)");
  EXPECT_EQ(plain.Render({{"user", "q"}, {"tool", "42"}}, true).status().message(),
            "message 1 is a tool result; the chatml prompt format does not render tools (Qwen2.5's, Qwen3's and "
            "Llama 3.1+'s templates do)");
  ChatMessage call{"assistant", "", {{"f", ordered_json::object()}}};
  EXPECT_THAT(ChatTemplate::FromFormatName("llama3")->RenderWithMessageEnds({{"user", "q"}, call}).status().message(),
              HasSubstr("message 1 makes tool calls; the llama3 prompt format does not render tools"));
  EXPECT_THAT(ChatTemplate::FromFormatName("deepseek-r1")->Render({{"user", "q"}}, true, {{{"name", "f"}}}).status().message(),
              HasSubstr("tools are given; the deepseek-r1 prompt format"));
  // Qwen2.5's template with its tool lines edited is plain ChatML: no tools.
  std::string edited = *ReadFile("tests/data/qwen2.5_chat_template.jinja");
  edited.replace(edited.find("{{- tool | tojson }}"), 20, "{{- tool }}");
  const ChatTemplate without_tools = *ChatTemplate::Recognize(edited);
  EXPECT_EQ(without_tools.Describe(),
            "chatml with default system prompt 'You are Qwen, created by Alibaba Cloud. You are a helpful assistant.'");
  EXPECT_THAT(without_tools.Render({{"user", "q"}}, true, {{{"name", "f"}}}).status().message(),
              HasSubstr("tools are given"));
}

TEST(ChatTools, OtherRolesAndMisplacedCallsAreRefused) {
  const ChatTemplate qwen3 = *ChatTemplate::FromFormatName("qwen3");
  EXPECT_EQ(qwen3.Render({{"user", "q"}, {"function", "42"}}, true).status().message(),
            "message 1 has role 'function'; supported roles are system, user, assistant and tool");
  ChatMessage user_call{"user", "q", {{"f", ordered_json::object()}}};
  EXPECT_EQ(qwen3.Render({user_call}, true).status().message(),
            "message 0 has tool calls but role 'user'; only assistant messages make them");
}

TEST(ChatTools, PromptJsonKeepsKeyOrderAndSaysWhatIsWrong) {
  const ChatPrompt prompt = MustParse(ordered_json::parse(
      R"({"messages": [{"role": "assistant", "tool_calls": [{"name": "f", "arguments": {"b": 2.0, "a": "é"}},
          {"name": "g", "arguments": "{\"z\":1}"}]}], "tools": "[{\"z\": 1, \"a\": 2}]"})"));
  ASSERT_EQ(prompt.messages.size(), 1u);
  EXPECT_EQ(prompt.messages[0].content, "");
  ASSERT_EQ(prompt.messages[0].tool_calls.size(), 2u);
  EXPECT_EQ(prompt.messages[0].tool_calls[0].name, "f");
  EXPECT_EQ(prompt.messages[0].tool_calls[0].arguments.dump(), R"({"b":2.0,"a":"é"})");
  EXPECT_EQ(prompt.messages[0].tool_calls[1].arguments, ordered_json("{\"z\":1}"));
  ASSERT_EQ(prompt.tools.size(), 1u);
  EXPECT_EQ(prompt.tools[0].dump(), R"({"z":1,"a":2})");
  EXPECT_EQ(ParseChatPrompt(ordered_json::parse(R"({"messages": [{"role": "user"}]})")).status().message(),
            "messages[0] has no string \"content\" (only a message making tool calls may leave it null)");
  EXPECT_EQ(ParseChatPrompt(ordered_json::parse(R"({"messages": [], "tools": {"name": "f"}})")).status().message(),
            "\"tools\" must be a list of tool schemas, not object");
  EXPECT_EQ(ParseChatPromptText("[{").status().message(), "the chat prompt is not valid JSON");
  // A multi-turn rollout's row values for its tools travel with the prompt.
  const ChatPrompt with_kwargs =
      ParseChatPromptText(R"({"messages": [], "tools_kwargs": {"f": {"create_kwargs": {"x": 1}}}})").value();
  EXPECT_EQ(with_kwargs.tools_kwargs.dump(), R"({"f":{"create_kwargs":{"x":1}}})");
  EXPECT_TRUE(ParseChatPromptText(R"({"messages": []})")->tools_kwargs.empty());
  EXPECT_EQ(ParseChatPromptText(R"({"messages": [], "tools_kwargs": []})").status().message(),
            "\"tools_kwargs\" is not an object");
  // A row of verl's single_turn_agent in a multi-turn rollout.
  EXPECT_TRUE(ParseChatPromptText(R"({"messages": [], "single_turn": true})")->single_turn);
  EXPECT_FALSE(ParseChatPromptText(R"({"messages": []})")->single_turn);
  EXPECT_EQ(ParseChatPromptText(R"({"messages": [], "single_turn": 1})").status().message(),
            "\"single_turn\" is not a boolean");
}

}  // namespace
}  // namespace rollout::models
