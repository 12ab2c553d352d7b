// Small generated tasks for training end to end: problems with known answers, split
// into train and validation sets that share no problem.
//
//  * arithmetic — "12+35=" with ground truth "47" (data_source "arithmetic"; score
//    with reward.name=exact_match). Operands have min_digits..max_digits digits; a
//    subtraction puts the larger operand first, so answers are never negative.
//  * countdown — TinyZero's task: reach a target with 3 or 4 numbers in 1..99, each
//    used once, with + - * /; ground truth {"target": T, "numbers": [...]}
//    (data_source "countdown"). Every target is built from a random expression over
//    the numbers whose intermediate results are all positive integers, so each
//    problem has at least that solution.
//
// Generation is deterministic: the same options and seed give the same problems with
// every compiler (std::mt19937_64 with uniform draws written here, since
// std::uniform_int_distribution's algorithm is implementation-defined). Plain
// functions: safe to call from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace rollout::data {

struct Problem {
  std::string prompt;  // raw text, used without a chat template
  // The ground truth as JSON text: arithmetic a JSON string ("\"47\""), countdown an
  // object ({"target":98,"numbers":[44,19,35]}), written into rows as that value.
  std::string ground_truth_json;
  std::string data_source;  // "arithmetic" or "countdown"
  // An expression that gives the answer: "12+35"; countdown "(44 + 19) + 35".
  std::string solution;
  std::string response;        // a correct response: SFT target and DPO "chosen"
  std::string wrong_response;  // a plausible wrong one: DPO "rejected"
};

struct TaskSplits {
  std::vector<Problem> train;
  std::vector<Problem> validation;
};

struct SplitOptions {
  int64_t train_size = 5000;      // >= 1
  int64_t validation_size = 500;  // >= 0
  int64_t seed = 1;
};

struct ArithmeticOptions {
  int64_t min_digits = 2;        // 1..9, operands of 1 digit include 0
  int64_t max_digits = 2;        // min_digits..9
  std::string operators = "+-";  // any of '+', '-', '*'
};

struct CountdownOptions {
  int64_t min_numbers = 3;   // 2..6
  int64_t max_numbers = 4;   // min_numbers..6
  int64_t max_number = 99;   // numbers are 1..max_number, at most 1000
  int64_t max_target = 999;  // targets are 1..max_target
};

// InvalidArgument for options out of range, or when the task cannot make
// train_size + validation_size distinct problems (the message says how many it made).
absl::StatusOr<TaskSplits> GenerateArithmetic(const ArithmeticOptions& task,
                                              const SplitOptions& split);
absl::StatusOr<TaskSplits> GenerateCountdown(const CountdownOptions& task,
                                             const SplitOptions& split);

}  // namespace rollout::data
