// `rollout ckpt ls|verify` through the binary, and ROLLOUT_CRASH_AT.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/file_util.h"
#include "controller/checkpoint_store.h"
#include "tests/controller/checkpoint_test_util.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace rollout::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

CommandResult RunRollout(std::vector<std::string> args) {
  args.insert(args.begin(), ROLLOUT_BINARY_PATH);
  return RunCommand(args);
}

class CkptCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    controller::CheckpointStore store(DefaultFileSystem(), root_.path());
    ASSERT_TRUE(SaveCheckpoint(store, 10).ok());
    ASSERT_TRUE(SaveCheckpoint(store, 20, {"actor"}).ok());
  }
  TempDir root_{"ckpt_cli"};
};

TEST_F(CkptCliTest, LsShowsEveryCheckpointAndMarksTheTrackersOne) {
  WriteRoleFiles(root_.Path("global_step_30"), 30, {"critic"});  // no manifest
  const CommandResult result = RunRollout({"ckpt", "ls", root_.path()});
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_THAT(result.output, HasSubstr("STEP  STATE"));
  EXPECT_THAT(result.output,
              ::testing::ContainsRegex("  +10  complete +[0-9.]+ KiB  actor,critic\n"));
  EXPECT_THAT(result.output, ::testing::ContainsRegex("\\* +20  complete +[0-9.]+ KiB  actor\n"));
  EXPECT_THAT(result.output, HasSubstr("30  partial"));
  EXPECT_THAT(result.output, HasSubstr("no MANIFEST.json"));
  EXPECT_THAT(result.output, HasSubstr("* latest_checkpointed_iteration.txt names global_step_20"));
  EXPECT_EQ(RunRollout({"ckpt", "ls", root_.Path("missing")}).exit_code, 1);
}

TEST_F(CkptCliTest, VerifyPassesIntactCheckpointsAndNamesTheDamagedFile) {
  CommandResult result = RunRollout({"ckpt", "verify", root_.path()});
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_THAT(result.output, HasSubstr("2 checkpoint(s) in " + root_.path() + " verified"));
  EXPECT_EQ(RunRollout({"ckpt", "verify", root_.Path("global_step_10")}).exit_code, 0);

  const std::string weights = root_.Path("global_step_10/critic/model.safetensors");
  std::string contents = ReadFile(weights).value();
  contents[100] ^= 0x02;
  ASSERT_TRUE(WriteFileDurably(weights, contents).ok());
  for (const std::string& path : {root_.path(), root_.Path("global_step_10")}) {
    result = RunRollout({"ckpt", "verify", path});
    EXPECT_EQ(result.exit_code, 1) << result.output;
    EXPECT_THAT(result.output,
                HasSubstr("rollout ckpt verify: checkpoint global_step_10: checksum mismatch for "
                          "critic/model.safetensors\n"));
  }
  EXPECT_EQ(RunRollout({"ckpt", "verify", root_.Path("global_step_20")}).exit_code, 0);
}

TEST_F(CkptCliTest, VerifyChecksTheTracker) {
  ASSERT_TRUE(WriteFileDurably(root_.Path("latest_checkpointed_iteration.txt"), "50").ok());
  const CommandResult result = RunRollout({"ckpt", "verify", root_.path()});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.output, HasSubstr("latest_checkpointed_iteration.txt names global_step_50, "
                                       "which does not exist"));
}

TEST_F(CkptCliTest, VerifyOfADirectoryWithoutCheckpointsFails) {
  TempDir empty("ckpt_cli_empty");
  const CommandResult result = RunRollout({"ckpt", "verify", empty.path()});
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_THAT(result.output, HasSubstr("rollout ckpt verify: no checkpoint in " + empty.path() +
                                       " (no global_step_<N> directory)"));
  EXPECT_THAT(result.output, Not(HasSubstr("verified")));
}

TEST_F(CkptCliTest, BadUsageIsExitTwo) {
  EXPECT_EQ(RunRollout({"ckpt"}).exit_code, 2);
  EXPECT_EQ(RunRollout({"ckpt", "export", root_.path()}).exit_code, 2);  // no --hf
  EXPECT_EQ(RunRollout({"ckpt", "ls", root_.path(), "--hf", root_.Path("out")}).exit_code, 2);
  EXPECT_EQ(RunRollout({"ckpt", "verify", root_.path(), "--adapter"}).exit_code, 2);
  const CommandResult help = RunRollout({"ckpt", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_THAT(help.output, HasSubstr("usage: rollout ckpt ls DIR"));
  EXPECT_THAT(help.output, HasSubstr("rollout ckpt export PATH --hf OUT [--adapter]"));
}

// What export checks before it reads anything (the export itself: tests/e2e).
TEST_F(CkptCliTest, ExportRefusesWhatIsNotAnIntactCheckpointInOneLine) {
  const std::string out = root_.Path("out");
  const auto export_error = [&](const std::string& path) {
    const CommandResult result = RunRollout({"ckpt", "export", path, "--hf", out});
    EXPECT_EQ(result.exit_code, 1) << result.output;
    EXPECT_FALSE(PathExists(out));
    return result.output;
  };
  EXPECT_EQ(export_error(root_.Path("missing")),
            "rollout ckpt export: " + root_.Path("missing") + " does not exist\n");
  const TempDir plain("ckpt_cli_plain");
  EXPECT_THAT(export_error(plain.path()), HasSubstr(plain.path() + " is not a checkpoint: expected a "
                                                                    "global_step_N directory"));
  WriteRoleFiles(root_.Path("global_step_30"), 30, {"actor"});  // no manifest
  EXPECT_THAT(export_error(root_.Path("global_step_30")), HasSubstr("checkpoint global_step_30 is partial"));
  const TempDir critic_only("ckpt_cli_critic");
  controller::CheckpointStore store(DefaultFileSystem(), critic_only.path());
  ASSERT_TRUE(SaveCheckpoint(store, 3, {"critic"}).ok());
  EXPECT_THAT(export_error(critic_only.path()),
              HasSubstr("checkpoint global_step_3 has no actor directory (it holds: critic)"));
  // Intact, but the fake worker files have no HF config: the exporter's error.
  EXPECT_THAT(export_error(root_.Path("global_step_20/actor")),
              HasSubstr("global_step_20/actor/huggingface/config.json is missing"));

  const std::string weights = root_.Path("global_step_20/actor/model.safetensors");
  std::string contents = ReadFile(weights).value();
  contents[100] ^= 0x01;
  ASSERT_TRUE(WriteFileDurably(weights, contents).ok());
  EXPECT_EQ(export_error(root_.path()),  // the tracker names global_step_20
            "rollout ckpt export: checkpoint global_step_20: checksum mismatch for "
            "actor/model.safetensors\n");
}

TEST(RolloutCrashAt, AnUnknownPointIsRefusedAtStartUp) {
  const CommandResult result = RunCommand(
      {"/usr/bin/env", "ROLLOUT_CRASH_AT=ckpt.nowhere", ROLLOUT_BINARY_PATH, "ckpt", "--help"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.output,
              HasSubstr("rollout: ROLLOUT_CRASH_AT: unknown crash point 'ckpt.nowhere'"));
  const CommandResult known = RunCommand({"/usr/bin/env", "ROLLOUT_CRASH_AT=ckpt.save.after_rename",
                                          ROLLOUT_BINARY_PATH, "ckpt", "--help"});
  EXPECT_EQ(known.exit_code, 0) << known.output;
  EXPECT_THAT(known.output, Not(HasSubstr("ROLLOUT_CRASH_AT")));
}

}  // namespace
}  // namespace rollout::testing
