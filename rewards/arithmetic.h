// Exact evaluation of small integer arithmetic expressions, such as the equations a
// countdown answer holds ("(25 - 5) * 4 / 2"). A recursive-descent parser over
// rationals; nothing is ever handed to an interpreter.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace rollout::rewards {

// numerator / denominator in lowest terms, denominator > 0. Neither part is ever
// INT64_MIN, so negating either is always safe.
struct Rational {
  int64_t numerator = 0;
  int64_t denominator = 1;

  std::string ToString() const;  // "7" or "-5/2"
};

inline bool operator==(const Rational& a, const Rational& b) {
  return a.numerator == b.numerator && a.denominator == b.denominator;
}

// How deeply parentheses and unary signs may nest ("((1))" and "--1" nest 2).
constexpr int kMaxArithmeticNesting = 256;

struct ArithmeticResult {
  Rational value;
  // The integer literals in order of appearance: "3 * (10 - 3)" gives {3, 10, 3}.
  std::vector<int64_t> literals;
};

// Accepts:   expression := term (('+' | '-') term)*
//            term       := unary (('*' | '/') unary)*
//            unary      := ('+' | '-') unary | primary
//            primary    := integer | '(' expression ')'
// with ASCII whitespace (space, \t, \n, \v, \f, \r) between tokens. An integer is
// decimal digits without a leading zero ("0" is fine, "07" is not, as in Python 3),
// at most INT64_MAX. '/' is true division. Operators are left-associative, so
// "8-2-3" is 3 and "8/2/2" is 2. Nothing else is accepted: no '.', '**', '//', '%',
// letters or implicit multiplication ("2(3)").
//
// InvalidArgument for malformed input and division by zero, OutOfRange for a literal
// or an intermediate result outside int64 and for nesting deeper than
// kMaxArithmeticNesting. Messages give the 1-based byte column:
// "unexpected ')' at column 7", "division by zero at column 3".
absl::StatusOr<ArithmeticResult> EvaluateArithmetic(absl::string_view expression);

// Whether |value - target| < 1 / inverse_tolerance, decided exactly (no rounding);
// TinyZero's 1e-5 is an inverse_tolerance of 100000. inverse_tolerance must be > 0.
bool IsWithinTolerance(const Rational& value, int64_t target, int64_t inverse_tolerance);

}  // namespace rollout::rewards
