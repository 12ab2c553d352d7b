// Dataset files as rows: JSON lines and Parquet (pyarrow's fixtures in tests/data/parquet,
// each beside the rows pyarrow reads from it), with where each row came from.
#include "common/data_file_rows.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/file_util.h"
#include "tests/support/temp_dir.h"

namespace rollout {
namespace {

using ::testing::HasSubstr;

TEST(DataFileRows, JsonLinesAreOneObjectANonBlankLine) {
  testing::TempDir dir("data_file_rows");
  const std::string path = dir.Write("d.jsonl", "{\"a\": 1}\n\n  \n[1, 2]\n{\"b\": \n{\"c\": \"x\"}");
  const absl::StatusOr<std::vector<DataFileRow>> rows = ReadDataFileRows(path);
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 4u);
  EXPECT_EQ((*rows)[0].where, path + ":1");
  EXPECT_EQ((*rows)[0].object.value(), nlohmann::ordered_json({{"a", 1}}));
  EXPECT_EQ((*rows)[1].where, path + ":4");
  EXPECT_EQ((*rows)[1].object.status().message(), "not a JSON object but array");
  EXPECT_EQ((*rows)[2].where, path + ":5");
  EXPECT_THAT(std::string((*rows)[2].object.status().message()), HasSubstr("not valid JSON (error at column"));
  EXPECT_EQ((*rows)[3].where, path + ":6");  // no newline after the last line
  EXPECT_EQ((*rows)[3].object.value(), nlohmann::ordered_json({{"c", "x"}}));
}

TEST(DataFileRows, ParquetRowsAreThoseItsWriterReadsNumberedFromOne) {
  const std::string path = "tests/data/parquet/gsm8k_verl.parquet";
  const absl::StatusOr<std::vector<DataFileRow>> parquet = ReadDataFileRows(path);
  ASSERT_TRUE(parquet.ok()) << parquet.status();
  const absl::StatusOr<std::vector<DataFileRow>> expected = ReadDataFileRows("tests/data/parquet/gsm8k_verl.jsonl");
  ASSERT_TRUE(expected.ok()) << expected.status();
  ASSERT_EQ(parquet->size(), expected->size());
  ASSERT_FALSE(parquet->empty());
  for (size_t i = 0; i < parquet->size(); ++i) {
    EXPECT_EQ((*parquet)[i].where, path + " row " + std::to_string(i + 1));
    EXPECT_EQ((*parquet)[i].object.value(), (*expected)[i].object.value()) << i;
  }
}

TEST(DataFileRows, AParquetFileThatCannotBeReadIsOneErrorNamingIt) {
  const std::string path = "tests/data/parquet/unsupported_map.parquet";
  const absl::StatusOr<std::vector<DataFileRow>> rows = ReadDataFileRows(path);
  EXPECT_EQ(rows.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(rows.status().message()), ::testing::StartsWith(path + ": reading it as Parquet: "));
  EXPECT_EQ(ReadDataFileRows("tests/data/parquet/missing.parquet").status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace rollout
