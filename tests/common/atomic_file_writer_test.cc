#include "common/atomic_file_writer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/file_util.h"
#include "tests/support/temp_dir.h"

namespace rollout {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(AtomicFileWriter, CommitsThePiecesInOrder) {
  testing::TempDir dir("atomic_writer");
  auto writer = AtomicFileWriter::Open(dir.Path("sub/file")).value();
  ASSERT_TRUE(writer->Append("head").ok());
  ASSERT_TRUE(writer->Append(std::string(1 << 20, 'x')).ok());
  ASSERT_TRUE(writer->Append("").ok());
  EXPECT_FALSE(ReadFile(dir.Path("sub/file")).ok()) << "visible before Commit()";
  ASSERT_TRUE(writer->Commit().ok());
  EXPECT_EQ(ReadFile(dir.Path("sub/file")).value(), "head" + std::string(1 << 20, 'x'));
  EXPECT_THAT(ListDirectory(dir.Path("sub")).value(), ElementsAre("file"));
  EXPECT_THAT(writer->Commit().message(), HasSubstr("twice"));
  EXPECT_THAT(writer->Append("more").message(), HasSubstr("after Commit()"));
}

TEST(AtomicFileWriter, AWriterDroppedBeforeCommitLeavesTheOldFileAndNoTemporary) {
  testing::TempDir dir("atomic_writer_drop");
  const std::string path = dir.Write("file", "old");
  {
    auto writer = AtomicFileWriter::Open(path).value();
    ASSERT_TRUE(writer->Append("new, but never committed").ok());
  }
  EXPECT_EQ(ReadFile(path).value(), "old");
  EXPECT_THAT(ListDirectory(dir.path()).value(), ElementsAre("file"));
}

TEST(AtomicFileWriter, AnUnwritableDirectoryIsAnErrorNamingThePath) {
  const auto writer = AtomicFileWriter::Open("/proc/no/such/file");
  ASSERT_FALSE(writer.ok());
  EXPECT_THAT(writer.status().message(), HasSubstr("/proc/no"));
}

}  // namespace
}  // namespace rollout
