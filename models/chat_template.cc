#include "models/chat_template.h"

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/check.h"
#include "common/status_macros.h"
#include "models/chat_tool_formats.h"
#include "models/unicode.h"

namespace rollout::models {
namespace {

constexpr absl::string_view kSuggestFormat =
    "; give an explicit prompt format instead (chatml, llama3, llama3.1, qwen3 or deepseek-r1: "
    "--chat_format on the command line, actor.model.custom_chat_template in a recipe)";

// The date Llama 3.1 and 3.3 templates write when not given one.
constexpr char kLlama31DefaultDate[] = "26 Jul 2024";

// Whether a ChatML template with reasoning is Qwen3's (Qwen3-0.6B ... 32B): it splits
// reasoning off assistant messages after the last user query, and adds the empty think
// block to the generation prompt only when enable_thinking is false. Variants that add
// it always, or open a think block in the prompt, differ in these lines.
bool IsQwen3Template(absl::string_view text) {
  constexpr absl::string_view kEmptyThink = "'<think>\\n\\n</think>\\n\\n'";
  const size_t empty_think = text.find(kEmptyThink);
  return absl::StrContains(text, "reasoning_content") &&
         absl::StrContains(text, "ns.last_query_index") &&
         absl::StrContains(text, "{%- if enable_thinking is defined and enable_thinking is false %}") &&
         empty_think != absl::string_view::npos &&
         text.find(kEmptyThink, empty_think + 1) == absl::string_view::npos &&
         !absl::StrContains(text, "'<|im_start|>assistant\\n<think>\\n'");
}

// The lines of DeepSeek-R1-Distill's template that the deepseek-r1 format renders (tool
// calls aside, which are refused): the last system message first, user content as is,
// assistant content after its last </think>; and its generation prompt, in the current
// revision (opening a think block) or the first.
constexpr absl::string_view kDeepSeekR1Lines[] = {
    "{% set ns.system_prompt = message['content'] %}",
    "{{bos_token}}{{ns.system_prompt}}",
    "{{'<｜User｜>' + message['content']}}",
    "{% if '</think>' in content %}{% set content = content.split('</think>')[-1] %}{% endif %}"
    "{{'<｜Assistant｜>' + content + '<｜end▁of▁sentence｜>'}}",
};
constexpr absl::string_view kDeepSeekR1ThinkPrompt =
    "{% if add_generation_prompt and not ns.is_tool %}{{'<｜Assistant｜><think>\\n'}}{% endif %}";
constexpr absl::string_view kDeepSeekR1PlainPrompt =
    "{% if add_generation_prompt and not ns.is_tool %}{{'<｜Assistant｜>'}}{% endif %}";

// Python's str.lstrip('\n') / rstrip('\n') / strip('\n').
absl::string_view LstripNewlines(absl::string_view text) {
  while (!text.empty() && text.front() == '\n') text.remove_prefix(1);
  return text;
}
absl::string_view RstripNewlines(absl::string_view text) {
  while (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  return text;
}

// An assistant message's content split as Qwen3's template splits it: with a </think>,
// the reasoning is the text before the first one (after its last <think>, newlines
// stripped at the joins) and the answer the text after the last one; else no reasoning.
std::pair<std::string, std::string> SplitReasoning(absl::string_view content) {
  const size_t first_close = content.find("</think>");
  if (first_close == absl::string_view::npos) return {"", std::string(content)};
  absl::string_view reasoning = RstripNewlines(content.substr(0, first_close));
  if (const size_t open = reasoning.rfind("<think>"); open != absl::string_view::npos) {
    reasoning = reasoning.substr(open + std::string_view("<think>").size());
  }
  const size_t last_close = content.rfind("</think>");
  return {std::string(LstripNewlines(reasoning)),
          std::string(LstripNewlines(content.substr(last_close + std::string_view("</think>").size())))};
}

// A default system message written as a literal in the template, as in Qwen2.5's
//   {{- '<|im_start|>system\nYou are Qwen, ...<|im_end|>\n' }}
// (`\n` spelled as an escape or as a real line break). Unescapes \n, \\, \', \".
std::optional<std::string> FindDefaultSystemPrompt(absl::string_view text) {
  for (absl::string_view header : {"<|im_start|>system\\n", "<|im_start|>system\n"}) {
    for (size_t at = text.find(header); at != absl::string_view::npos;
         at = text.find(header, at + 1)) {
      absl::string_view rest = text.substr(at + header.size());
      const size_t end = rest.find("<|im_end|>");
      if (end == absl::string_view::npos) continue;
      const absl::string_view literal = rest.substr(0, end);
      if (literal.find_first_of("'\"") != absl::string_view::npos ||
          absl::StrContains(literal, "{{") || absl::StrContains(literal, "{%")) {
        continue;
      }
      std::string prompt;
      for (size_t i = 0; i < literal.size(); ++i) {
        if (literal[i] == '\\' && i + 1 < literal.size()) {
          ++i;
          prompt.push_back(literal[i] == 'n' ? '\n' : literal[i]);
        } else {
          prompt.push_back(literal[i]);
        }
      }
      return prompt;
    }
  }
  return std::nullopt;
}

// Jinja's `trim` (Python str.strip()): whitespace off both ends.
absl::string_view Trim(absl::string_view text) {
  auto is_space = [](char32_t c) { return IsWhitespace(c) || (c >= 0x1C && c <= 0x1F); };
  size_t start = 0;
  while (start < text.size()) {
    const DecodedChar decoded = DecodeUtf8(text, start);
    if (decoded.code_point == kInvalidCodePoint || !is_space(decoded.code_point)) break;
    start += decoded.length;
  }
  size_t end = text.size();
  while (end > start) {
    size_t char_start = end - 1;
    while (char_start > start && (static_cast<unsigned char>(text[char_start]) & 0xC0) == 0x80) {
      --char_start;
    }
    const DecodedChar decoded = DecodeUtf8(text, char_start);
    if (decoded.code_point == kInvalidCodePoint || !is_space(decoded.code_point)) break;
    end = char_start;
  }
  return text.substr(start, end - start);
}

// Records where message i's part of `out` ends, where the caller asked (RenderedChat).
void EndMessage(const std::string& out, std::vector<size_t>* message_ends) {
  if (message_ends != nullptr) message_ends->push_back(out.size());
}

// Llama 3's turns from messages[first] on, each header, trimmed content and <|eot_id|>
// (tool calls and results as Llama 3.1+ writes them), then the assistant header when
// `add_generation_prompt`; each turn's end recorded.
void AppendLlama3Turns(const std::vector<ChatMessage>& messages, size_t first,
                       bool add_generation_prompt, std::string* out, std::vector<size_t>* message_ends) {
  for (size_t i = first; i < messages.size(); ++i) {
    const ChatMessage& message = messages[i];
    if (!message.tool_calls.empty()) {
      *out += LlamaToolCallTurn(message.tool_calls[0]);
    } else if (message.role == "tool") {
      *out += LlamaToolResultTurn(message);
    } else {
      absl::StrAppend(out, "<|start_header_id|>", message.role, "<|end_header_id|>\n\n", Trim(message.content),
                      "<|eot_id|>");
    }
    EndMessage(*out, message_ends);
  }
  if (add_generation_prompt) *out += "<|start_header_id|>assistant<|end_header_id|>\n\n";
}

}  // namespace

absl::Status ChatTemplate::CheckRenderable(const std::vector<ChatMessage>& messages,
                                           const std::vector<nlohmann::ordered_json>& tools) const {
  const bool renders_tools = RendersTools();
  const std::string no_tools = absl::StrCat("; the ", Describe(),
                                            " prompt format does not render tools (Qwen2.5's, Qwen3's and Llama "
                                            "3.1+'s templates do)");
  if (!tools.empty() && !renders_tools) return absl::InvalidArgumentError(absl::StrCat("tools are given", no_tools));
  for (size_t i = 0; i < messages.size(); ++i) {
    const std::string& role = messages[i].role;
    if (role != "system" && role != "user" && role != "assistant" && role != "tool") {
      return absl::InvalidArgumentError(absl::StrCat("message ", i, " has role '", role,
                                                     "'; supported roles are system, user, assistant and tool"));
    }
    if (!messages[i].tool_calls.empty() && role != "assistant") {
      return absl::InvalidArgumentError(
          absl::StrCat("message ", i, " has tool calls but role '", role, "'; only assistant messages make them"));
    }
    if ((role == "tool" || !messages[i].tool_calls.empty()) && !renders_tools) {
      return absl::InvalidArgumentError(absl::StrCat(
          "message ", i, role == "tool" ? " is a tool result" : " makes tool calls", no_tools));
    }
    if (format_ == Format::kLlama31 && messages[i].tool_calls.size() > 1) {
      return absl::InvalidArgumentError(absl::StrCat("message ", i, " makes ", messages[i].tool_calls.size(),
                                                     " tool calls; Llama 3.1+'s template writes one a message"));
    }
  }
  if (format_ == Format::kLlama31 && !tools.empty()) {  // the tools go into the first user message
    const size_t first = !messages.empty() && messages[0].role == "system" ? 1 : 0;
    if (first == messages.size() || messages[first].role != "user") {
      return absl::InvalidArgumentError(absl::StrCat(
          "tools are given, which Llama 3.1+'s template puts in the first message after the system one, but ",
          first == messages.size() ? "there is none" : absl::StrCat("message ", first, " is ", messages[first].role, "'s"),
          "; it must be the user's"));
    }
  }
  return absl::OkStatus();
}

bool ChatTemplate::RendersTools() const {
  return format_ == Format::kQwen3 || (format_ == Format::kChatMl && chatml_tools_) ||
         (format_ == Format::kLlama31 && llama_tools_);
}

absl::StatusOr<ChatTemplate> ChatTemplate::FromFormatName(absl::string_view name) {
  if (name == "chatml") return ChatTemplate(Format::kChatMl);
  if (name == "llama3") return ChatTemplate(Format::kLlama3);
  if (name == "llama3.1") return ChatTemplate(Format::kLlama31);
  if (name == "qwen3") return ChatTemplate(Format::kQwen3);
  if (name == "deepseek-r1") return ChatTemplate(Format::kDeepSeekR1);
  return absl::InvalidArgumentError(absl::StrCat("unknown prompt format '", name,
                                                 "' (supported: chatml, llama3, llama3.1, qwen3, deepseek-r1)"));
}

absl::StatusOr<ChatTemplate> ChatTemplate::Recognize(absl::string_view text) {
  if (absl::StrContains(text, "<|im_start|>") && absl::StrContains(text, "<|im_end|>")) {
    if (IsQwen3Template(text)) return ChatTemplate(Format::kQwen3);
    if (absl::StrContains(text, "<think>") || absl::StrContains(text, "reasoning_content")) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the chat template is ChatML with reasoning (<think>) handling other than Qwen3's, "
          "which is not rendered natively",
          kSuggestFormat));
    }
    std::optional<std::string> system = FindDefaultSystemPrompt(text);
    ChatTemplate chat(Format::kChatMl, system.value_or(""), system.has_value());
    chat.chatml_tools_ = system.has_value() && absl::StrContains(text, absl::StrCat("{{- '", *system, "' }}")) &&
                         HasQwenToolLines(text);
    return chat;
  }
  if (absl::StrContains(text, "<|start_header_id|>") && absl::StrContains(text, "<|eot_id|>")) {
    if (absl::StrContains(text, "<|image|>")) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the chat template is Llama 3.2 Vision's (images), which is not rendered natively",
          kSuggestFormat));
    }
    if (absl::StrContains(text, "Cutting Knowledge Date: December 2023") &&
        absl::StrContains(text, "\"Today Date: \" + date_string")) {
      ChatTemplate chat(Format::kLlama31);
      chat.dates_today_ = absl::StrContains(text, "strftime_now");
      chat.llama_tools_ = HasLlamaToolLines(text);
      return chat;
    }
    if (absl::StrContains(text, "Cutting Knowledge Date")) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the chat template is a Llama 3.1+ variant (a date in the system header written "
          "differently), which is not rendered natively",
          kSuggestFormat));
    }
    return ChatTemplate(Format::kLlama3);
  }
  if (absl::StrContains(text, "<｜User｜>") && absl::StrContains(text, "<｜Assistant｜>")) {
    const bool think_prompt = absl::StrContains(text, kDeepSeekR1ThinkPrompt);
    const bool plain_prompt = absl::StrContains(text, kDeepSeekR1PlainPrompt);
    bool all_lines = think_prompt != plain_prompt;
    for (absl::string_view line : kDeepSeekR1Lines) all_lines = all_lines && absl::StrContains(text, line);
    if (!all_lines) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the chat template is a DeepSeek one other than DeepSeek-R1-Distill's (V3, R1-0528 or "
          "an edited copy), which is not rendered natively",
          kSuggestFormat));
    }
    ChatTemplate chat(Format::kDeepSeekR1);
    chat.opens_think_ = think_prompt;
    return chat;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown chat template (starting '", text.substr(0, 60),
      "'): only ChatML (Qwen), Llama 3 and DeepSeek-R1-Distill templates are recognised",
      kSuggestFormat));
}

