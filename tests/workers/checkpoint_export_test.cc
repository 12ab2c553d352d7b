// ExportActorCheckpoint (workers/checkpoint_export.h) on hand-made actor directories:
// what it refuses, and that a failed export leaves nothing behind. Exports of real
// training checkpoints, compared by logits: tests/e2e/checkpoint_export_test.cc.
#include "workers/checkpoint_export.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/file_util.h"
#include "tests/support/temp_dir.h"

namespace rollout::workers {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kFixture[] = "tests/data/tiny-qwen2";

// A LoRA actor directory whose adapter names `base` as its base model.
void WriteLoraActor(const testing::TempDir& dir, const std::string& base) {
  dir.Write("actor/huggingface/config.json", ReadFile(JoinPath(kFixture, "config.json")).value());
  dir.Write("actor/lora_adapter/adapter_config.json",
            "{\"base_model_name_or_path\": \"" + base +
                "\", \"r\": 4, \"lora_alpha\": 8, \"target_modules\": \"all-linear\"}");
}

TEST(CheckpointExport, AMissingBaseModelIsNamedAndLeavesNoOutput) {
  testing::TempDir dir("ckpt_export_no_base");
  WriteLoraActor(dir, "/nonexistent/base");
  const absl::Status status =
      ExportActorCheckpoint(dir.Path("actor"), dir.Path("out"), ExportOptions());
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound) << status;
  EXPECT_THAT(status.message(), HasSubstr("base model /nonexistent/base (adapter_config.json's "
                                          "base_model_name_or_path)"));
  EXPECT_THAT(ListDirectory(dir.path()).value(), ElementsAre("actor"));  // no out, no scratch
}

TEST(CheckpointExport, AMalformedAdapterIsNamedAndLeavesNoOutput) {
  testing::TempDir dir("ckpt_export_bad_adapter");
  WriteLoraActor(dir, kFixture);
  dir.Write("actor/lora_adapter/adapter_model.safetensors", "not safetensors");
  const absl::Status status =
      ExportActorCheckpoint(dir.Path("actor"), dir.Path("out"), ExportOptions());
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("adapter_model.safetensors"));
  EXPECT_THAT(ListDirectory(dir.path()).value(), ElementsAre("actor"));
}

TEST(CheckpointExport, ACheckpointWithoutItsHfConfigSaysWhy) {
  testing::TempDir dir("ckpt_export_no_config");
  dir.Write("actor/model.safetensors", "weights");
  const absl::Status status =
      ExportActorCheckpoint(dir.Path("actor"), dir.Path("out"), ExportOptions());
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("actor/huggingface/config.json is missing: the "
                                          "checkpoint was saved without 'model'"));
  ExportOptions adapter;
  adapter.adapter_only = true;
  EXPECT_EQ(ExportActorCheckpoint(dir.Path("actor"), dir.Path("out"), adapter).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(ListDirectory(dir.path()).value(), ElementsAre("actor"));
}

TEST(CheckpointExport, AnEmptyOutDirectoryIsFilledAndAFileIsRefused) {
  testing::TempDir dir("ckpt_export_out");
  WriteLoraActor(dir, kFixture);
  dir.Write("actor/lora_adapter/adapter_model.safetensors", "adapter bytes");
  ASSERT_TRUE(MakeDirectories(dir.Path("empty")).ok());
  ExportOptions adapter;
  adapter.adapter_only = true;
  ASSERT_TRUE(ExportActorCheckpoint(dir.Path("actor"), dir.Path("empty"), adapter).ok());
  EXPECT_EQ(ReadFile(dir.Path("empty/adapter_model.safetensors")).value(), "adapter bytes");
  dir.Write("file", "x");
  EXPECT_THAT(ExportActorCheckpoint(dir.Path("actor"), dir.Path("file"), adapter).message(),
              HasSubstr("exists and is not a directory"));
}

}  // namespace
}  // namespace rollout::workers
