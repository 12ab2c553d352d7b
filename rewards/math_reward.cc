// verl's math reward (verl/utils/reward_score/math.py, from Hendrycks MATH): the last
// \boxed{...} compared to the ground truth after verl's strip_string normalisation.
// verl's quirks are kept on purpose, so scores match verl's: where a verl step raises
// (e.g. a bare "\sqrt" at the end, an "a/b" that is not two integers), its is_equiv
// falls back to comparing the raw strings, and so does this file.
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "re2/re2.h"
#include "rewards/builtin_rewards.h"
#include "rewards/python_text.h"

namespace rollout::rewards {
namespace {

// verl's last_boxed_only_string + remove_boxed: the content of the last \boxed{...}
// (braces balanced), or of the last \fbox{...} when there is no \boxed. A
// "\boxed 5$" form wins when present, ending at the next '$'. nullopt: no answer.
std::optional<std::string> LastBoxedContent(absl::string_view text) {
  constexpr absl::string_view kBoxedSpace = "\\boxed ";
  const size_t space = text.rfind(kBoxedSpace);
  if (space != absl::string_view::npos) {
    absl::string_view rest = text.substr(space + kBoxedSpace.size());
    return std::string(rest.substr(0, rest.find('$')));
  }
  absl::string_view prefix = "\\boxed{";
  size_t start = text.rfind("\\boxed");
  if (start == absl::string_view::npos) {
    // verl finds \fbox too but then fails on its prefix (score 0); the contract here
    // accepts it.
    prefix = "\\fbox{";
    start = text.rfind("\\fbox");
    if (start == absl::string_view::npos) return std::nullopt;
  }
  // As verl counts: a '}' before any '{' drives the count negative, so never closes.
  int open = 0;
  for (size_t i = start; i < text.size(); ++i) {
    if (text[i] == '{') ++open;
    if (text[i] != '}' || --open != 0) continue;
    absl::string_view boxed = text.substr(start, i + 1 - start);
    // "\boxed5 {x}" is no answer: verl's remove_boxed rejects it.
    if (!absl::StartsWith(boxed, prefix)) return std::nullopt;
    return std::string(boxed.substr(prefix.size(), boxed.size() - prefix.size() - 1));
  }
  return std::nullopt;
}

// verl's fix_sqrt: "\sqrt3" -> "\sqrt{3}". nullopt where verl raises ("\sqrt" at end).
std::optional<std::string> FixSqrt(const std::string& text) {
  if (!absl::StrContains(text, "\\sqrt")) return text;
  std::vector<absl::string_view> parts = absl::StrSplit(text, "\\sqrt");
  std::string out(parts[0]);
  for (size_t k = 1; k < parts.size(); ++k) {
    absl::string_view part = parts[k];
    if (part.empty()) return std::nullopt;
    if (part[0] == '{') {
      absl::StrAppend(&out, "\\sqrt", part);
      continue;
    }
    absl::string_view a = FirstCodePoint(part);
    absl::StrAppend(&out, "\\sqrt{", a, "}", part.substr(a.size()));
  }
  return out;
}

// verl's fix_fracs: "\frac12" -> "\frac{1}{2}", "\frac1{72}" -> "\frac{1}{72}".
// Returns `text` unchanged when a "\frac" has fewer than two characters after it and
// does not start with '{'; nullopt where verl raises (a "\frac" at the very end).
std::optional<std::string> FixFracs(const std::string& text) {
  std::vector<absl::string_view> parts = absl::StrSplit(text, "\\frac");
  std::string out(parts[0]);
  for (size_t k = 1; k < parts.size(); ++k) {
    absl::string_view part = parts[k];
    out += "\\frac";
    if (part.empty()) return std::nullopt;
    if (part[0] == '{') {
      out += std::string(part);
      continue;
    }
    if (CodePointCount(part) < 2) return text;
    absl::string_view a = FirstCodePoint(part);
    absl::string_view b = FirstCodePoint(part.substr(a.size()));
    absl::string_view rest = part.substr(a.size() + b.size());
    if (b != "{") {
      absl::StrAppend(&out, "{", a, "}{", b, "}", rest);
    } else {
      absl::StrAppend(&out, "{", a, "}{", rest);
    }
  }
  return out;
}

// How Python's int() and str() see `text`, for verl's fix_a_slash_b. ASCII digits
// only: Python's int() also takes other Unicode digits, which answers do not use.
enum class IntForm { kCanonical, kOther, kNotInt };
IntForm ClassifyInt(absl::string_view text) {
  static const RE2* const kCanonical = new RE2(R"(0|-?[1-9][0-9]*)");
  static const RE2* const kPythonInt = new RE2(R"(\s*[+-]?[0-9]+(_[0-9]+)*\s*)");
  re2::StringPiece piece(text.data(), text.size());
  if (RE2::FullMatch(piece, *kCanonical)) return IntForm::kCanonical;
  if (RE2::FullMatch(piece, *kPythonInt)) return IntForm::kOther;
  return IntForm::kNotInt;
}

// verl's fix_a_slash_b: "3/4" -> "\frac{3}{4}" for plain integers. Other integer
// spellings ("03/4") stay as they are; a non-integer side raises in verl (nullopt).
std::optional<std::string> FixASlashB(const std::string& text) {
  std::vector<absl::string_view> parts = absl::StrSplit(text, '/');
  if (parts.size() != 2) return text;
  const IntForm a = ClassifyInt(parts[0]);
  const IntForm b = ClassifyInt(parts[1]);
  if (a == IntForm::kNotInt || b == IntForm::kNotInt) return std::nullopt;
  if (a == IntForm::kOther || b == IntForm::kOther) return text;
  return absl::StrCat("\\frac{", parts[0], "}{", parts[1], "}");
}

// verl's strip_string, step by step (the order matters). nullopt where verl raises.
std::optional<std::string> StripString(absl::string_view raw) {
  std::string s(raw);
  for (const auto& [from, to] : std::vector<std::pair<absl::string_view, absl::string_view>>{
           {"\n", ""}, {"\\!", ""}, {"\\\\", "\\"}, {"tfrac", "frac"}, {"dfrac", "frac"},
           {"\\left", ""}, {"\\right", ""}, {"^{\\circ}", ""}, {"^\\circ", ""}, {"\\$", ""}}) {
    s = absl::StrReplaceAll(s, {{from, to}});
  }
  // Units on the right: "\text{ " only ever introduces units in MATH. verl asserts
  // there is at most one.
  std::vector<std::string> unit_split = absl::StrSplit(s, "\\text{ ");
  if (unit_split.size() > 2) return std::nullopt;
  s = unit_split[0];
  s = absl::StrReplaceAll(s, {{"\\%", ""}});
  s = absl::StrReplaceAll(s, {{" .", " 0."}});
  s = absl::StrReplaceAll(s, {{"{.", "{0."}});
  if (s.empty()) return s;
  if (s[0] == '.') s = absl::StrCat("0", s);
  // A short left-hand side such as "k = " or "x=" is dropped.
  std::vector<std::string> sides = absl::StrSplit(s, '=');
  if (sides.size() == 2 && CodePointCount(sides[0]) <= 2) s = sides[1];
  std::optional<std::string> fixed = FixSqrt(s);
  if (!fixed.has_value()) return std::nullopt;
  s = absl::StrReplaceAll(*fixed, {{" ", ""}});
  fixed = FixFracs(s);
  if (!fixed.has_value()) return std::nullopt;
  s = *fixed == "0.5" ? "\\frac{1}{2}" : *fixed;
  return FixASlashB(s);
}

// verl's is_equiv: equal after normalisation, or equal as written when normalising
// either side fails.
bool IsEquiv(absl::string_view answer, absl::string_view ground_truth) {
  std::optional<std::string> a = StripString(answer);
  std::optional<std::string> b = StripString(ground_truth);
  if (!a.has_value() || !b.has_value()) return answer == ground_truth;
  return *a == *b;
}

class MathReward final : public RewardFunction {
 public:
  const std::string& name() const override { return name_; }

  absl::StatusOr<RewardOutput> Score(const RewardInput& input) const override {
    std::optional<std::string> answer = LastBoxedContent(input.response);
    const bool correct = answer.has_value() && IsEquiv(*answer, input.ground_truth);
    RewardOutput output;
    output.score = correct ? 1 : 0;
    output.extra["acc"] = output.score;
    return output;
  }

 private:
  const std::string name_ = "math";
};

}  // namespace

std::unique_ptr<RewardFunction> MakeMathReward() { return std::make_unique<MathReward>(); }

}  // namespace rollout::rewards
