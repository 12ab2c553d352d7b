// Word splitting of the GPT-2, Qwen2 and Llama 3 pre-tokenizer regexes. Expected
// words come from Python's `regex` module running the patterns themselves.
#include "models/pretokenizer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace rollout::models {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> Split(absl::string_view text, SplitPattern pattern) {
  std::vector<std::string> words;
  for (absl::string_view word : SplitWords(text, pattern)) words.emplace_back(word);
  return words;
}

TEST(SplitWords, ContractionIsItsOwnWord) {
  for (SplitPattern pattern : {SplitPattern::kGpt2, SplitPattern::kQwen2, SplitPattern::kLlama3}) {
    EXPECT_THAT(Split("don't", pattern), ElementsAre("don", "'t"));
  }
}

TEST(SplitWords, Qwen2ContractionsIgnoreCaseButGpt2DoesNot) {
  EXPECT_THAT(Split("I'M HERE", SplitPattern::kQwen2), ElementsAre("I", "'M", " HERE"));
  EXPECT_THAT(Split("I'M HERE", SplitPattern::kGpt2), ElementsAre("I", "'", "M", " HERE"));
}

TEST(SplitWords, SpaceRunsLeaveOneSpaceToTheNextWord) {
  for (SplitPattern pattern : {SplitPattern::kGpt2, SplitPattern::kQwen2, SplitPattern::kLlama3}) {
    EXPECT_THAT(Split("  multiple   spaces\n\n", pattern),
                ElementsAre(" ", " multiple", "  ", " spaces", "\n\n"));
  }
}

TEST(SplitWords, Qwen2SplitsDigitsOneByOne) {
  EXPECT_THAT(Split("12345", SplitPattern::kQwen2), ElementsAre("1", "2", "3", "4", "5"));
}

TEST(SplitWords, Llama3GroupsDigitsByThree) {
  EXPECT_THAT(Split("12345", SplitPattern::kLlama3), ElementsAre("123", "45"));
  EXPECT_THAT(Split("x1234567y", SplitPattern::kLlama3), ElementsAre("x", "123", "456", "7", "y"));
}

TEST(SplitWords, Gpt2KeepsDigitRunsWhole) {
  EXPECT_THAT(Split("x1234567y", SplitPattern::kGpt2), ElementsAre("x", "1234567", "y"));
}

TEST(SplitWords, UnicodeLettersStayInOneWord) {
  EXPECT_THAT(Split("héllo wörld 你好！ Привет", SplitPattern::kQwen2),
              ElementsAre("héllo", " wörld", " 你好", "！", " Привет"));
}

TEST(SplitWords, Qwen2AttachesLineBreaksToPunctuation) {
  EXPECT_THAT(Split("end.\n\n\nNext", SplitPattern::kQwen2), ElementsAre("end", ".\n\n\n", "Next"));
  EXPECT_THAT(Split("end.\n\n\nNext", SplitPattern::kGpt2),
              ElementsAre("end", ".", "\n\n", "\n", "Next"));
  EXPECT_THAT(Split("a\r\nb", SplitPattern::kQwen2), ElementsAre("a", "\r\n", "b"));
}

TEST(SplitWords, Qwen2LetsOnePrecedingNonLetterJoinAWord) {
  EXPECT_THAT(Split("tabs\tand", SplitPattern::kQwen2), ElementsAre("tabs", "\tand"));
  EXPECT_THAT(Split("(1 + 2) = 3!!\n", SplitPattern::kQwen2),
              ElementsAre("(", "1", " +", " ", "2", ")", " =", " ", "3", "!!\n"));
}

TEST(SplitWords, WordsConcatenateBackToTheInputEvenWithInvalidBytes) {
  const std::string text = "a\xff\xfe b\xe4\xb8 \xf0\x9f\x9a\x80x";
  for (SplitPattern pattern : {SplitPattern::kGpt2, SplitPattern::kQwen2, SplitPattern::kLlama3}) {
    std::string joined;
    for (const std::string& word : Split(text, pattern)) joined += word;
    EXPECT_EQ(joined, text);
  }
  EXPECT_TRUE(SplitWords("", SplitPattern::kQwen2).empty());
}

TEST(RecognizeSplitPattern, KnowsTheThreePatternsAndNamesAnUnknownOne) {
  for (SplitPattern pattern : {SplitPattern::kGpt2, SplitPattern::kQwen2, SplitPattern::kLlama3}) {
    absl::StatusOr<SplitPattern> recognized = RecognizeSplitPattern(SplitPatternRegex(pattern));
    ASSERT_TRUE(recognized.ok());
    EXPECT_EQ(*recognized, pattern);
  }
  absl::StatusOr<SplitPattern> unknown = RecognizeSplitPattern(R"(\p{N}{1,2}|\s+)");
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(unknown.status().message(), HasSubstr(R"('\p{N}{1,2}|\s+')"));
}

TEST(PreTokenize, PrefixSpaceGoesBeforeEachPieceThatLacksOne) {
  PreTokenizerSpec spec;
  spec.add_prefix_space = true;
  spec.byte_level_regex = true;
  EXPECT_THAT(PreTokenize("Hello world", spec), ElementsAre(" Hello", " world"));
  EXPECT_THAT(PreTokenize(" Hello", spec), ElementsAre(" Hello"));
}

TEST(PreTokenize, SplitStepsApplyInOrderThenTheByteLevelRegex) {
  PreTokenizerSpec spec;
  spec.splits = {SplitPattern::kLlama3};
  EXPECT_THAT(PreTokenize("ab 1234", spec), ElementsAre("ab", " ", "123", "4"));
  spec.byte_level_regex = true;
  EXPECT_THAT(PreTokenize("ab 1234", spec), ElementsAre("ab", " ", "123", "4"));
  spec.splits.clear();
  spec.byte_level_regex = false;
  EXPECT_THAT(PreTokenize("ab 1234", spec), ElementsAre("ab 1234"));
}

}  // namespace
}  // namespace rollout::models
