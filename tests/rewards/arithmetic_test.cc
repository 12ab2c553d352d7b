#include "rewards/arithmetic.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace rollout::rewards {
namespace {

// The value of an expression that must evaluate, as "n" or "n/d".
std::string ValueOf(absl::string_view expression) {
  absl::StatusOr<ArithmeticResult> result = EvaluateArithmetic(expression);
  if (!result.ok()) return absl::StrCat("error: ", result.status().message());
  return result->value.ToString();
}

// The error message of an expression that must fail with `code`.
std::string ErrorOf(absl::string_view expression,
                    absl::StatusCode code = absl::StatusCode::kInvalidArgument) {
  absl::StatusOr<ArithmeticResult> result = EvaluateArithmetic(expression);
  if (result.ok()) return absl::StrCat("evaluated to ", result->value.ToString());
  EXPECT_EQ(result.status().code(), code) << expression << ": " << result.status();
  return std::string(result.status().message());
}

TEST(Arithmetic, MultiplicationAndDivisionBindTighterThanAdditionAndSubtraction) {
  EXPECT_EQ(ValueOf("2+3*4"), "14");
  EXPECT_EQ(ValueOf("2*3+4"), "10");
  EXPECT_EQ(ValueOf("10-6/2"), "7");
  EXPECT_EQ(ValueOf("1+2*3-4/2"), "5");
}

TEST(Arithmetic, OperatorsOfEqualPrecedenceAssociateToTheLeft) {
  EXPECT_EQ(ValueOf("8-2-3"), "3");
  EXPECT_EQ(ValueOf("8/2/2"), "2");
  EXPECT_EQ(ValueOf("8/2*2"), "8");
  EXPECT_EQ(ValueOf("8-2+3"), "9");
}

TEST(Arithmetic, ParenthesesOverridePrecedence) {
  EXPECT_EQ(ValueOf("(2+3)*4"), "20");
  EXPECT_EQ(ValueOf("8-(2-3)"), "9");
  EXPECT_EQ(ValueOf("8/(2/2)"), "8");
  EXPECT_EQ(ValueOf("((((7))))"), "7");
}

TEST(Arithmetic, WhitespaceBetweenTokensIsIgnored) {
  EXPECT_EQ(ValueOf("  ( 25 - 5 )\t*\n4 / 2  "), "40");
}

TEST(Arithmetic, DivisionIsExactAndMayGiveAFraction) {
  EXPECT_EQ(ValueOf("7/2"), "7/2");
  EXPECT_EQ(ValueOf("1/3+1/6"), "1/2");
  EXPECT_EQ(ValueOf("1/3*3"), "1");  // no 0.9999...
  EXPECT_EQ(ValueOf("2/-4"), "-1/2");
}

TEST(Arithmetic, UnarySignsApplyToTheFollowingOperand) {
  EXPECT_EQ(ValueOf("-(1+2)"), "-3");
  EXPECT_EQ(ValueOf("3--2"), "5");
  EXPECT_EQ(ValueOf("+4*-2"), "-8");
  EXPECT_EQ(ValueOf("-2*-3"), "6");
}

TEST(Arithmetic, DivisionByZeroIsAnErrorNamingTheColumn) {
  EXPECT_EQ(ErrorOf("1/0"), "division by zero at column 2");
  EXPECT_EQ(ErrorOf("4 / (2-2)"), "division by zero at column 3");
  EXPECT_EQ(ErrorOf("1/(1/2-1/2)"), "division by zero at column 2");
}

TEST(Arithmetic, UnbalancedParenthesesAreErrors) {
  EXPECT_EQ(ErrorOf("(1+2"),
            "unexpected end of expression at column 5; expected ')' to close '(' at column 1");
  EXPECT_EQ(ErrorOf("(1+2)*(3-4))"), "unexpected ')' at column 12");
  EXPECT_EQ(ErrorOf("(1+2 3)"),
            "unexpected '3' at column 6; expected ')' to close '(' at column 1");
  EXPECT_EQ(ErrorOf("()"), "unexpected ')' at column 2");
}

TEST(Arithmetic, MissingOperandsAreErrors) {
  EXPECT_EQ(ErrorOf("1+"), "unexpected end of expression at column 3");
  EXPECT_EQ(ErrorOf("1 + 2 *"), "unexpected end of expression at column 8");
  EXPECT_EQ(ErrorOf("*2"), "unexpected '*' at column 1");
  EXPECT_EQ(ErrorOf("2**3"), "unexpected '*' at column 3");
  EXPECT_EQ(ErrorOf("7//2"), "unexpected '/' at column 3");
}

TEST(Arithmetic, AnythingButDigitsOperatorsParenthesesAndSpacesIsAnError) {
  EXPECT_EQ(ErrorOf("2 + x"), "unexpected 'x' at column 5");
  EXPECT_EQ(ErrorOf("1.5*2"), "unexpected '.' at column 2");
  EXPECT_EQ(ErrorOf("2(3)"), "unexpected '(' at column 2");
  EXPECT_EQ(ErrorOf("10 % 3"), "unexpected '%' at column 4");
  EXPECT_EQ(ErrorOf("__import__('os')"), "unexpected '_' at column 1");
  EXPECT_EQ(ErrorOf("1\x01"), "unexpected '\\x01' at column 2");
}

TEST(Arithmetic, EmptyOrBlankInputIsAnError) {
  EXPECT_EQ(ErrorOf(""), "empty expression");
  EXPECT_EQ(ErrorOf(" \t\n"), "empty expression");
}

TEST(Arithmetic, LeadingZerosAreRejectedAsPythonDoes) {
  EXPECT_EQ(ErrorOf("07+1"), "integer '07' at column 1 has a leading zero");
  EXPECT_EQ(ValueOf("0+10"), "10");
}

TEST(Arithmetic, LiteralOutsideInt64IsOutOfRange) {
  EXPECT_EQ(ValueOf("9223372036854775807"), "9223372036854775807");
  EXPECT_EQ(ErrorOf("1+9223372036854775808", absl::StatusCode::kOutOfRange),
            "integer '9223372036854775808' at column 3 does not fit in int64");
}

TEST(Arithmetic, IntermediateOverflowIsOutOfRangeNamingTheOperator) {
  EXPECT_EQ(ErrorOf("9223372036854775807+1", absl::StatusCode::kOutOfRange),
            "overflow: the result of '+' at column 20 does not fit in int64");
  EXPECT_EQ(ErrorOf("3037000500*3037000500", absl::StatusCode::kOutOfRange),
            "overflow: the result of '*' at column 11 does not fit in int64");
  EXPECT_EQ(ErrorOf("1/9223372036854775807-1/9223372036854775806",
                    absl::StatusCode::kOutOfRange),
            "overflow: the result of '-' at column 22 does not fit in int64");
  // INT64_MIN itself is refused: its negation would not fit.
  EXPECT_EQ(ErrorOf("-9223372036854775807-1", absl::StatusCode::kOutOfRange),
            "overflow: the result of '-' at column 21 does not fit in int64");
}

TEST(Arithmetic, CommonFactorsCancelBeforeTheyOverflow) {
  EXPECT_EQ(ValueOf("4611686018427387904/2*2/4611686018427387904"), "1");
  EXPECT_EQ(ValueOf("3/4611686018427387904*4611686018427387904"), "3");
  EXPECT_EQ(ValueOf("1/4611686018427387904+1/4611686018427387904"), "1/2305843009213693952");
}

TEST(Arithmetic, NestingUpToTheCapIsAccepted) {
  const int depth = kMaxArithmeticNesting;
  EXPECT_EQ(ValueOf(std::string(depth, '(') + "1" + std::string(depth, ')')), "1");
  EXPECT_EQ(ValueOf(std::string(depth, '-') + "1"), "1");  // an even number of signs
}

TEST(Arithmetic, NestingBeyondTheCapIsOutOfRange) {
  const int depth = kMaxArithmeticNesting + 1;
  EXPECT_EQ(ErrorOf(std::string(depth, '(') + "1" + std::string(depth, ')'),
                    absl::StatusCode::kOutOfRange),
            absl::StrCat("nesting deeper than 256 at column ", depth));
  EXPECT_EQ(ErrorOf(std::string(depth, '-') + "1", absl::StatusCode::kOutOfRange),
            absl::StrCat("nesting deeper than 256 at column ", depth));
  // Far past the cap the parser stops early instead of exhausting the stack.
  EXPECT_EQ(ErrorOf(std::string(1000000, '('), absl::StatusCode::kOutOfRange),
            "nesting deeper than 256 at column 257");
}

TEST(Arithmetic, LongFlatExpressionsAreNotLimitedByNesting) {
  std::string expression = "1";
  for (int i = 0; i < 10000; ++i) expression += "+1";
  EXPECT_EQ(ValueOf(expression), "10001");
}

TEST(Arithmetic, ReportsLiteralsInOrderOfAppearance) {
  absl::StatusOr<ArithmeticResult> result = EvaluateArithmetic("3 * (10 - 3) / -(25)");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->literals, (std::vector<int64_t>{3, 10, 3, 25}));
  EXPECT_EQ(result->value, (Rational{-21, 25}));
}

TEST(Arithmetic, ToleranceIsDecidedExactly) {
  // 1e-5 is 1/100000: a distance of exactly 1e-5 is not within, one just below is.
  EXPECT_FALSE(IsWithinTolerance(Rational{100001, 100000}, 1, 100000));
  EXPECT_TRUE(IsWithinTolerance(Rational{1000001, 1000000}, 1, 100000));
  EXPECT_TRUE(IsWithinTolerance(Rational{200001, 200000}, 1, 100000));
  EXPECT_TRUE(IsWithinTolerance(Rational{-199999, 200000}, -1, 100000));
  EXPECT_FALSE(IsWithinTolerance(Rational{3, 1}, 4, 100000));
  // Large values whose difference needs more than 64 bits.
  EXPECT_FALSE(IsWithinTolerance(Rational{INT64_MAX, 1}, -INT64_MAX, 100000));
  EXPECT_TRUE(IsWithinTolerance(Rational{INT64_MAX, 1 << 30}, int64_t{1} << 33, 100000));
}

}  // namespace
}  // namespace rollout::rewards
