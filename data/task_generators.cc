#include "data/task_generators.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <random>
#include <set>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "common/uniform_random.h"

namespace rollout::data {
namespace {

// Uniform integers from std::mt19937_64, whose output the standard fixes.
class Random {
 public:
  explicit Random(uint64_t seed) : generator_(seed) {}

  // Uniform in [low, high] (low <= high).
  int64_t Between(int64_t low, int64_t high) {
    return low + static_cast<int64_t>(UniformBelow(generator_, static_cast<uint64_t>(high - low) + 1));
  }

 private:
  std::mt19937_64 generator_;
};

// A drawn problem and what makes it the same problem as another (its key).
struct Candidate {
  std::string key;
  Problem problem;
};
// One draw; nullopt when the draw is rejected (a countdown target out of range).
using DrawProblem = std::function<std::optional<Candidate>(Random&)>;

// Draws until train_size + validation_size distinct problems, the first train_size
// for training: no problem is in both sets or twice in one.
absl::StatusOr<TaskSplits> CollectDistinct(absl::string_view task, const SplitOptions& split,
                                           const DrawProblem& draw) {
  constexpr int64_t kMaxProblems = 100'000'000;
  if (split.train_size < 1 || split.validation_size < 0 ||
      split.train_size + split.validation_size > kMaxProblems) {
    return absl::InvalidArgumentError(absl::StrCat(
        task, ": need 1 or more training and 0 or more validation problems, at most ", kMaxProblems,
        " in all; got ", split.train_size, " and ", split.validation_size));
  }
  const int64_t wanted = split.train_size + split.validation_size;
  // Enough draws to collect nearly every problem of a small space, never endless.
  const int64_t max_draws = 100 * wanted + 10'000;
  Random random(static_cast<uint64_t>(split.seed));
  std::set<std::string> seen;
  TaskSplits splits;
  for (int64_t draws = 0; static_cast<int64_t>(seen.size()) < wanted; ++draws) {
    if (draws == max_draws) {
      return absl::InvalidArgumentError(absl::StrCat(
          task, ": found only ", seen.size(), " distinct problems in ", max_draws,
          " draws, fewer than the ", wanted, " asked for; ask for fewer or widen the task"));
    }
    std::optional<Candidate> candidate = draw(random);
    if (!candidate.has_value() || !seen.insert(candidate->key).second) continue;
    std::vector<Problem>& set = static_cast<int64_t>(splits.train.size()) < split.train_size
                                    ? splits.train
                                    : splits.validation;
    set.push_back(std::move(candidate->problem));
  }
  return splits;
}

// ---- arithmetic ----

int64_t PowerOfTen(int64_t exponent) {
  int64_t value = 1;
  for (int64_t i = 0; i < exponent; ++i) value *= 10;
  return value;
}

int64_t DrawOperand(Random& random, const ArithmeticOptions& task) {
  const int64_t digits = random.Between(task.min_digits, task.max_digits);
  const int64_t low = digits == 1 ? 0 : PowerOfTen(digits - 1);
  return random.Between(low, PowerOfTen(digits) - 1);
}

Candidate DrawArithmetic(Random& random, const ArithmeticOptions& task) {
  int64_t a = DrawOperand(random, task);
  int64_t b = DrawOperand(random, task);
  const char op =
      task.operators[random.Between(0, static_cast<int64_t>(task.operators.size()) - 1)];
  if (op == '-' && a < b) std::swap(a, b);
  const int64_t answer = op == '+' ? a + b : op == '-' ? a - b : a * b;
  // Off by 1..3 either way (upwards where going down would cross zero): plausible,
  // never the answer itself.
  const int64_t offset = random.Between(1, 3);
  const bool lower = random.Between(0, 1) == 0 && answer >= offset;
  const int64_t wrong = lower ? answer - offset : answer + offset;
  Candidate candidate;
  Problem& problem = candidate.problem;
  problem.solution = absl::StrCat(a, std::string(1, op), b);
  problem.prompt = absl::StrCat(problem.solution, "=");
  problem.ground_truth_json = absl::StrCat("\"", answer, "\"");
  problem.data_source = "arithmetic";
  problem.response = absl::StrCat(answer);
  problem.wrong_response = absl::StrCat(wrong);
  candidate.key = problem.prompt;
  return candidate;
}

absl::Status ValidateArithmetic(const ArithmeticOptions& task) {
  if (task.min_digits < 1 || task.max_digits > 9 || task.min_digits > task.max_digits) {
    return absl::InvalidArgumentError(
        absl::StrCat("arithmetic: digits must satisfy 1 <= min_digits <= max_digits <= 9; got ",
                     task.min_digits, " and ", task.max_digits));
  }
  if (task.operators.empty() || task.operators.find_first_not_of("+-*") != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "arithmetic: operators must be one or more of + - *; got '", task.operators, "'"));
  }
  return absl::OkStatus();
}

