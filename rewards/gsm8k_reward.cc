// verl's gsm8k reward (verl/utils/reward_score/gsm8k.py), rule for rule.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/string_view.h"
#include "re2/re2.h"
#include "rewards/builtin_rewards.h"
#include "rewards/python_text.h"

namespace rollout::rewards {
namespace {

// verl matches only the end of the response: answers come last, and regexes over
// very long strings are slow. Counted in characters (code points), as Python does.
constexpr int kSolutionClipChars = 300;

// Strict: the last "#### <number>", commas and '$' stripped.
std::optional<std::string> ExtractStrict(absl::string_view tail) {
  static const RE2* const kStrict = new RE2(R"(#### (\-?[0-9\.\,]+))");
  std::vector<std::string> matches = FindAll(*kStrict, tail);
  if (matches.empty()) return std::nullopt;
  return absl::StrReplaceAll(matches.back(), {{",", ""}, {"$", ""}});
}

// Flexible: the last number that is not just ".", kept as written (commas and all).
// verl's quirk kept: when every match is ".", its loop ends on the first match.
std::optional<std::string> ExtractFlexible(absl::string_view tail) {
  static const RE2* const kNumber = new RE2(R"((\-?[0-9\.\,]+))");
  std::vector<std::string> matches = FindAll(*kNumber, tail);
  if (matches.empty()) return std::nullopt;
  for (auto it = matches.rbegin(); it != matches.rend(); ++it) {
    if (*it != ".") return *it;
  }
  return matches.front();
}

class Gsm8kReward final : public RewardFunction {
 public:
  explicit Gsm8kReward(const Gsm8kOptions& options) : options_(options) {}

  const std::string& name() const override { return name_; }

  absl::StatusOr<RewardOutput> Score(const RewardInput& input) const override {
    absl::string_view tail = LastCodePoints(input.response, kSolutionClipChars);
    std::optional<std::string> answer;
    if (options_.method == "strict") {
      answer = ExtractStrict(tail);
    } else if (options_.method == "flexible") {
      answer = ExtractFlexible(tail);
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "gsm8k reward: unknown method '", options_.method, "'; known: strict, flexible"));
    }
    RewardOutput output;
    // verl compares the ground truth as given: datasets store it already extracted.
    const bool correct = answer.has_value() && *answer == input.ground_truth;
    output.extra["acc"] = correct ? 1 : 0;
    if (!answer.has_value()) {
      output.score = 0;
    } else {
      output.score = correct ? options_.score : options_.format_score;
    }
    return output;
  }

 private:
  const std::string name_ = "gsm8k";
  const Gsm8kOptions options_;
};

}  // namespace

std::unique_ptr<RewardFunction> MakeGsm8kReward(const Gsm8kOptions& options) {
  return std::make_unique<Gsm8kReward>(options);
}

}  // namespace rollout::rewards
