#include "tools/tool_response.h"

#include <vector>

#include "absl/strings/str_cat.h"

namespace rollout::tools {
namespace {

// Where each character of `text` starts: a byte that is not a UTF-8 continuation byte
// (10xxxxxx) starts one.
std::vector<size_t> CharacterStarts(absl::string_view text) {
  std::vector<size_t> starts;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) starts.push_back(i);
  }
  return starts;
}

}  // namespace

std::string TruncateToolResponse(absl::string_view text, int max_characters, absl::string_view side) {
  const std::vector<size_t> starts = CharacterStarts(text);
  const size_t count = starts.size();
  const size_t max = max_characters > 0 ? static_cast<size_t>(max_characters) : 0;
  if (count <= max) return std::string(text);
  // The first n characters and the last n characters.
  const auto head = [&](size_t n) { return text.substr(0, n < count ? starts[n] : text.size()); };
  const auto tail = [&](size_t n) { return n == 0 ? absl::string_view() : text.substr(starts[count - n]); };
  if (side == "left") return absl::StrCat(head(max), "...(truncated)");
  if (side == "right") return absl::StrCat("(truncated)...", tail(max));
  return absl::StrCat(head(max / 2), "...(truncated)...", tail(max / 2));
}

}  // namespace rollout::tools