// ---- countdown ----

// An expression over some of the numbers with its value and how it was worked out.
struct Expression {
  int64_t value = 0;
  std::string text;                // "(44 + 19) * 2"
  int precedence = 3;              // 1: + -, 2: * /, 3: a number
  std::vector<std::string> steps;  // "44 + 19 = 63", one per operator
};

Expression Combine(const Expression& left, char op, const Expression& right) {
  const int precedence = op == '+' || op == '-' ? 1 : 2;
  // Left-associative: a right operand of equal precedence keeps its parentheses
  // under - and /, where "a - (b - c)" is not "a - b - c".
  const bool wrap_left = left.precedence < precedence;
  const bool wrap_right =
      right.precedence < precedence || (right.precedence == precedence && (op == '-' || op == '/'));
  Expression combined;
  combined.value = op == '+'   ? left.value + right.value
                   : op == '-' ? left.value - right.value
                   : op == '*' ? left.value * right.value
                               : left.value / right.value;
  combined.text =
      absl::StrCat(wrap_left ? "(" + left.text + ")" : left.text, " ", std::string(1, op), " ",
                   wrap_right ? "(" + right.text + ")" : right.text);
  combined.precedence = precedence;
  combined.steps = left.steps;
  combined.steps.insert(combined.steps.end(), right.steps.begin(), right.steps.end());
  combined.steps.push_back(
      absl::StrCat(left.value, " ", std::string(1, op), " ", right.value, " = ", combined.value));
  return combined;
}

// Joins random pairs with random operators until one expression uses every number
// once. Only operations with a positive integer result are chosen: the larger
// operand goes first, - needs a difference, / an exact quotient.
Expression RandomExpression(Random& random, const std::vector<int64_t>& numbers) {
  std::vector<Expression> parts;
  for (int64_t number : numbers) parts.push_back(Expression{number, absl::StrCat(number), 3, {}});
  while (parts.size() > 1) {
    const auto count = static_cast<int64_t>(parts.size());
    const int64_t i = random.Between(0, count - 1);
    int64_t j = random.Between(0, count - 2);
    if (j >= i) ++j;
    Expression left = parts[i];
    Expression right = parts[j];
    if (left.value < right.value) std::swap(left, right);
    std::string operators = "+*";
    if (left.value > right.value) operators += '-';
    if (left.value % right.value == 0) operators += '/';
    const char op = operators[random.Between(0, static_cast<int64_t>(operators.size()) - 1)];
    parts.erase(parts.begin() + std::max(i, j));
    parts.erase(parts.begin() + std::min(i, j));
    parts.push_back(Combine(left, op, right));
  }
  return parts.front();
}

// The rest of the turn after the prompt's "<think>": the working, then the answer.
std::string CountdownResponse(const Expression& expression) {
  return absl::StrCat(absl::StrJoin(expression.steps, ", "), ".</think>\n<answer>", expression.text,
                      "</answer>");
}

