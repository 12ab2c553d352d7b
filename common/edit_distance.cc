#include "common/edit_distance.h"

#include <algorithm>
#include <cstddef>

#include "absl/strings/ascii.h"

namespace rollout {

int EditDistance(absl::string_view a, absl::string_view b) {
  // Three rolling rows: the swap rule looks two rows back.
  const size_t n = b.size();
  std::vector<int> two_back(n + 1), previous(n + 1), current(n + 1);
  for (size_t j = 0; j <= n; ++j) previous[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    current[0] = static_cast<int>(i);
    for (size_t j = 1; j <= n; ++j) {
      const int substitution = a[i - 1] == b[j - 1] ? 0 : 1;
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + substitution});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        current[j] = std::min(current[j], two_back[j - 2] + 1);
      }
    }
    std::swap(two_back, previous);
    std::swap(previous, current);
  }
  return previous[n];
}

namespace {

bool IsAbbreviationOf(absl::string_view candidate, absl::string_view typed) {
  if (candidate.empty() || typed.empty() || candidate[0] != typed[0]) return false;
  size_t matched = 0;
  for (char c : typed) {
    if (matched < candidate.size() && candidate[matched] == c) ++matched;
  }
  return matched == candidate.size();
}

}  // namespace

std::string ClosestMatch(absl::string_view typed, const std::vector<std::string>& candidates) {
  const std::string lower_typed = absl::AsciiStrToLower(typed);
  const int threshold = std::max<int>(1, static_cast<int>(typed.size()) / 3);
  std::string best;
  int best_score = threshold + 1;
  int best_distance = 0;
  for (const std::string& candidate : candidates) {
    const std::string lower = absl::AsciiStrToLower(candidate);
    if (lower == lower_typed) return candidate;
    const int distance = EditDistance(lower_typed, lower);
    const int score = IsAbbreviationOf(lower, lower_typed) ? 1 : distance;
    if (score < best_score || (score == best_score && !best.empty() && distance < best_distance)) {
      best = candidate;
      best_score = score;
      best_distance = distance;
    }
  }
  return best;
}

}  // namespace rollout
