// A Parquet file handed to a reader of JSON lines: one error naming the file and the
// command that converts it; anything else passes.
#include "common/parquet_hint.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "tests/support/temp_dir.h"

namespace rollout {
namespace {

using ::testing::HasSubstr;

TEST(RejectParquet, ParquetsMagicIsAnErrorWithTheConversion) {
  const absl::Status status = RejectParquetText(std::string("PAR1\x15\x04", 6), "d/train.parquet");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(status.message()),
            "d/train.parquet is a Parquet file (verl's format); this reads JSON lines, one object a line. "
            "Convert it once: python3 -c \"import pandas; pandas.read_parquet('d/train.parquet')"
            ".to_json('d/train.parquet.jsonl', orient='records', lines=True, force_ascii=False)\"");
}

TEST(RejectParquet, JsonLinesAndShortOrEmptyTextPass) {
  EXPECT_TRUE(RejectParquetText("{\"prompt\": \"PAR1\"}\n", "a.jsonl").ok());
  EXPECT_TRUE(RejectParquetText("PAR", "a.jsonl").ok());
  EXPECT_TRUE(RejectParquetText("", "a.jsonl").ok());
}

TEST(RejectParquet, ReadsOnlyTheFilesFirstBytes) {
  testing::TempDir dir("parquet_hint");
  EXPECT_THAT(std::string(RejectParquetFile(dir.Write("t.parquet", "PAR1 and more")).message()),
              HasSubstr("t.parquet is a Parquet file"));
  EXPECT_TRUE(RejectParquetFile(dir.Write("t.jsonl", "{}\n")).ok());
  EXPECT_TRUE(RejectParquetFile(dir.Path("missing.jsonl")).ok());  // the caller's open reports it
}

}  // namespace
}  // namespace rollout
