// Chat prompt formats rendered natively (there is no Jinja engine): a model's Jinja
// chat template is recognised by its text and mapped to one of
//
//   chatml  <|im_start|>{role}\n{content}<|im_end|>\n ... then <|im_start|>assistant\n
//           (Qwen2, Qwen2.5). A template that writes a default system message when
//           the conversation has none (Qwen2.5: "You are Qwen, created by Alibaba
//           Cloud. You are a helpful assistant.") keeps that message.
//   llama3  <|begin_of_text|><|start_header_id|>{role}<|end_header_id|>\n\n{content,
//           trimmed}<|eot_id|> ... then <|start_header_id|>assistant<|end_header_id|>\n\n
//   llama3.1  Llama 3.1 / 3.2 / 3.3 Instruct: <|begin_of_text|>, then always a system
//           header "Cutting Knowledge Date: December 2023\nToday Date: {date}\n\n"
//           followed by the system message (trimmed, or nothing), then as llama3. The
//           date is set_date_string's, else today's ("%d %b %Y", local time) for a
//           template that asks strftime_now for it (3.2, as transformers renders it),
//           else "26 Jul 2024" (3.1, 3.3: the templates' own default).
//   qwen3   ChatML as Qwen3's template writes it: an assistant message's reasoning
//           (the text up to its last </think>) is dropped unless the message follows
//           the last user message, where it is kept as <think>\n...\n</think>\n\n
//           (and an empty block is added to the final one); with enable_thinking false
//           (set_enable_thinking) the generation prompt ends in an empty think block.
//   deepseek-r1  DeepSeek-R1-Distill (Qwen and Llama): <｜begin▁of▁sentence｜>, the last
//           system message's content, then <｜User｜>{content} and
//           <｜Assistant｜>{content after its last </think>}<｜end▁of▁sentence｜>; the
//           generation prompt <｜Assistant｜><think>\n (the template's current revision;
//           its first one, recognised too, ends at <｜Assistant｜>).
//
// Templates these do not reproduce are refused rather than approximated: unknown
// ones, other ChatML with reasoning (<think>: Qwen3 variants, QwQ), Llama 3.2
// Vision (images) and other DeepSeek templates (V3, R1-0528). The caller may then name a format explicitly.
//
// Tools (function calling) render as the templates write them, schemas and arguments as
// transformers' tojson does (models/python_json.h):
//   Qwen2.5 (chatml) and qwen3: the tools' schemas in the system message ("# Tools ...
//           <tools>\n{schema}\n</tools> ..."), an assistant message's tool calls after its
//           content as <tool_call>\n{"name": "NAME", "arguments": ARGUMENTS}\n</tool_call>
//           (arguments given as a JSON string: Qwen2.5 quotes them, Qwen3 writes them as
//           is), and "tool" messages (results) as one user turn per run of them, each in
//           <tool_response> tags. qwen3 has them always; chatml when the template is
//           Qwen2.5's (its tool lines, and the default system message its tool header
//           falls back to).
//   llama3.1  when the template is Llama 3.1+'s with its tool lines: "Environment:
//           ipython" in the system header, the schemas (indented 4) put in the first
//           message after the system one, which must exist and becomes the user's; a tool
//           call as the whole reply {"name": "NAME", "parameters": ARGUMENTS} (one a
//           message); a result as an ipython turn, its text JSON-quoted (the template
//           writes any iterable content with tojson).
// Other formats refuse tools, tool calls and tool messages rather than drop them.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace rollout::models {

// One function call of an assistant message (OpenAI's tool_calls[i].function).
struct ChatToolCall {
  std::string name;
  // An object, or its JSON text as a string (OpenAI's format); keys in the data's order.
  nlohmann::ordered_json arguments;
};

struct ChatMessage {
  std::string role;  // "system" | "user" | "assistant" | "tool" (a tool's result)
  std::string content;
  std::vector<ChatToolCall> tool_calls = {};  // assistant messages only
};

// A conversation rendered whole, with where each message's part of the text ends.
struct RenderedChat {
  std::string text;
  // Per message: the offset in `text` after its part, so message i's part is
  // text[message_ends[i - 1], message_ends[i]) (message 0's from 0: what the format
  // writes before the first message, a BOS or a default system message, is in it). A
  // system message the format moves to the front (deepseek-r1) adds nothing where it
  // stands (its end is that of the message before it; its text is in message 0's part).
  std::vector<size_t> message_ends;
};