absl::StatusOr<std::string> ChatTemplate::Render(const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                                                 const std::vector<nlohmann::ordered_json>& tools) const {
  RETURN_IF_ERROR(CheckRenderable(messages, tools));
  return RenderFormat(messages, add_generation_prompt, tools, /*message_ends=*/nullptr);
}

absl::StatusOr<RenderedChat> ChatTemplate::RenderWithMessageEnds(const std::vector<ChatMessage>& messages,
                                                                 const std::vector<nlohmann::ordered_json>& tools) const {
  RETURN_IF_ERROR(CheckRenderable(messages, tools));
  RenderedChat rendered;
  rendered.text = RenderFormat(messages, /*add_generation_prompt=*/false, tools, &rendered.message_ends);
  return rendered;
}

std::string ChatTemplate::RenderFormat(const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                                       const std::vector<nlohmann::ordered_json>& tools,
                                       std::vector<size_t>* message_ends) const {
  switch (format_) {
    case Format::kChatMl:
      return RenderChatMl(messages, add_generation_prompt, tools, message_ends);
    case Format::kLlama3:
      return RenderLlama3(messages, add_generation_prompt, message_ends);
    case Format::kLlama31:
      return RenderLlama31(messages, add_generation_prompt, tools, message_ends);
    case Format::kQwen3:
      return RenderQwen3(messages, add_generation_prompt, tools, message_ends);
    case Format::kDeepSeekR1:
      return RenderDeepSeekR1(messages, add_generation_prompt, message_ends);
  }
  ROLLOUT_CHECK(false) << "unhandled chat format";
  return "";
}

