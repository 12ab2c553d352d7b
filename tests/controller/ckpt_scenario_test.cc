// Reading checkpoint scenario files (controller/ckpt_scenario.h) and the log parsing
// the checks use. Running scenarios end to end is covered by one ctest per file in
// tests/ckpt_scenarios/.
#include "controller/ckpt_scenario.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "controller/ckpt_scenario_checks.h"
#include "tests/support/temp_dir.h"

namespace rollout::controller {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Writes `text` as dir/s.yaml next to a recipe r.yaml and loads it.
absl::StatusOr<Scenario> LoadText(const testing::TempDir& dir, const std::string& text) {
  dir.Write("r.yaml", "trainer: {}\n");
  return LoadScenario(dir.Write("s.yaml", text));
}

TEST(CkptScenario, ReadsRunsExpectationsAndDefaults) {
  testing::TempDir dir("ckpt_scenario");
  const absl::StatusOr<Scenario> scenario = LoadText(dir,
                                                     "recipe: r.yaml\n"
                                                     "overrides:\n"
                                                     "  - a.b={scenario_dir}/m\n"
                                                     "runs:\n"
                                                     "  - overrides: [x=1]\n"
                                                     "  - crash_at: ckpt.save.after_manifest\n"
                                                     "    expect: {tracker: 2}\n"
                                                     "  - kill_after_s: 1.5\n"
                                                     "  - expect_exit: fail\n"
                                                     "expect:\n"
                                                     "  resumed_from_step: 2\n"
                                                     "  files_absent: [global_step_4]\n"
                                                     "  same_params_as_uninterrupted: true\n");
  ASSERT_TRUE(scenario.ok()) << scenario.status();
  EXPECT_THAT(scenario->recipe, HasSubstr("/r.yaml"));
  EXPECT_EQ(scenario->recipe[0], '/');
  ASSERT_EQ(scenario->overrides.size(), 1u);
  EXPECT_NE(scenario->overrides[0].find("a.b=/"), std::string::npos);
  EXPECT_EQ(scenario->overrides[0].find("{scenario_dir}"), std::string::npos);
  ASSERT_EQ(scenario->runs.size(), 4u);
  EXPECT_THAT(scenario->runs[0].overrides, ElementsAre("x=1"));
  EXPECT_EQ(scenario->runs[0].expect_exit, RunOutcome::kOk);
  EXPECT_TRUE(scenario->runs[0].expect.empty());
  EXPECT_EQ(scenario->runs[1].expect_exit, RunOutcome::kCrash);
  EXPECT_EQ(scenario->runs[1].expect.tracker, 2);
  EXPECT_THAT(scenario->runs[1].expect.where, HasSubstr("s.yaml:7"));
  EXPECT_EQ(scenario->runs[2].expect_exit, RunOutcome::kKilled);
  EXPECT_EQ(scenario->runs[2].kill_after_s, 1.5);
  EXPECT_EQ(scenario->runs[3].expect_exit, RunOutcome::kFail);
  EXPECT_EQ(scenario->expect.resumed_from_step, 2);
  EXPECT_THAT(scenario->expect.files_absent, ElementsAre("global_step_4"));
  EXPECT_TRUE(scenario->expect.same_params_as_uninterrupted);
}

TEST(CkptScenario, ReadsBitFlipsAndTheExpectedErrorText) {
  testing::TempDir dir("ckpt_scenario");
  const absl::StatusOr<Scenario> scenario =
      LoadText(dir,
               "recipe: r.yaml\n"
               "runs:\n"
               "  - corrupt: {file: global_step_2/actor/model.safetensors, offset: 100}\n"
               "    expect_exit: fail\n"
               "    expect_error_contains: \"checksum mismatch\"\n"
               "  - corrupt:\n"
               "      - {file: a.json, offset: 0, bit: 7}\n"
               "      - {file: b.json, offset: 12, bit: 2}\n");
  ASSERT_TRUE(scenario.ok()) << scenario.status();
  ASSERT_EQ(scenario->runs.size(), 2u);
  const ScenarioRun& first = scenario->runs[0];
  ASSERT_EQ(first.corrupt.size(), 1u);
  EXPECT_EQ(first.corrupt[0].file, "global_step_2/actor/model.safetensors");
  EXPECT_EQ(first.corrupt[0].offset, 100);
  EXPECT_EQ(first.corrupt[0].bit, 0);
  EXPECT_EQ(first.expect_exit, RunOutcome::kFail);
  EXPECT_EQ(first.expect_error_contains, "checksum mismatch");
  const ScenarioRun& second = scenario->runs[1];
  ASSERT_EQ(second.corrupt.size(), 2u);
  EXPECT_EQ(second.corrupt[0].file, "a.json");
  EXPECT_EQ(second.corrupt[0].bit, 7);
  EXPECT_EQ(second.corrupt[1].offset, 12);
  EXPECT_EQ(second.corrupt[1].bit, 2);
  EXPECT_EQ(second.expect_error_contains, "");
}

TEST(CkptScenario, ErrorsNameTheFileTheLineAndTheKey) {
  testing::TempDir dir("ckpt_scenario");
  const struct {
    std::string text;
    std::string message;
  } cases[] = {
      {"recipe: r.yaml\nruns:\n  - crash_after: x\n", "s.yaml:3: unknown key 'crash_after' in runs[0]"},
      {"recipe: r.yaml\n", "s.yaml:1: missing key 'runs'"},
      {"recipe: r.yaml\nruns: []\n", "s.yaml:2: runs must be a non-empty list"},
      {"recipe: r.yaml\nruns:\n  - crash_at: ckpt.nowhere\n", "s.yaml:3: unknown crash point 'ckpt.nowhere'"},
      {"recipe: r.yaml\nruns:\n  - crash_at: ckpt.save.after_manifest\n    kill_after_s: 2\n",
       "s.yaml:4: runs[0]: crash_at and kill_after_s exclude each other"},
      {"recipe: r.yaml\nruns:\n  - expect_exit: maybe\n", "s.yaml:3: runs[0].expect_exit must be ok"},
      {"recipe: r.yaml\nruns: [{}]\nexpect:\n  tracker: two\n", "s.yaml:4: expect.tracker must be an integer"},
      {"recipe: r.yaml\nruns: [{}]\nexpect: {files_exist: a}\n", "s.yaml:3: expect.files_exist must be a list"},
      {"recipe: r.yaml\nruns: [{}]\nexpect: {same_params_as_uninterrupted: false}\n",
       "same_params_as_uninterrupted must be true"},
      {"recipe: [r.yaml\n", "s.yaml:"},
      {"recipe: r.yaml\nruns:\n  - corrupt: {offset: 1}\n", "s.yaml:3: runs[0].corrupt: missing key 'file'"},
      {"recipe: r.yaml\nruns:\n  - corrupt: {file: a}\n", "s.yaml:3: runs[0].corrupt: missing key 'offset'"},
      {"recipe: r.yaml\nruns:\n  - corrupt:\n      - {file: a, offset: 1}\n      - {file: a, offset: -1}\n",
       "s.yaml:5: runs[0].corrupt[1].offset must be >= 0"},
      {"recipe: r.yaml\nruns:\n  - corrupt: {file: a, offset: 1, bit: 8}\n",
       "s.yaml:3: runs[0].corrupt.bit must be 0 to 7"},
      {"recipe: r.yaml\nruns:\n  - corrupt: {file: a, offset: x}\n",
       "s.yaml:3: runs[0].corrupt.offset must be an integer"},
      {"recipe: r.yaml\nruns:\n  - corrupt: {file: a, offset: 1, byte: 2}\n",
       "s.yaml:3: unknown key 'byte' in runs[0].corrupt"},
      {"recipe: r.yaml\nruns:\n  - expect_error_contains: ''\n", "s.yaml:3: runs[0].expect_error_contains is empty"},
  };
  for (const auto& c : cases) {
    const absl::StatusOr<Scenario> scenario = LoadText(dir, c.text);
    ASSERT_FALSE(scenario.ok()) << c.text;
    EXPECT_EQ(scenario.status().code(), absl::StatusCode::kInvalidArgument) << c.text;
    EXPECT_THAT(std::string(scenario.status().message()), HasSubstr(c.message)) << c.text;
  }
}

TEST(CkptScenario, AMissingFileIsNotFound) {
  EXPECT_EQ(LoadScenario("/nonexistent/s.yaml").status().code(), absl::StatusCode::kNotFound);
}

TEST(CkptScenarioChecks, OutputContainsFindsTheLineOrShowsTheLastOne) {
  testing::TempDir dir("ckpt_scenario_checks");
  const std::string log = dir.Write("run.log", "starting\nrollout train: checksum mismatch for x\nbye\n\n");
  const CheckResult found = CheckOutputContains("checksum mismatch", log, "run 2 output");
  EXPECT_TRUE(found.passed);
  EXPECT_EQ(found.name, "run 2 output");
  EXPECT_EQ(found.observed, "'rollout train: checksum mismatch for x'");
  const CheckResult missing = CheckOutputContains("DataLoss", log, "run 2 output");
  EXPECT_FALSE(missing.passed);
  EXPECT_EQ(missing.observed, "no such line; the last is 'bye'");
  EXPECT_FALSE(CheckOutputContains("x", dir.Path("none.log"), "run 1 output").passed);
}

TEST(CkptScenarioChecks, ResumedFromStepReadsTheLastResumeLineAndOnlyTheLastPathComponent) {
  EXPECT_EQ(ResumedFromStep("resuming from ckpt/global_step_3\nstep 4\n"), 3);
  EXPECT_EQ(ResumedFromStep("resuming from runs/global_step_7/ckpt/global_step_2: ok"), 2);
  EXPECT_EQ(ResumedFromStep("resuming from a/global_step_2\nresuming from a/global_step_4\n"), 4);
  EXPECT_EQ(ResumedFromStep("no checkpoint in ckpt, starting fresh\n"), std::nullopt);
  EXPECT_EQ(ResumedFromStep("resuming from runs/global_step_7/ckpt\n"), std::nullopt);
}

}  // namespace
}  // namespace rollout::controller
