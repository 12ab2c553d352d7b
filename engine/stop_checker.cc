#include "engine/stop_checker.h"

#include <algorithm>

namespace rollout::engine {

StopChecker::StopChecker(const models::Tokenizer& tokenizer, const std::vector<std::string>& stops)
    : decoder_(tokenizer, /*skip_special_tokens=*/true), stops_(stops) {
  for (const std::string& stop : stops_) longest_stop_ = std::max(longest_stop_, stop.size());
}

bool StopChecker::Add(int32_t token) {
  const std::string piece = decoder_.Add(token);
  if (piece.empty()) return false;
  // Only a match ending inside the new piece is new.
  const size_t from = text_.size() > longest_stop_ - 1 ? text_.size() - (longest_stop_ - 1) : 0;
  text_ += piece;
  size_t first = std::string::npos;
  for (const std::string& stop : stops_) first = std::min(first, text_.find(stop, from));
  if (first == std::string::npos) return false;
  text_.resize(first);
  stopped_ = true;
  return true;
}

std::string StopChecker::TakeText() {
  if (!stopped_) text_ += decoder_.Finish();
  return std::move(text_);
}

}  // namespace rollout::engine
