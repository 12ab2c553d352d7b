// How `rollout plan` and `rollout train` tell the verl keys a recipe sets that were
// ignored: each with its reason, or, for train, one line counting them when they are many.
#include "controller/cli_recipe.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace rollout::controller {
namespace {

using ::testing::ElementsAre;

ResolvedRun RunIgnoring(size_t keys) {
  ResolvedRun run;
  for (size_t i = 0; i < keys; ++i) {
    run.recipe.ignored_verl_keys.push_back("verl's 'k" + std::to_string(i) + "' at x.yaml:" +
                                           std::to_string(i + 1) + " is ignored: why");
  }
  return run;
}

std::vector<std::string> Lines(const ResolvedRun& run, IgnoredKeyNotes notes) {
  std::ostringstream out;
  PrintIgnoredVerlKeys(run, "rollout train", notes, out);
  std::vector<std::string> lines;
  std::istringstream in(out.str());
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(PrintIgnoredVerlKeys, FewKeysAreNotedEachWithTheirReason) {
  EXPECT_THAT(Lines(RunIgnoring(2), IgnoredKeyNotes::kCountWhenMany),
              ElementsAre("rollout train: note: verl's 'k0' at x.yaml:1 is ignored: why",
                          "rollout train: note: verl's 'k1' at x.yaml:2 is ignored: why"));
  EXPECT_TRUE(Lines(RunIgnoring(0), IgnoredKeyNotes::kCountWhenMany).empty());
}

TEST(PrintIgnoredVerlKeys, ManyKeysAreCountedUnlessEachIsAskedFor) {
  const ResolvedRun run = RunIgnoring(kIgnoredKeysNotedEach + 1);
  EXPECT_THAT(Lines(run, IgnoredKeyNotes::kCountWhenMany),
              ElementsAre("rollout train: note: 9 verl keys of the recipe configure only verl's machinery "
                          "and are ignored; `rollout plan` with the same arguments lists each with its reason"));
  EXPECT_EQ(Lines(run, IgnoredKeyNotes::kEach).size(), kIgnoredKeysNotedEach + 1);
}

}  // namespace
}  // namespace rollout::controller
