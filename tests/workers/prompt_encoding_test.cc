// verl's data.truncation for prompts longer than data.max_prompt_length.
#include "workers/prompt_encoding.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace rollout::workers {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(TruncatePrompt, ShortPromptsAreKept) {
  EXPECT_THAT(TruncatePrompt({1, 2, 3}, 3, "error", "p").value(), ElementsAre(1, 2, 3));
}

TEST(TruncatePrompt, ModesKeepTheirEnds) {
  const std::vector<int32_t> ids = {1, 2, 3, 4, 5};
  EXPECT_THAT(TruncatePrompt(ids, 3, "left", "p").value(), ElementsAre(3, 4, 5));
  EXPECT_THAT(TruncatePrompt(ids, 3, "right", "p").value(), ElementsAre(1, 2, 3));
  EXPECT_THAT(TruncatePrompt(ids, 3, "middle", "p").value(), ElementsAre(1, 4, 5));
  EXPECT_THAT(TruncatePrompt(ids, 4, "middle", "p").value(), ElementsAre(1, 2, 4, 5));
}

TEST(TruncatePrompt, ErrorModeNamesThePromptAndTheLimit) {
  const absl::Status status = TruncatePrompt({1, 2, 3, 4}, 2, "error", "prompt 7").status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("prompt 7: the prompt has 4 tokens, more than data.max_prompt_length (2)"));
  EXPECT_THAT(TruncatePrompt({1, 2, 3}, 2, "sideways", "p").status().message(),
              HasSubstr("unknown data.truncation 'sideways'"));
}

}  // namespace
}  // namespace rollout::workers