std::string ChatTemplate::RenderChatMl(const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                                       const std::vector<nlohmann::ordered_json>& tools,
                                       std::vector<size_t>* message_ends) const {
  std::string out;
  const bool has_system = !messages.empty() && messages[0].role == "system";
  if (!tools.empty()) {  // Qwen2.5: the system message, or the default, then the tools
    absl::StrAppend(&out, "<|im_start|>system\n", has_system ? messages[0].content : default_system_, "\n\n",
                    QwenToolsHeader(tools));
  } else if (has_default_system_ && !has_system) {
    absl::StrAppend(&out, "<|im_start|>system\n", default_system_, "<|im_end|>\n");
  }
  for (size_t i = 0; i < messages.size(); ++i) {
    const ChatMessage& message = messages[i];
    if (i == 0 && has_system && !tools.empty()) {  // written with the tools above
      EndMessage(out, message_ends);
      continue;
    }
    if (message.role == "tool") {
      AppendQwenToolResult(messages, i, &out);
    } else if (!message.tool_calls.empty()) {
      out += "<|im_start|>assistant";
      if (!message.content.empty()) absl::StrAppend(&out, "\n", message.content);
      for (const ChatToolCall& call : message.tool_calls) {
        absl::StrAppend(&out, "\n", QwenToolCall(call, /*string_arguments_as_is=*/false));
      }
      out += "<|im_end|>\n";
    } else {
      absl::StrAppend(&out, "<|im_start|>", message.role, "\n", message.content, "<|im_end|>\n");
    }
    EndMessage(out, message_ends);
  }
  if (add_generation_prompt) out += "<|im_start|>assistant\n";
  return out;
}

