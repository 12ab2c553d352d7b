// The built-in reward functions, with verl's / TinyZero's rules. Each is also usable
// directly through its factory with explicit options.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "rewards/reward_function.h"

namespace rollout::rewards {

// verl's gsm8k: the answer is the last "#### <number>" (strict; searched in the last
// 300 characters, commas and '$' stripped) or the last number in the response
// (flexible). score when it equals the ground truth, format_score when an answer was
// found but is wrong, 0 when none was found. extra: "acc" (1 or 0).
struct Gsm8kOptions {
  std::string method = "strict";  // strict | flexible
  double format_score = 0.0;
  double score = 1.0;
};
std::unique_ptr<RewardFunction> MakeGsm8kReward(const Gsm8kOptions& options = {});

// TinyZero's countdown. ground_truth is JSON {"target": int, "numbers": [int, ...]}.
// The equation is the content of the last <answer>...</answer> (after "Assistant:" or
// "<|im_start|>assistant" when present); it must use every number exactly once, only
// digits, + - * / ( ) and spaces, and evaluate (exact arithmetic, a real parser, never
// an eval; division by zero is a wrong answer) to the target within 1e-5. score for a
// correct equation, format_score for a well-formed wrong one, 0 without an answer.
// extra: "acc".
struct CountdownOptions {
  double format_score = 0.1;
  double score = 1.0;
};
std::unique_ptr<RewardFunction> MakeCountdownReward(const CountdownOptions& options = {});

// verl's math (Hendrycks MATH): the last \boxed{...} (or \fbox{...}) with balanced
// braces, normalised (spaces, \left/\right, \! , dfrac/tfrac -> frac, trailing ".",
// units like "\text{ cm}", "^\circ", "\$", a leading "x =") and compared to the
// normalised ground truth. 1 or 0. extra: "acc".
std::unique_ptr<RewardFunction> MakeMathReward();

// verl's math_dapo (the reward of verl's DAPO recipe, DAPO-Math-17k and AIME): the last
// "Answer: ..." line (case-insensitive) in the response's last 300 characters, after
// Minerva's answer normalisation (the text after the last '=', units and TeX spacing
// dropped, $...$, \text{}, \boxed{} unwrapped, "\frac12" -> "\frac{1}{2}", "1,000" ->
// "1000"), equals the normalised ground truth: 1, else -1 (no answer found: -1).
// extra: "acc" (1 or 0).
std::unique_ptr<RewardFunction> MakeMathDapoReward();

// The trimmed response equals the trimmed ground truth: 1 or 0.
std::unique_ptr<RewardFunction> MakeExactMatchReward();

// `score` when the whole response matches `pattern` (RE2 syntax, full match), else 0;
// a format reward such as "<think>.*</think>\s*<answer>.*</answer>". InvalidArgument
// naming the pattern when it does not compile.
struct FormatOptions {
  std::string pattern = R"((?s)<think>.*</think>\s*<answer>.*</answer>)";
  double score = 1.0;
};
absl::StatusOr<std::unique_ptr<RewardFunction>> MakeFormatReward(const FormatOptions& options);

}  // namespace rollout::rewards
