// Cutting added tokens out of raw text, with tokenizers' lstrip/rstrip/single_word.
#include "models/added_tokens.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace rollout::models {
namespace {

using ::testing::ElementsAre;

AddedToken Token(int32_t id, std::string content) {
  AddedToken token;
  token.id = id;
  token.content = std::move(content);
  return token;
}

// "text|id" per segment (id -1 for plain text), for compact expectations.
std::vector<std::string> Segments(const AddedTokenMatcher& matcher, absl::string_view text) {
  std::vector<std::string> out;
  for (const TextSegment& segment : matcher.Split(text)) {
    out.push_back(std::string(segment.text) + "|" + std::to_string(segment.token_id));
  }
  return out;
}

TEST(AddedTokenMatcher, LongestTokenAtTheLeftmostPositionWins) {
  AddedTokenMatcher matcher({Token(1, "<a>"), Token(2, "<a><b>"), Token(3, "b>")});
  EXPECT_THAT(Segments(matcher, "x<a><b>y<a>b>"),
              ElementsAre("x|-1", "<a><b>|2", "y|-1", "<a>|1", "b>|3"));
  EXPECT_THAT(Segments(matcher, "plain"), ElementsAre("plain|-1"));
  EXPECT_TRUE(matcher.Split("").empty());
}

TEST(AddedTokenMatcher, LstripAndRstripTakeTheSurroundingWhitespace) {
  AddedToken mask = Token(7, "<mask>");
  mask.lstrip = true;
  mask.rstrip = true;
  AddedTokenMatcher matcher({mask});
  EXPECT_THAT(Segments(matcher, "a  <mask>\t b"), ElementsAre("a|-1", "  <mask>\t |7", "b|-1"));
}

TEST(AddedTokenMatcher, SingleWordTokensDoNotMatchInsideWords) {
  AddedToken word = Token(9, "cat");
  word.single_word = true;
  AddedTokenMatcher matcher({word});
  EXPECT_THAT(Segments(matcher, "cat concat cats, cat"),
              ElementsAre("cat|9", " concat cats, |-1", "cat|9"));
}

}  // namespace
}  // namespace rollout::models