std::string ChatTemplate::RenderLlama3(const std::vector<ChatMessage>& messages,
                                       bool add_generation_prompt, std::vector<size_t>* message_ends) const {
  std::string out = messages.empty() ? "" : "<|begin_of_text|>";
  AppendLlama3Turns(messages, 0, add_generation_prompt, &out, message_ends);
  return out;
}

std::string ChatTemplate::RenderLlama31(const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                                        const std::vector<nlohmann::ordered_json>& tools,
                                        std::vector<size_t>* message_ends) const {
  std::string date = date_string_;
  if (date.empty()) {
    date = dates_today_ ? absl::FormatTime("%d %b %Y", absl::Now(), absl::LocalTimeZone())
                        : kLlama31DefaultDate;
  }
  const bool has_system = !messages.empty() && messages[0].role == "system";
  std::string out = absl::StrCat(
      "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n", tools.empty() ? "" : "Environment: ipython\n",
      "Cutting Knowledge Date: December 2023\nToday Date: ", date, "\n\n",
      has_system ? Trim(messages[0].content) : "", "<|eot_id|>");
  size_t first = 0;
  if (has_system) {  // the system message is the header's
    EndMessage(out, message_ends);
    first = 1;
  }
  if (!tools.empty()) {  // CheckRenderable: a user message follows
    out += LlamaToolsTurn(tools, Trim(messages[first].content));
    EndMessage(out, message_ends);
    ++first;
  }
  AppendLlama3Turns(messages, first, add_generation_prompt, &out, message_ends);
  return out;
}