class ChatTemplate {
 public:
  // "chatml", "llama3", "llama3.1", "qwen3" or "deepseek-r1"; InvalidArgument naming
  // the supported formats otherwise.
  static absl::StatusOr<ChatTemplate> FromFormatName(absl::string_view name);

  // The format a Jinja chat template's text renders; InvalidArgument saying the
  // template is not supported and suggesting an explicit prompt format otherwise.
  static absl::StatusOr<ChatTemplate> Recognize(absl::string_view template_text);

  // The prompt for `messages`, ending with the assistant header when
  // `add_generation_prompt`; `tools` are the JSON schemas the model may call
  // (apply_chat_template's tools). InvalidArgument naming the message for a role other
  // than system/user/assistant/tool, tool calls on another role, tools, tool calls or
  // tool messages in a format that does not render them, or what Llama's template
  // refuses (tools without a message to put them in, two calls in one message).
  absl::StatusOr<std::string> Render(const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                                     const std::vector<nlohmann::ordered_json>& tools = {}) const;
  // Render(messages, false, tools) with each message's end (RenderedChat): the text the
  // template writes for the whole conversation, cut where it writes each message. Unlike
  // Render(messages[0..i]), which renders message i as the last one, this is message i
  // as the whole conversation has it (Qwen3 drops the reasoning of a reply that a user
  // message follows, and adds an empty think block to the final reply only).
  absl::StatusOr<RenderedChat> RenderWithMessageEnds(const std::vector<ChatMessage>& messages,
                                                     const std::vector<nlohmann::ordered_json>& tools = {}) const;

  // "chatml", "chatml with default system prompt '...'" (", and tools" when it renders
  // them), "llama3", "llama3.1" ("llama3.1 with tools"), "qwen3", "deepseek-r1",
  // "deepseek-r1 without <think> in the generation prompt".
  std::string Describe() const;

  // transformers' apply_chat_template(enable_thinking=...) for Qwen3's template (true,
  // the default, renders as the argument left out); other formats ignore it.
  void set_enable_thinking(bool enable) { enable_thinking_ = enable; }
  // apply_chat_template(date_string=...) for Llama 3.1+ templates ("26 Jul 2024");
  // empty: the template's own choice. Other formats ignore it.
  void set_date_string(std::string date) { date_string_ = std::move(date); }

 private:
  enum class Format { kChatMl, kLlama3, kLlama31, kQwen3, kDeepSeekR1 };
  explicit ChatTemplate(Format format, std::string default_system = "",
                        bool has_default_system = false)
      : format_(format),
        default_system_(std::move(default_system)),
        has_default_system_(has_default_system) {}

  // InvalidArgument naming the first message this format cannot render (its role, or
  // tool calls or results where the format has no tools), or tools it cannot.
  absl::Status CheckRenderable(const std::vector<ChatMessage>& messages,
                               const std::vector<nlohmann::ordered_json>& tools) const;
  bool RendersTools() const;
  // Each writes the conversation in its format and, where `message_ends` is not null,
  // pushes the text's size after each message (RenderedChat::message_ends).
  std::string RenderFormat(const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                           const std::vector<nlohmann::ordered_json>& tools, std::vector<size_t>* message_ends) const;
  std::string RenderChatMl(const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                           const std::vector<nlohmann::ordered_json>& tools, std::vector<size_t>* message_ends) const;
  std::string RenderLlama3(const std::vector<ChatMessage>& messages,
                           bool add_generation_prompt, std::vector<size_t>* message_ends) const;
  std::string RenderLlama31(const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                            const std::vector<nlohmann::ordered_json>& tools, std::vector<size_t>* message_ends) const;
  std::string RenderQwen3(const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                          const std::vector<nlohmann::ordered_json>& tools, std::vector<size_t>* message_ends) const;
  std::string RenderDeepSeekR1(const std::vector<ChatMessage>& messages,
                               bool add_generation_prompt, std::vector<size_t>* message_ends) const;

  Format format_;
  std::string default_system_;  // used when the first message is not a system one
  bool has_default_system_;
  bool chatml_tools_ = false;  // chatml: the template is Qwen2.5's, tool lines included
  bool llama_tools_ = false;   // llama3.1: the template has Llama 3.1+'s tool lines
  bool enable_thinking_ = true;
  bool dates_today_ = false;  // llama3.1: the template asks strftime_now for the date
  bool opens_think_ = true;   // deepseek-r1: the generation prompt ends in <think>\n
  std::string date_string_;
};

}  // namespace rollout::models
