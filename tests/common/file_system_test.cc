#include "common/file_system.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/file_util.h"
#include "tests/support/temp_dir.h"

namespace rollout {
namespace {

using ::rollout::testing::TempDir;
using ::testing::ElementsAre;

TEST(PosixFileSystem, StatTellsFilesDirectoriesAndAbsence) {
  TempDir dir;
  FileSystem& fs = *DefaultFileSystem();
  dir.Write("f", "12345");
  const FileInfo file = fs.Stat(dir.Path("f")).value();
  EXPECT_TRUE(file.exists);
  EXPECT_FALSE(file.is_directory);
  EXPECT_EQ(file.size, 5u);
  EXPECT_TRUE(fs.Stat(dir.path()).value().is_directory);
  EXPECT_FALSE(fs.Stat(dir.Path("missing")).value().exists);
}

TEST(PosixFileSystem, ReadsInChunksThatAddUpToTheFile) {
  TempDir dir;
  FileSystem& fs = *DefaultFileSystem();
  std::string contents(FileSystem::kReadChunkBytes * 2 + 17, 'a');
  contents[FileSystem::kReadChunkBytes] = 'b';
  ASSERT_TRUE(fs.WriteFileDurably(dir.Path("big"), contents).ok());
  std::string read;
  int chunks = 0;
  ASSERT_TRUE(fs.ReadFileInChunks(dir.Path("big"), [&](absl::string_view chunk) {
                  EXPECT_LE(chunk.size(), FileSystem::kReadChunkBytes);
                  read.append(chunk.data(), chunk.size());
                  ++chunks;
                }).ok());
  EXPECT_EQ(read, contents);
  EXPECT_GE(chunks, 3);
  EXPECT_EQ(fs.ReadFileInChunks(dir.Path("missing"), [](absl::string_view) {}).code(),
            absl::StatusCode::kNotFound);
}

TEST(PosixFileSystem, WriteRenameRemove) {
  TempDir dir;
  FileSystem& fs = *DefaultFileSystem();
  ASSERT_TRUE(fs.MakeDirectories(dir.Path("a/b")).ok());
  ASSERT_TRUE(fs.WriteFileDurably(dir.Path("a/b/f"), "one").ok());
  ASSERT_TRUE(fs.WriteFileDurably(dir.Path("a/b/f"), "2").ok());  // truncates
  EXPECT_EQ(fs.ReadFile(dir.Path("a/b/f")).value(), "2");
  ASSERT_TRUE(fs.Rename(dir.Path("a/b/f"), dir.Path("a/g")).ok());
  ASSERT_TRUE(fs.SyncDirectory(dir.Path("a")).ok());
  EXPECT_THAT(fs.ListDirectory(dir.Path("a")).value(), ElementsAre("b", "g"));
  ASSERT_TRUE(fs.RemoveFile(dir.Path("a/g")).ok());
  EXPECT_EQ(fs.RemoveFile(dir.Path("a/g")).code(), absl::StatusCode::kNotFound);
  ASSERT_TRUE(fs.RemoveTree(dir.Path("a")).ok());
  EXPECT_FALSE(fs.Stat(dir.Path("a")).value().exists);
  EXPECT_EQ(fs.Rename(dir.Path("nope"), dir.Path("x")).code(), absl::StatusCode::kNotFound);
}

TEST(PosixFileSystem, ExchangeSwapsTwoDirectoriesAtomically) {
  TempDir dir;
  FileSystem& fs = *DefaultFileSystem();
  dir.Write("old/file", "old");
  dir.Write("new/file", "new");
  const absl::Status exchanged = fs.ExchangePaths(dir.Path("new"), dir.Path("old"));
  if (absl::IsUnimplemented(exchanged)) GTEST_SKIP() << exchanged.message();
  ASSERT_TRUE(exchanged.ok()) << exchanged;
  EXPECT_EQ(fs.ReadFile(dir.Path("old/file")).value(), "new");
  EXPECT_EQ(fs.ReadFile(dir.Path("new/file")).value(), "old");
  EXPECT_EQ(fs.ExchangePaths(dir.Path("new"), dir.Path("missing")).code(),
            absl::StatusCode::kNotFound);
}

TEST(ReplaceFileAtomically, ReplacesAndLeavesNoTemporaryFile) {
  TempDir dir;
  FileSystem& fs = *DefaultFileSystem();
  ASSERT_TRUE(ReplaceFileAtomically(fs, dir.Path("t"), "1").ok());
  ASSERT_TRUE(ReplaceFileAtomically(fs, dir.Path("t"), "22").ok());
  EXPECT_EQ(fs.ReadFile(dir.Path("t")).value(), "22");
  EXPECT_THAT(fs.ListDirectory(dir.path()).value(), ElementsAre("t"));
  EXPECT_EQ(AtomicWriteTempPath("a/t"), "a/t.tmp");
}

}  // namespace
}  // namespace rollout
