// "Did you mean ...?" for names typed by users (recipe keys, choice values).
#pragma once

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace rollout {

// Separates an error from its suggestion: "unknown key 'x' at f:3 — did you mean 'y'?"
constexpr char kEmDash[] = "\xE2\x80\x94";

// Optimal-string-alignment distance: insertions, deletions, substitutions and swaps
// of two adjacent characters each cost 1 ("grop" -> "grpo" is 1). Case-sensitive.
int EditDistance(absl::string_view a, absl::string_view b);

// The candidate closest to `typed`, or "" when none is close. Close means an edit
// distance (compared in lower case) of at most max(1, typed.size() / 3), or a
// candidate that is a subsequence of `typed` with the same first letter, which
// counts as distance 1 (`lr` for `learning_rate`). Ties go to the smaller true
// distance, then to the earlier candidate.
std::string ClosestMatch(absl::string_view typed, const std::vector<std::string>& candidates);

}  // namespace rollout
