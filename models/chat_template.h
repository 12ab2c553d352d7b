// Chat prompt formats rendered natively (there is no Jinja engine): a model's Jinja
// chat template is recognised by its text and mapped to one of
//
//   chatml  <|im_start|>{role}\n{content}<|im_end|>\n ... then <|im_start|>assistant\n
//           (Qwen2, Qwen2.5). A template that writes a default system message when
//           the conversation has none (Qwen2.5: "You are Qwen, created by Alibaba
//           Cloud. You are a helpful assistant.") keeps that message.
//   llama3  <|begin_of_text|><|start_header_id|>{role}<|end_header_id|>\n\n{content,
//           trimmed}<|eot_id|> ... then <|start_header_id|>assistant<|end_header_id|>\n\n
//   qwen3   ChatML as Qwen3's template writes it: an assistant message's reasoning
//           (the text up to its last </think>) is dropped unless the message follows
//           the last user message, where it is kept as <think>\n...\n</think>\n\n
//           (and an empty block is added to the final one); with enable_thinking false
//           (set_enable_thinking) the generation prompt ends in an empty think block.
//
// Templates these do not reproduce are refused rather than approximated: unknown
// ones, other ChatML with reasoning (<think>: Qwen3 variants, QwQ) and Llama 3.1+
// (date/tools system header). The caller may then name a format explicitly. Tools
// and function calling are not supported: messages are system/user/assistant with
// string content.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace rollout::models {

struct ChatMessage {
  std::string role;  // "system" | "user" | "assistant"
  std::string content;
};

class ChatTemplate {
 public:
  // "chatml", "llama3" or "qwen3"; InvalidArgument naming the supported formats
  // otherwise.
  static absl::StatusOr<ChatTemplate> FromFormatName(absl::string_view name);

  // The format a Jinja chat template's text renders; InvalidArgument saying the
  // template is not supported and suggesting an explicit prompt format otherwise.
  static absl::StatusOr<ChatTemplate> Recognize(absl::string_view template_text);

  // The prompt for `messages`, ending with the assistant header when
  // `add_generation_prompt`. InvalidArgument naming the message for a role other
  // than system/user/assistant.
  absl::StatusOr<std::string> Render(const std::vector<ChatMessage>& messages,
                                     bool add_generation_prompt) const;

  // "chatml", "chatml with default system prompt '...'", "llama3", "qwen3".
  std::string Describe() const;

  // transformers' apply_chat_template(enable_thinking=...) for Qwen3's template (true,
  // the default, renders as the argument left out); other formats ignore it.
  void set_enable_thinking(bool enable) { enable_thinking_ = enable; }

 private:
  enum class Format { kChatMl, kLlama3, kQwen3 };
  explicit ChatTemplate(Format format, std::string default_system = "",
                        bool has_default_system = false)
      : format_(format),
        default_system_(std::move(default_system)),
        has_default_system_(has_default_system) {}

  std::string RenderChatMl(const std::vector<ChatMessage>& messages,
                           bool add_generation_prompt) const;
  std::string RenderLlama3(const std::vector<ChatMessage>& messages,
                           bool add_generation_prompt) const;
  std::string RenderQwen3(const std::vector<ChatMessage>& messages,
                          bool add_generation_prompt) const;

  Format format_;
  std::string default_system_;  // used when the first message is not a system one
  bool has_default_system_;
  bool enable_thinking_ = true;
};

}  // namespace rollout::models