std::string ChatTemplate::RenderQwen3(const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                                      const std::vector<nlohmann::ordered_json>& tools,
                                      std::vector<size_t>* message_ends) const {
  // The last user message that is not a tool response written as one; with no user
  // message, no assistant message counts as after it.
  int64_t last_query = static_cast<int64_t>(messages.size()) - 1;
  for (int64_t i = last_query; i >= 0; --i) {
    const std::string& content = messages[i].content;
    if (messages[i].role == "user" &&
        !(absl::StartsWith(content, "<tool_response>") && absl::EndsWith(content, "</tool_response>"))) {
      last_query = i;
      break;
    }
  }
  const bool has_system = !messages.empty() && messages[0].role == "system";
  std::string out;
  if (!tools.empty()) {
    absl::StrAppend(&out, "<|im_start|>system\n", has_system ? messages[0].content + "\n\n" : "",
                    QwenToolsHeader(tools));
    if (has_system) EndMessage(out, message_ends);
  }
  for (int64_t i = tools.empty() || !has_system ? 0 : 1; i < static_cast<int64_t>(messages.size()); ++i) {
    const ChatMessage& message = messages[i];
    if (message.role == "tool") {
      AppendQwenToolResult(messages, static_cast<size_t>(i), &out);
      EndMessage(out, message_ends);
      continue;
    }
    if (message.role != "assistant") {
      absl::StrAppend(&out, "<|im_start|>", message.role, "\n", message.content, "<|im_end|>\n");
      EndMessage(out, message_ends);
      continue;
    }
    const auto [reasoning, answer] = SplitReasoning(message.content);
    const bool last = i + 1 == static_cast<int64_t>(messages.size());
    if (i > last_query && (last || !reasoning.empty())) {
      absl::StrAppend(&out, "<|im_start|>assistant\n<think>\n",
                      RstripNewlines(LstripNewlines(reasoning)), "\n</think>\n\n", LstripNewlines(answer));
    } else {
      absl::StrAppend(&out, "<|im_start|>assistant\n", answer);
    }
    for (size_t call = 0; call < message.tool_calls.size(); ++call) {
      const ChatToolCall& tool_call = message.tool_calls[call];
      if (call > 0 || !answer.empty()) out += "\n";
      out += QwenToolCall(tool_call, /*string_arguments_as_is=*/true);
    }
    out += "<|im_end|>\n";
    EndMessage(out, message_ends);
  }
  if (add_generation_prompt) {
    out += "<|im_start|>assistant\n";
    if (!enable_thinking_) out += "<think>\n\n</think>\n\n";
  }
  return out;
}

std::string ChatTemplate::RenderDeepSeekR1(const std::vector<ChatMessage>& messages,
                                           bool add_generation_prompt, std::vector<size_t>* message_ends) const {
  std::string system;
  for (const ChatMessage& message : messages) {
    if (message.role == "system") system = message.content;
  }
  std::string out = absl::StrCat("<｜begin▁of▁sentence｜>", system);
  for (const ChatMessage& message : messages) {
    if (message.role == "user") {
      absl::StrAppend(&out, "<｜User｜>", message.content);
    } else if (message.role == "assistant") {
      absl::string_view answer = message.content;
      if (const size_t close = answer.rfind("</think>"); close != absl::string_view::npos) {
        answer.remove_prefix(close + std::string_view("</think>").size());
      }
      absl::StrAppend(&out, "<｜Assistant｜>", answer, "<｜end▁of▁sentence｜>");
    }
    EndMessage(out, message_ends);  // a system message's text went to the front
  }
  if (add_generation_prompt) absl::StrAppend(&out, "<｜Assistant｜>", opens_think_ ? "<think>\n" : "");
  return out;
}

std::string ChatTemplate::Describe() const {
  if (format_ == Format::kDeepSeekR1) {
    return opens_think_ ? "deepseek-r1" : "deepseek-r1 without <think> in the generation prompt";
  }
  if (format_ == Format::kLlama3) return "llama3";
  if (format_ == Format::kQwen3) return "qwen3";
  if (format_ == Format::kLlama31) return llama_tools_ ? "llama3.1 with tools" : "llama3.1";
  if (!has_default_system_) return "chatml";
  return absl::StrCat("chatml with default system prompt '", default_system_, "'", chatml_tools_ ? ", and tools" : "");
}

}  // namespace rollout::models
