#include "rewards/arithmetic.h"

#include <cstdint>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace rollout::rewards {
namespace {

constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

// Sign moved to the numerator, reduced; nullopt where a part would be INT64_MIN,
// which could not be negated later. `denominator` must not be 0.
std::optional<Rational> Normalized(int64_t numerator, int64_t denominator) {
  if (numerator == kInt64Min || denominator == kInt64Min) return std::nullopt;
  if (denominator < 0) {
    numerator = -numerator;
    denominator = -denominator;
  }
  const int64_t divisor = std::gcd(numerator, denominator);  // > 0: denominator != 0
  return Rational{numerator / divisor, denominator / divisor};
}

// The four operations; nullopt on int64 overflow. Both sides are normalized, and
// common factors are cancelled first so that only results that truly do not fit fail.
std::optional<Rational> Add(const Rational& a, const Rational& b) {
  const int64_t common = std::gcd(a.denominator, b.denominator);
  const int64_t a_scale = b.denominator / common;
  const int64_t b_scale = a.denominator / common;
  int64_t left, right, numerator, denominator;
  if (__builtin_mul_overflow(a.numerator, a_scale, &left) ||
      __builtin_mul_overflow(b.numerator, b_scale, &right) ||
      __builtin_add_overflow(left, right, &numerator) ||
      __builtin_mul_overflow(a.denominator, a_scale, &denominator)) {
    return std::nullopt;
  }
  return Normalized(numerator, denominator);
}

Rational Negated(const Rational& a) { return Rational{-a.numerator, a.denominator}; }

std::optional<Rational> Multiply(const Rational& a, const Rational& b) {
  const int64_t g1 = std::gcd(a.numerator, b.denominator);  // >= 1: denominators > 0
  const int64_t g2 = std::gcd(b.numerator, a.denominator);
  int64_t numerator, denominator;
  if (__builtin_mul_overflow(a.numerator / g1, b.numerator / g2, &numerator) ||
      __builtin_mul_overflow(a.denominator / g2, b.denominator / g1, &denominator)) {
    return std::nullopt;
  }
  return Normalized(numerator, denominator);
}

// `b` must not be zero.
std::optional<Rational> Divide(const Rational& a, const Rational& b) {
  const bool negative = b.numerator < 0;
  const Rational reciprocal{negative ? -b.denominator : b.denominator,
                            negative ? -b.numerator : b.numerator};
  return Multiply(a, reciprocal);
}

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

// One parse of one expression. Each Parse* method consumes what its grammar rule
// (arithmetic.h) matches, starting at pos_, and returns its value.
class Parser {
 public:
  explicit Parser(absl::string_view text) : text_(text) {}

  absl::StatusOr<ArithmeticResult> Run() {
    SkipSpace();
    if (AtEnd()) return absl::InvalidArgumentError("empty expression");
    ASSIGN_OR_RETURN(Rational value, ParseExpression());
    SkipSpace();
    if (!AtEnd()) return Unexpected();
    return ArithmeticResult{value, std::move(literals_)};
  }

 private:
  absl::StatusOr<Rational> ParseExpression() {
    ASSIGN_OR_RETURN(Rational value, ParseTerm());
    for (SkipSpace(); !AtEnd() && (Peek() == '+' || Peek() == '-'); SkipSpace()) {
      const char op = Peek();
      const int column = Column();
      ++pos_;
      ASSIGN_OR_RETURN(Rational right, ParseTerm());
      ASSIGN_OR_RETURN(value, Checked(Add(value, op == '+' ? right : Negated(right)), op,
                                      column));
    }
    return value;
  }

  absl::StatusOr<Rational> ParseTerm() {
    ASSIGN_OR_RETURN(Rational value, ParseUnary());
    for (SkipSpace(); !AtEnd() && (Peek() == '*' || Peek() == '/'); SkipSpace()) {
      const char op = Peek();
      const int column = Column();
      ++pos_;
      ASSIGN_OR_RETURN(Rational right, ParseUnary());
      if (op == '*') {
        ASSIGN_OR_RETURN(value, Checked(Multiply(value, right), op, column));
      } else if (right.numerator == 0) {
        return absl::InvalidArgumentError(absl::StrCat("division by zero at column ", column));
      } else {
        ASSIGN_OR_RETURN(value, Checked(Divide(value, right), op, column));
      }
    }
    return value;
  }

