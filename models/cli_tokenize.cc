#include "models/cli_tokenize.h"

#include <cstdint>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/flags.h"
#include "common/status_macros.h"
#include "models/json_prompt.h"
#include "models/tokenizer.h"

namespace rollout::models {
namespace {

using nlohmann::json;

constexpr int kExitOk = 0;
constexpr int kExitBadInput = 1;
constexpr int kExitUsage = 2;

enum class Mode { kEncode, kDecode, kChat };

struct TokenizeFlags {
  std::string tokenizer;
  bool decode = false;
  bool chat = false;
  std::string chat_format;
  bool enable_thinking = true;
  std::string date_string;
  bool add_special_tokens = false;
  bool skip_special_tokens = false;
};

FlagSet MakeFlags(TokenizeFlags* f) {
  FlagSet flags(
      "rollout tokenize --tokenizer DIR [--decode | --chat] < input.jsonl",
      "Tokenizes JSON lines from stdin with the model's tokenizer, one JSON line out per line in:\n"
      "  default   {\"text\": ...} or a JSON string     -> {\"ids\": [...]}\n"
      "  --decode  {\"ids\": [...]} or a JSON list      -> {\"text\": ...}\n"
      "  --chat    {\"messages\": [{\"role\": ..., \"content\": ...}, ...]} or the list\n"
      "            -> {\"text\": prompt, \"ids\": [...]} (with the assistant generation prompt)");
  flags.AddString("tokenizer", &f->tokenizer, "model directory with tokenizer.json (required)");
  flags.AddBool("decode", &f->decode, "token ids in, text out");
  flags.AddBool("chat", &f->chat, "chat messages in, prompt text and ids out");
  flags.AddString("chat_format", &f->chat_format,
                  "chatml|llama3|llama3.1|qwen3|deepseek-r1 instead of recognising the model's "
                  "chat template");
  flags.AddBool("enable_thinking", &f->enable_thinking,
                "false: Qwen3 chat prompts end in an empty think block (no reasoning)");
  flags.AddString("date_string", &f->date_string,
                  "the date in Llama 3.1+ system headers (default: the template's)");
  flags.AddBool("add_special_tokens", &f->add_special_tokens,
                "encode: add the post-processor's tokens (Llama 3: <|begin_of_text|>)");
  flags.AddBool("skip_special_tokens", &f->skip_special_tokens, "decode: leave special tokens out");
  return flags;
}

// The output line for one input line.
absl::StatusOr<json> ProcessLine(const Tokenizer& tokenizer, const TokenizeFlags& f, Mode mode,
                                 const std::string& line) {
  const json value = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) return absl::InvalidArgumentError("not valid JSON");
  switch (mode) {
    case Mode::kDecode: {
      ASSIGN_OR_RETURN(std::vector<int32_t> ids, ParseTokenIds(value));
      return json{{"text", tokenizer.Decode(ids, f.skip_special_tokens)}};
    }
    case Mode::kChat: {
      ASSIGN_OR_RETURN(const ChatPrompt chat, ParseChatPromptText(line));  // keeps the keys' order
      ASSIGN_OR_RETURN(std::string prompt,
                       tokenizer.RenderChat(chat.messages, /*add_generation_prompt=*/true, chat.tools));
      return json{{"text", prompt}, {"ids", tokenizer.Encode(prompt)}};
    }
    case Mode::kEncode:
      break;
  }
  const json* text = &value;
  if (value.is_object() && value.contains("text")) text = &value.at("text");
  if (!text->is_string())
    return absl::InvalidArgumentError("expected {\"text\": string} or a JSON string");
  return json{{"ids", tokenizer.Encode(text->get<std::string>(), f.add_special_tokens)}};
}

int ProcessStdin(const Tokenizer& tokenizer, const TokenizeFlags& f, Mode mode) {
  std::string line;
  for (int64_t number = 1; std::getline(std::cin, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    absl::StatusOr<json> out = ProcessLine(tokenizer, f, mode, line);
    if (!out.ok()) {
      std::cout << std::flush;
      std::cerr << "rollout tokenize: line " << number << ": " << out.status().message() << "\n";
      return kExitBadInput;
    }
    std::cout << out->dump(-1, ' ', false, json::error_handler_t::replace) << "\n" << std::flush;
  }
  return kExitOk;
}

}  // namespace

int RunTokenizeCommand(const std::vector<std::string>& args) {
  TokenizeFlags f;
  FlagSet flags = MakeFlags(&f);
  absl::StatusOr<FlagSet::Parsed> parsed = flags.Parse(args);
  auto usage_error = [](absl::string_view message) {
    std::cerr << "rollout tokenize: " << message << "\n";
    return kExitUsage;
  };
  if (!parsed.ok()) return usage_error(parsed.status().message());
  if (parsed->help) {
    std::cout << flags.Usage();
    return kExitOk;
  }
  if (!parsed->positional.empty())
    return usage_error("unexpected argument '" + parsed->positional[0] + "'");
  if (f.tokenizer.empty()) return usage_error("--tokenizer DIR is required");
  if (f.decode && f.chat) return usage_error("--decode and --chat exclude each other");
  TokenizerOptions options;
  options.chat_format = f.chat_format;
  options.enable_thinking = f.enable_thinking;
  options.date_string = f.date_string;
  absl::StatusOr<std::unique_ptr<Tokenizer>> tokenizer = Tokenizer::Load(f.tokenizer, options);
  if (!tokenizer.ok()) return usage_error(tokenizer.status().message());
  const Mode mode = f.decode ? Mode::kDecode : f.chat ? Mode::kChat : Mode::kEncode;
  if (mode == Mode::kChat) {
    // Reports a missing or unsupported chat template now rather than at line 1.
    absl::Status usable = (*tokenizer)->RenderChat({}, false).status();
    if (!usable.ok()) return usage_error(usable.message());
  }
  return ProcessStdin(**tokenizer, f, mode);
}

}  // namespace rollout::models
