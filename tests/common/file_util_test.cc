#include "common/file_util.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"

namespace rollout {
namespace {

using ::rollout::testing::TempDir;
using ::testing::ElementsAre;

TEST(Paths, JoinDirnameNormalize) {
  EXPECT_EQ(JoinPath("a/b", "c"), "a/b/c");
  EXPECT_EQ(JoinPath("a/", "c"), "a/c");
  EXPECT_EQ(JoinPath("a", "/abs"), "/abs");
  EXPECT_EQ(JoinPath("", "c"), "c");
  EXPECT_EQ(Dirname("a/b/c.yaml"), "a/b");
  EXPECT_EQ(Dirname("c.yaml"), ".");
  EXPECT_EQ(Dirname("/c.yaml"), "/");
  EXPECT_EQ(NormalizePath("a/./b/../c//d"), "a/c/d");
  EXPECT_EQ(NormalizePath("../x"), "../x");
  EXPECT_EQ(NormalizePath("a/../../x"), "../x");
  EXPECT_EQ(NormalizePath("/../x"), "/x");
  EXPECT_EQ(NormalizePath("a/.."), ".");
  EXPECT_EQ(NormalizePath("recipes/base/../defaults.yaml"), "recipes/defaults.yaml");
}

TEST(ReadFile, ContentsOrAClearError) {
  TempDir dir;
  const std::string path = dir.Write("f.txt", "hello\nworld");
  EXPECT_EQ(ReadFile(path).value(), "hello\nworld");
  EXPECT_EQ(ReadFile(dir.Path("missing")).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ReadFile(dir.path()).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ReadFileHead, TheFirstBytesOrTheWholeShortFile) {
  TempDir dir("file_util");
  const std::string path = dir.Write("f.txt", std::string(100000, 'x') + "tail");
  EXPECT_EQ(ReadFileHead(path, 4).value(), "xxxx");
  EXPECT_EQ(ReadFileHead(path, 0).value(), "");
  EXPECT_EQ(ReadFileHead(path, 200000).value().size(), 100004u);
  EXPECT_EQ(ReadFileHead(dir.Path("missing"), 4).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ReadFileHead(dir.path(), 4).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(WriteFileAtomically, ReplacesAndLeavesNoTemporaryFile) {
  TempDir dir;
  const std::string path = dir.Path("sub/dir/state.json");
  ASSERT_TRUE(WriteFileAtomically(path, "one").ok());
  ASSERT_TRUE(WriteFileAtomically(path, "two").ok());
  EXPECT_EQ(ReadFile(path).value(), "two");
  EXPECT_THAT(ListDirectory(dir.Path("sub/dir")).value(), ElementsAre("state.json"));
}

TEST(ListDirectory, SortedNamesOrNotFound) {
  TempDir dir;
  dir.Write("b", "");
  dir.Write("a", "");
  dir.Write("c/d", "");
  EXPECT_THAT(ListDirectory(dir.path()).value(), ElementsAre("a", "b", "c"));
  EXPECT_EQ(ListDirectory(dir.Path("nope")).status().code(), absl::StatusCode::kNotFound);
}

TEST(RemoveTree, RemovesNestedContentAndToleratesAbsence) {
  TempDir dir;
  dir.Write("x/y/z.txt", "data");
  ASSERT_EQ(symlink(dir.path().c_str(), dir.Path("x/loop").c_str()), 0);  // not followed
  ASSERT_TRUE(RemoveTree(dir.Path("x")).ok());
  EXPECT_EQ(access(dir.Path("x").c_str(), F_OK), -1);
  EXPECT_EQ(access(dir.path().c_str(), F_OK), 0);
  EXPECT_TRUE(RemoveTree(dir.Path("x")).ok());
}

TEST(MakeDirectories, FileInTheWayIsAnError) {
  TempDir dir;
  const std::string file = dir.Write("f", "");
  EXPECT_TRUE(MakeDirectories(dir.Path("a/b/c")).ok());
  EXPECT_FALSE(MakeDirectories(file + "/sub").ok());
}

TEST(FileIdentity, TwoSpellingsOfOneFileMeet) {
  TempDir dir;
  dir.Write("a/f.yaml", "");
  EXPECT_EQ(FileIdentity(dir.Path("a/../a/f.yaml")), FileIdentity(dir.Path("a/f.yaml")));
}

}  // namespace
}  // namespace rollout
