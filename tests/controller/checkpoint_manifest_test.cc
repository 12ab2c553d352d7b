#include "controller/checkpoint_manifest.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/file_util.h"
#include "tests/controller/checkpoint_test_util.h"
#include "tests/support/temp_dir.h"

namespace rollout::controller {
namespace {

using ::rollout::testing::TempDir;
using ::testing::ElementsAre;

class ManifestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::WriteRoleFiles(dir_.path(), 40, {"actor", "critic"});
    dir_.Write("trainer_state.json", testing::TrainerStateJson(40));
    manifest_ = BuildManifest(fs_, dir_.path()).value();
  }

  absl::Status Verify(VerifyLevel level = VerifyLevel::kChecksums) {
    return VerifyManifest(fs_, dir_.path(), manifest_, level);
  }

  FileSystem& fs_ = *DefaultFileSystem();
  TempDir dir_{"manifest"};
  Manifest manifest_;
};

TEST_F(ManifestTest, ListsEveryFileSortedWithRoles) {
  std::vector<std::string> paths;
  for (const ManifestFile& file : manifest_.files) paths.push_back(file.path);
  EXPECT_THAT(paths, ElementsAre("actor/extra/rng.bin", "actor/model.safetensors", "actor/optim.pt",
                                 "critic/extra/rng.bin", "critic/model.safetensors",
                                 "critic/optim.pt", "trainer_state.json"));
  EXPECT_THAT(manifest_.Roles(), ElementsAre("actor", "critic"));
  uint64_t on_disk = 0;
  const std::vector<ManifestFile> scanned = ScanCheckpointFiles(fs_, dir_.path(), false).value();
  for (const ManifestFile& file : scanned) {
    on_disk += file.size;
  }
  EXPECT_EQ(manifest_.TotalBytes(), on_disk);
  EXPECT_GT(on_disk, 0u);
  EXPECT_TRUE(Verify().ok());
}

TEST_F(ManifestTest, JsonRoundTrip) {
  Manifest rewritten = manifest_.WithoutRoles({"critic"});
  rewritten.deleted_after_load = true;
  const Manifest parsed = ParseManifest(ManifestToJson(rewritten)).value();
  EXPECT_TRUE(parsed.deleted_after_load);
  EXPECT_THAT(parsed.removed_roles, ElementsAre("critic"));
  EXPECT_THAT(parsed.Roles(), ElementsAre("actor"));
  ASSERT_EQ(parsed.files.size(), rewritten.files.size());
  for (size_t i = 0; i < parsed.files.size(); ++i) {
    EXPECT_EQ(parsed.files[i].path, rewritten.files[i].path);
    EXPECT_EQ(parsed.files[i].size, rewritten.files[i].size);
    EXPECT_EQ(parsed.files[i].crc32c, rewritten.files[i].crc32c);
  }
}

TEST_F(ManifestTest, ABitFlipInAnyFileIsCaughtByItsChecksum) {
  for (const ManifestFile& file : manifest_.files) {
    const std::string path = JoinPath(dir_.path(), file.path);
    const std::string original = ReadFile(path).value();
    std::string flipped = original;
    flipped[flipped.size() / 2] ^= 0x01;
    ASSERT_TRUE(WriteFileDurably(path, flipped).ok());
    EXPECT_TRUE(Verify(VerifyLevel::kSizes).ok()) << file.path;  // same size
    const absl::Status status = Verify();
    EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << file.path;
    EXPECT_EQ(status.message(), "checksum mismatch for " + file.path);
    ASSERT_TRUE(WriteFileDurably(path, original).ok());
  }
  EXPECT_TRUE(Verify().ok());
}

TEST_F(ManifestTest, MissingTruncatedAndUnexpectedFiles) {
  ASSERT_TRUE(WriteFileDurably(dir_.Path("actor/optim.pt"), "short").ok());
  EXPECT_EQ(Verify(VerifyLevel::kSizes).message(),
            "actor/optim.pt is 5 bytes, the manifest says 14");
  ASSERT_TRUE(RemoveTree(dir_.Path("actor/optim.pt")).ok());
  EXPECT_EQ(Verify().message(), "missing file actor/optim.pt");
  EXPECT_EQ(Verify().code(), absl::StatusCode::kDataLoss);
  manifest_ = BuildManifest(fs_, dir_.path()).value();
  dir_.Write("critic/extra/new.bin", "?");
  EXPECT_EQ(Verify(VerifyLevel::kSizes).message(), "unexpected file critic/extra/new.bin");
}

TEST_F(ManifestTest, TheManifestAndItsTemporaryFileAreNotListed) {
  dir_.Write("MANIFEST.json", ManifestToJson(manifest_));
  dir_.Write("MANIFEST.json.tmp", "half");
  EXPECT_EQ(BuildManifest(fs_, dir_.path()).value().files.size(), manifest_.files.size());
  EXPECT_TRUE(Verify().ok());
  EXPECT_EQ(ReadManifest(fs_, dir_.path()).value().files.size(), manifest_.files.size());
}

TEST_F(ManifestTest, LeftoversOfARemovedRoleAreNotDamage) {
  manifest_ = manifest_.WithoutRoles({"critic"});
  EXPECT_TRUE(Verify().ok());  // critic/ still on disk: an interrupted removal
  manifest_.removed_roles.clear();
  EXPECT_EQ(Verify().message(), "unexpected file critic/extra/rng.bin");
}

TEST(ManifestParse, MalformedManifestsAreDataLoss) {
  for (const char* json :
       {"", "[]", "{}", "{\"format_version\": 1}",
        "{\"format_version\": 1, \"deleted_after_load\": false, \"removed_roles\": [], \"files\": "
        "[{\"path\": \"../etc/passwd\", \"size\": 1, \"crc32c\": \"00000000\"}]}",
        "{\"format_version\": 1, \"deleted_after_load\": false, \"removed_roles\": [], \"files\": "
        "[{\"path\": \"/abs\", \"size\": 1, \"crc32c\": \"00000000\"}]}",
        "{\"format_version\": 1, \"deleted_after_load\": false, \"removed_roles\": [], \"files\": "
        "[{\"path\": \"a\", \"size\": -1, \"crc32c\": \"00000000\"}]}",
        "{\"format_version\": 1, \"deleted_after_load\": false, \"removed_roles\": [], \"files\": "
        "[{\"path\": \"a\", \"size\": 1, \"crc32c\": \"0x000000\"}]}"}) {
    EXPECT_EQ(ParseManifest(json).status().code(), absl::StatusCode::kDataLoss) << json;
  }
  EXPECT_EQ(ParseManifest("{\"format_version\": 2}").status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(ReadManifest(*DefaultFileSystem(), "/nonexistent/dir").status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace rollout::controller