// Another expression over the numbers that misses the target; when random tries keep
// hitting it, the solution plus 1 (which also uses a number not given).
Expression WrongExpression(Random& random, const std::vector<int64_t>& numbers,
                           const Expression& solution) {
  constexpr int kTries = 64;
  for (int i = 0; i < kTries; ++i) {
    Expression other = RandomExpression(random, numbers);
    if (other.value != solution.value) return other;
  }
  return Combine(solution, '+', Expression{1, "1", 3, {}});
}

std::string CountdownPrompt(const std::vector<int64_t>& numbers, int64_t target) {
  // TinyZero's prompt for base models (examples/data_preprocess/countdown.py).
  return absl::StrCat(
      "A conversation between User and Assistant. The user asks a question, and the "
      "Assistant solves it. The assistant first thinks about the reasoning process in the "
      "mind and then provides the user with the answer.\nUser: Using the numbers [",
      absl::StrJoin(numbers, ", "), "], create an equation that equals ", target,
      ". You can use basic arithmetic operations (+, -, *, /) and each number can only be "
      "used once. Show your work in <think> </think> tags. And return the final answer in "
      "<answer> </answer> tags, for example <answer> (1 + 2) / 3 </answer>.\nAssistant: Let "
      "me solve this step by step.\n<think>");
}

std::optional<Candidate> DrawCountdown(Random& random, const CountdownOptions& task) {
  std::vector<int64_t> numbers(random.Between(task.min_numbers, task.max_numbers));
  for (int64_t& number : numbers) number = random.Between(1, task.max_number);
  const Expression solution = RandomExpression(random, numbers);
  if (solution.value > task.max_target) return std::nullopt;
  Candidate candidate;
  Problem& problem = candidate.problem;
  problem.prompt = CountdownPrompt(numbers, solution.value);
  problem.ground_truth_json = absl::StrCat("{\"target\":", solution.value, ",\"numbers\":[",
                                           absl::StrJoin(numbers, ","), "]}");
  problem.data_source = "countdown";
  problem.solution = solution.text;
  problem.response = CountdownResponse(solution);
  problem.wrong_response = CountdownResponse(WrongExpression(random, numbers, solution));
  std::vector<int64_t> sorted = numbers;
  std::sort(sorted.begin(), sorted.end());
  candidate.key = absl::StrCat(absl::StrJoin(sorted, ","), "->", solution.value);
  return candidate;
}

absl::Status ValidateCountdown(const CountdownOptions& task) {
  if (task.min_numbers < 2 || task.max_numbers > 6 || task.min_numbers > task.max_numbers) {
    return absl::InvalidArgumentError(absl::StrCat(
        "countdown: numbers per problem must satisfy 2 <= min_numbers <= max_numbers <= 6; "
        "got ",
        task.min_numbers, " and ", task.max_numbers));
  }
  // 1000^6 still fits in int64, so no product can overflow.
  if (task.max_number < 1 || task.max_number > 1000 || task.max_target < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("countdown: need 1 <= max_number <= 1000 and max_target >= 1; got ",
                     task.max_number, " and ", task.max_target));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<TaskSplits> GenerateArithmetic(const ArithmeticOptions& task,
                                              const SplitOptions& split) {
  if (absl::Status valid = ValidateArithmetic(task); !valid.ok()) return valid;
  return CollectDistinct("arithmetic", split, [&](Random& random) -> std::optional<Candidate> {
    return DrawArithmetic(random, task);
  });
}

absl::StatusOr<TaskSplits> GenerateCountdown(const CountdownOptions& task,
                                             const SplitOptions& split) {
  if (absl::Status valid = ValidateCountdown(task); !valid.ok()) return valid;
  return CollectDistinct("countdown", split,
                         [&](Random& random) { return DrawCountdown(random, task); });
}

}  // namespace rollout::data
