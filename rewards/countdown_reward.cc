// TinyZero's countdown reward (verl/utils/reward_score/countdown.py), with a real
// parser (rewards/arithmetic.h) in place of Python's eval. Where the two differ:
//  * without "Assistant:" or "<|im_start|>assistant" the whole response is searched
//    (verl scores 0): here the response arrives without its prompt;
//  * the answer is the last <answer>...</answer> anywhere in that text and may span
//    lines (verl looks only at the last line);
//  * Python-only syntax that TinyZero's character check lets through ("2**3", "7//2",
//    "1.5", "07") is a malformed equation here: format_score, never score.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "nlohmann/json.hpp"
#include "rewards/arithmetic.h"
#include "rewards/builtin_rewards.h"

namespace rollout::rewards {
namespace {

constexpr int64_t kInverseTolerance = 100000;  // TinyZero's abs(result - target) < 1e-5

struct CountdownProblem {
  int64_t target = 0;
  std::vector<int64_t> numbers;  // sorted
};

bool IsInt64(const nlohmann::json& value) {
  if (!value.is_number_integer()) return false;
  return !value.is_number_unsigned() ||
         value.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
}

absl::StatusOr<CountdownProblem> ParseGroundTruth(const std::string& text) {
  const auto fail = [&](absl::string_view problem) {
    return absl::InvalidArgumentError(absl::StrCat(
        "countdown ground_truth must be {\"target\": int, \"numbers\": [int, ...]}: ", problem,
        " in '", text, "'"));
  };
  const nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return fail("not valid JSON");
  if (!json.is_object()) return fail("not a JSON object");
  const auto target = json.find("target");
  if (target == json.end()) return fail("\"target\" is missing");
  if (!IsInt64(*target)) return fail("\"target\" is not an int64 integer");
  const auto numbers = json.find("numbers");
  if (numbers == json.end()) return fail("\"numbers\" is missing");
  if (!numbers->is_array()) return fail("\"numbers\" is not an array");
  CountdownProblem problem;
  problem.target = target->get<int64_t>();
  for (const nlohmann::json& number : *numbers) {
    if (!IsInt64(number)) {
      return fail(absl::StrCat("\"numbers\" holds ", number.dump(), ", not an int64 integer"));
    }
    problem.numbers.push_back(number.get<int64_t>());
  }
  std::sort(problem.numbers.begin(), problem.numbers.end());
  return problem;
}

// The trimmed content of the last <answer>...</answer> after the assistant marker (or
// in the whole response without one); nullopt when there is no such pair. Pairs are
// matched left to right like the non-greedy regex <answer>(.*?)</answer>.
std::optional<absl::string_view> ExtractEquation(absl::string_view response) {
  for (absl::string_view marker : {"Assistant:", "<|im_start|>assistant"}) {
    const size_t at = response.find(marker);
    if (at != absl::string_view::npos) {
      response.remove_prefix(at + marker.size());
      break;
    }
  }
  constexpr absl::string_view kOpen = "<answer>";
  constexpr absl::string_view kClose = "</answer>";
  std::optional<absl::string_view> last;
  size_t from = 0;
  while (true) {
    const size_t open = response.find(kOpen, from);
    if (open == absl::string_view::npos) break;
    const size_t content = open + kOpen.size();
    const size_t close = response.find(kClose, content);
    if (close == absl::string_view::npos) break;
    last = absl::StripAsciiWhitespace(response.substr(content, close - content));
    from = close + kClose.size();
  }
  return last;
}

class CountdownReward final : public RewardFunction {
 public:
  explicit CountdownReward(const CountdownOptions& options) : options_(options) {}

  const std::string& name() const override { return name_; }

  absl::StatusOr<RewardOutput> Score(const RewardInput& input) const override {
    absl::StatusOr<CountdownProblem> problem = ParseGroundTruth(input.ground_truth);
    if (!problem.ok()) return problem.status();
    RewardOutput output;
    output.extra["acc"] = 0;
    const std::optional<absl::string_view> equation = ExtractEquation(input.response);
    if (!equation.has_value()) return output;  // no answer: 0
    output.score = options_.format_score;
    // Malformed, division by zero, overflow: all a well-formed-enough wrong answer.
    absl::StatusOr<ArithmeticResult> result = EvaluateArithmetic(*equation);
    if (!result.ok()) return output;
    std::vector<int64_t> used = std::move(result->literals);
    std::sort(used.begin(), used.end());
    if (used != problem->numbers) return output;
    if (!IsWithinTolerance(result->value, problem->target, kInverseTolerance)) return output;
    output.score = options_.score;
    output.extra["acc"] = 1;
    return output;
  }

 private:
  const std::string name_ = "countdown";
  const CountdownOptions options_;
};

}  // namespace

std::unique_ptr<RewardFunction> MakeCountdownReward(const CountdownOptions& options) {
  return std::make_unique<CountdownReward>(options);
}

}  // namespace rollout::rewards
