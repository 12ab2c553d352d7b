// verl's math_dapo reward (verl/utils/reward_score/math_dapo.py; the answer normalisation
// of Minerva, via lm-evaluation-harness), the reward of verl's DAPO recipe: the last
// "Answer: ..." line in the response's last 300 characters, normalised, equals the
// normalised ground truth: 1, else -1. Each step below is one of verl's, in its order;
// its regular expressions are RE2's spelling of verl's Python ones (RE2 picks the same
// leftmost-first matches), with Python's Unicode `\s`.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/string_view.h"
#include "re2/re2.h"
#include "rewards/builtin_rewards.h"
#include "rewards/python_text.h"

namespace rollout::rewards {
namespace {

// verl scores the end only: "the longest answer in MATH-500 has 159 characters".
constexpr size_t kSolutionClipChars = 300;

// What an unmatched response normalises from.
constexpr absl::string_view kInvalid = "[INVALID]";

// Minerva's substitutions, then the words and TeX it removes, in verl's order.
const std::vector<std::pair<std::string, std::string>>& Substitutions() {
  static const auto* const kSubstitutions = new std::vector<std::pair<std::string, std::string>>{
      {"an ", ""}, {"a ", ""}, {".$", "$"}, {"\\$", ""}, {"\\ ", ""}, {" ", ""}, {"mbox", "text"},
      {",\\text{and}", ","}, {"\\text{and}", ","}, {"\\text{m}", "\\text{}"}};
  return *kSubstitutions;
}

const std::vector<std::string>& RemovedExpressions() {
  static const auto* const kRemoved = new std::vector<std::string>{
      "square", "ways", "integers", "dollars", "mph", "inches", "hours", "km", "units", "\\ldots",
      "sue", "points", "feet", "minutes", "digits", "cents", "degrees", "cm", "gm", "pounds",
      "meters", "meals", "edges", "students", "childrentickets", "multiples", "\\text{s}",
      "\\text{.}", "\\text{\ns}", "\\text{}^2", "\\text{}^3", "\\text{\n}", "\\text{}",
      "\\mathrm{th}", "^\\circ", "^{\\circ}", "\\;", ",\\!", "{,}", "\"", "\\dots"};
  return *kRemoved;
}

// The regular-expression rewrites, in order: the text between the first two '$' of a
// line; the contents of \text{}, \textbf{}, \overline{} (to the first '}') and \boxed{}
// (to the last '}' of the line); then shorthand TeX, "\fracab" -> "\frac{a}{b}" and
// "\sqrta" -> "\sqrt{a}".
const std::vector<std::pair<std::unique_ptr<RE2>, std::string>>& Rewrites() {
  static const auto* const kRewrites = [] {
    auto* rewrites = new std::vector<std::pair<std::unique_ptr<RE2>, std::string>>;
    for (const auto& [pattern, rewrite] : std::vector<std::pair<const char*, const char*>>{
             {R"((.*?)(\$)(.*?)(\$)(.*))", "$\\3$"},
             {R"((\\text\{)(.*?)(\}))", "\\2"},
             {R"((\\textbf\{)(.*?)(\}))", "\\2"},
             {R"((\\overline\{)(.*?)(\}))", "\\2"},
             {R"((\\boxed\{)(.*)(\}))", "\\2"},
             {R"((frac)([^{])(.))", "frac{\\2}{\\3}"},
             {R"((sqrt)([^{]))", "sqrt{\\2}"}}) {
      rewrites->emplace_back(std::make_unique<RE2>(pattern), rewrite);
    }
    return rewrites;
  }();
  return *kRewrites;
}

// verl's normalize_final_answer.
std::string NormalizeFinalAnswer(absl::string_view answer) {
  const size_t equals = answer.rfind('=');
  std::string s(equals == absl::string_view::npos ? answer : answer.substr(equals + 1));
  for (const auto& [before, after] : Substitutions()) s = absl::StrReplaceAll(s, {{before, after}});
  for (const std::string& removed : RemovedExpressions()) s = absl::StrReplaceAll(s, {{removed, ""}});
  for (const auto& [re, rewrite] : Rewrites()) RE2::GlobalReplace(&s, *re, rewrite);
  s = absl::StrReplaceAll(s, {{"$", ""}});
  const std::string without_commas = absl::StrReplaceAll(s, {{",", ""}});
  if (IsPythonDigits(without_commas)) s = without_commas;
  return std::string(PythonStrip(s));
}

// The last "Answer: ..." of `text` (case-insensitive; the rest of its line), or
// "[INVALID]".
std::string ExtractAnswer(absl::string_view text) {
  static const RE2* const kAnswer =
      new RE2(absl::StrCat("(?i)Answer", kPythonSpaceClass, "*:", kPythonSpaceClass, "*([^\\n]+)"));
  const std::vector<std::string> matches = FindAll(*kAnswer, text);
  return matches.empty() ? std::string(kInvalid) : matches.back();
}

class MathDapoReward final : public RewardFunction {
 public:
  const std::string& name() const override { return name_; }

  absl::StatusOr<RewardOutput> Score(const RewardInput& input) const override {
    const std::string prediction = NormalizeFinalAnswer(ExtractAnswer(LastCodePoints(input.response, kSolutionClipChars)));
    const bool correct = prediction == NormalizeFinalAnswer(input.ground_truth);
    RewardOutput output;
    output.score = correct ? 1 : -1;
    output.extra["acc"] = correct ? 1 : 0;
    return output;
  }

 private:
  const std::string name_ = "math_dapo";
};

}  // namespace

std::unique_ptr<RewardFunction> MakeMathDapoReward() { return std::make_unique<MathDapoReward>(); }

}  // namespace rollout::rewards