  absl::StatusOr<Rational> ParseUnary() {
    SkipSpace();
    if (AtEnd() || (Peek() != '+' && Peek() != '-')) return ParsePrimary();
    const char sign = Peek();
    RETURN_IF_ERROR(Nest());
    ++pos_;
    ASSIGN_OR_RETURN(Rational operand, ParseUnary());
    --nesting_;
    return sign == '-' ? Negated(operand) : operand;
  }

  absl::StatusOr<Rational> ParsePrimary() {
    SkipSpace();
    if (AtEnd()) return Unexpected();
    if (absl::ascii_isdigit(Peek())) return ParseInteger();
    if (Peek() != '(') return Unexpected();
    const int open_column = Column();
    RETURN_IF_ERROR(Nest());
    ++pos_;
    ASSIGN_OR_RETURN(Rational value, ParseExpression());
    SkipSpace();
    if (AtEnd() || Peek() != ')') {
      return absl::InvalidArgumentError(absl::StrCat(
          Unexpected().message(), "; expected ')' to close '(' at column ", open_column));
    }
    ++pos_;
    --nesting_;
    return value;
  }

  absl::StatusOr<Rational> ParseInteger() {
    const int column = Column();
    const size_t start = pos_;
    while (!AtEnd() && absl::ascii_isdigit(Peek())) ++pos_;
    const absl::string_view digits = text_.substr(start, pos_ - start);
    if (digits.size() > 1 && digits[0] == '0') {
      return absl::InvalidArgumentError(
          absl::StrCat("integer '", digits, "' at column ", column, " has a leading zero"));
    }
    int64_t value = 0;
    for (char digit : digits) {
      if (__builtin_mul_overflow(value, int64_t{10}, &value) ||
          __builtin_add_overflow(value, int64_t{digit - '0'}, &value)) {
        return absl::OutOfRangeError(
            absl::StrCat("integer '", digits, "' at column ", column, " does not fit in int64"));
      }
    }
    literals_.push_back(value);
    return Rational{value, 1};
  }

  // Counts one more level of parentheses or unary signs; the caller undoes it.
  absl::Status Nest() {
    if (++nesting_ <= kMaxArithmeticNesting) return absl::OkStatus();
    return absl::OutOfRangeError(absl::StrCat("nesting deeper than ", kMaxArithmeticNesting,
                                              " at column ", Column()));
  }

  static absl::StatusOr<Rational> Checked(std::optional<Rational> result, char op, int column) {
    if (result.has_value()) return *result;
    return absl::OutOfRangeError(absl::StrCat("overflow: the result of '", std::string(1, op),
                                              "' at column ", column, " does not fit in int64"));
  }

  absl::Status Unexpected() const {
    if (AtEnd()) {
      return absl::InvalidArgumentError(
          absl::StrCat("unexpected end of expression at column ", Column()));
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "unexpected '", absl::CHexEscape(text_.substr(pos_, 1)), "' at column ", Column()));
  }

  void SkipSpace() {
    while (!AtEnd() && IsSpace(Peek())) ++pos_;
  }
  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return text_[pos_]; }
  int Column() const { return static_cast<int>(pos_) + 1; }

  const absl::string_view text_;
  size_t pos_ = 0;
  int nesting_ = 0;
  std::vector<int64_t> literals_;
};

}  // namespace

std::string Rational::ToString() const {
  if (denominator == 1) return absl::StrCat(numerator);
  return absl::StrCat(numerator, "/", denominator);
}

absl::StatusOr<ArithmeticResult> EvaluateArithmetic(absl::string_view expression) {
  return Parser(expression).Run();
}

bool IsWithinTolerance(const Rational& value, int64_t target, int64_t inverse_tolerance) {
  // |n/d - t| < 1/k  <=>  |n - t*d| * k < d. 128 bits hold n - t*d; once it is below d
  // (else the distance is at least 1, never below 1/k) the product with k fits too.
  __int128 distance = static_cast<__int128>(value.numerator) -
                      static_cast<__int128>(target) * value.denominator;
  if (distance < 0) distance = -distance;
  if (distance >= value.denominator) return false;
  return distance * inverse_tolerance < value.denominator;
}

}  // namespace rollout::rewards
