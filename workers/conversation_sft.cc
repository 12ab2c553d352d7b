#include "workers/conversation_sft.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace rollout::workers {
namespace {

// The number of leading tokens `a` and `b` share.
size_t SharedPrefix(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  return static_cast<size_t>(std::mismatch(a.begin(), a.begin() + std::min(a.size(), b.size()), b.begin()).first -
                             a.begin());
}

// Token positions [0, n) cut to `max_length` as `truncation` cuts ids.
absl::StatusOr<std::vector<int32_t>> KeptPositions(size_t n, int64_t max_length, const std::string& limit_key,
                                                   const std::string& truncation, const std::string& what) {
  std::vector<int32_t> positions(n);
  std::iota(positions.begin(), positions.end(), 0);
  return TruncateTokens(std::move(positions), max_length, limit_key, truncation, what);
}

}  // namespace

absl::StatusOr<ConversationTokens> EncodeConversation(const models::Tokenizer& tokenizer,
                                                      const std::vector<models::ChatMessage>& messages,
                                                      const std::string& where) {
  const auto context = [&](const absl::Status& status) {
    return absl::Status(status.code(), absl::StrCat(where, ": ", status.message()));
  };
  const auto not_appended = [&](size_t i) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": the chat template does not render message ", i, " by appending to messages 0-",
        static_cast<int64_t>(i) - 1, ", so its tokens cannot be told apart; multi-turn SFT needs a template that does"));
  };
  ConversationTokens tokens;
  std::string before;  // the messages before message i, rendered
  for (size_t i = 0; i < messages.size(); ++i) {
    const std::vector<models::ChatMessage> upto(messages.begin(), messages.begin() + static_cast<int64_t>(i) + 1);
    absl::StatusOr<std::string> rendered = tokenizer.RenderChat(upto, /*add_generation_prompt=*/false);
    if (!rendered.ok()) return context(rendered.status());
    if (!absl::StartsWith(*rendered, before)) return not_appended(i);
    const std::vector<int32_t> ids = tokenizer.Encode(absl::string_view(*rendered).substr(before.size()));
    size_t header = ids.size();  // non-assistant messages: no token counts
    if (messages[i].role == "assistant") {
      const std::vector<models::ChatMessage> earlier(messages.begin(), messages.begin() + static_cast<int64_t>(i));
      absl::StatusOr<std::string> prompt = tokenizer.RenderChat(earlier, /*add_generation_prompt=*/true);
      if (!prompt.ok()) return context(prompt.status());
      if (!absl::StartsWith(*prompt, before)) return not_appended(i);
      header = SharedPrefix(ids, tokenizer.Encode(absl::string_view(*prompt).substr(before.size())));
    }
    tokens.ids.insert(tokens.ids.end(), ids.begin(), ids.end());
    for (size_t t = 0; t < ids.size(); ++t) tokens.counted.push_back(t >= header ? 1 : 0);
    before = *std::move(rendered);
  }
  return tokens;
}

absl::StatusOr<SftRowTokens> ConversationSftRow(const models::Tokenizer& tokenizer,
                                                const std::vector<models::ChatMessage>& messages,
                                                const PromptEncoding& encoding, int64_t max_response_length,
                                                const std::string& where) {
  ASSIGN_OR_RETURN(const ConversationTokens tokens, EncodeConversation(tokenizer, messages, where));
  const size_t first = static_cast<size_t>(std::find(tokens.counted.begin(), tokens.counted.end(), 1) -
                                           tokens.counted.begin());
  if (first == tokens.ids.size()) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": no assistant reply has a token to train on"));
  }
  SftRowTokens row;
  ASSIGN_OR_RETURN(row.prompt, TruncateTokens({tokens.ids.begin(), tokens.ids.begin() + first},
                                              encoding.max_prompt_length, "data.max_prompt_length",
                                              PromptTruncation(encoding.truncation),
                                              absl::StrCat(where, ": the conversation before its first reply")));
  ASSIGN_OR_RETURN(const std::vector<int32_t> kept,
                   KeptPositions(tokens.ids.size() - first, max_response_length, "data.max_response_length",
                                 ResponseTruncation(encoding.truncation),
                                 absl::StrCat(where, ": the conversation from its first reply")));
  for (const int32_t position : kept) {
    row.response.push_back(tokens.ids[first + static_cast<size_t>(position)]);
    row.counted.push_back(tokens.counted[first + static_cast<size_t>(position)]);
  }
  return row;
}

}  // namespace rollout::workers
