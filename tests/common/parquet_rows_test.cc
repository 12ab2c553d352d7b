// Parquet files written by pyarrow (tests/data/parquet/make_fixtures.py) read back as
// the rows pyarrow itself reads from them (the .jsonl beside each file): verl's gsm8k
// rows, every readable type with nulls at each nesting level, under each codec read
// (none, SNAPPY, GZIP, ZSTD), page version and page size; and what is not read, or
// corrupt, is one error.
#include "common/parquet_rows.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "common/file_util.h"

namespace rollout::parquet {
namespace {

using json = nlohmann::ordered_json;  // rows keep the schema's key order
using ::testing::HasSubstr;

std::string Fixture(const std::string& name) {
  absl::StatusOr<std::string> bytes = ReadFile("tests/data/parquet/" + name);
  EXPECT_TRUE(bytes.ok()) << bytes.status();
  return bytes.ok() ? *bytes : "";
}

std::vector<json> ExpectedRows(const std::string& name) {
  std::vector<json> rows;
  for (absl::string_view line : absl::StrSplit(Fixture(name + ".jsonl"), '\n', absl::SkipEmpty())) {
    rows.push_back(json::parse(line.begin(), line.end()));
  }
  return rows;
}

class ParquetFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(ParquetFixture, ReadsTheRowsPyarrowReads) {
  const std::vector<json> expected = ExpectedRows(GetParam());
  ASSERT_FALSE(expected.empty());
  const absl::StatusOr<std::vector<json>> rows = ReadRows(Fixture(GetParam() + ".parquet"));
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ((*rows)[i], expected[i]) << "row " << i << "\n ours: " << (*rows)[i].dump()
                                       << "\n pyarrow's: " << expected[i].dump();
  }
}

INSTANTIATE_TEST_SUITE_P(Pyarrow, ParquetFixture,
                         ::testing::Values("gsm8k_verl", "trl_preferences", "typed_snappy", "typed_plain", "typed_v2_pages",
                                           "typed_gzip", "typed_zstd", "typed_v2_zstd", "typed_small_pages",
                                           "typed_v2_small_pages", "long_text_snappy"));

TEST(ParquetRows, VerlGsm8kRowsHaveTheirChatPromptAndGroundTruth) {
  const absl::StatusOr<std::vector<json>> rows = ReadRows(Fixture("gsm8k_verl.parquet"));
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 3u);
  const json& row = (*rows)[0];
  EXPECT_EQ(row["data_source"], "openai/gsm8k");
  EXPECT_EQ(row["prompt"][0]["role"], "user");
  EXPECT_THAT(row["prompt"][0]["content"].get<std::string>(), HasSubstr("Natalia sold clips"));
  EXPECT_EQ(row["reward_model"]["ground_truth"], "72");
  EXPECT_EQ(row["extra_info"]["index"], 0);
  EXPECT_EQ((*rows)[2]["reward_model"]["ground_truth"], "5");
}

TEST(ParquetRows, WhatIsNotReadIsAnErrorNamingTheColumnAndWhy) {
  const absl::StatusOr<std::vector<json>> brotli = ReadRows(Fixture("unsupported_brotli.parquet"));
  EXPECT_EQ(brotli.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(brotli.status().message()), HasSubstr("column 'a'"));
  EXPECT_THAT(std::string(brotli.status().message()), HasSubstr("compressed with BROTLI"));
  const absl::StatusOr<std::vector<json>> delta = ReadRows(Fixture("unsupported_delta.parquet"));
  EXPECT_THAT(std::string(delta.status().message()), HasSubstr("encoded DELTA_BINARY_PACKED"));
  const absl::StatusOr<std::vector<json>> map = ReadRows(Fixture("unsupported_map.parquet"));
  EXPECT_THAT(std::string(map.status().message()), HasSubstr("column 'm' is a MAP"));
}

TEST(ParquetRows, NotParquetOrTruncatedIsAnError) {
  EXPECT_THAT(std::string(ReadRows("{\"prompt\": 1}\n").status().message()), HasSubstr("not a Parquet file"));
  const std::string file = Fixture("typed_plain.parquet");
  EXPECT_THAT(std::string(ReadRows(file.substr(0, file.size() - 1)).status().message()), HasSubstr("truncated"));
  std::string encrypted = file;
  encrypted.replace(encrypted.size() - 4, 4, "PARE");
  EXPECT_THAT(std::string(ReadRows(encrypted).status().message()), HasSubstr("encrypted"));
}

// Every single-byte corruption and every truncation of a file gives rows or an error —
// never a crash, a hang or a read outside the bytes (run under ASan to see the last).
TEST(ParquetRows, CorruptBytesGiveAnErrorOrRowsNeverACrash) {
  for (const std::string name : {"typed_snappy.parquet", "typed_v2_small_pages.parquet", "typed_gzip.parquet",
                                 "typed_zstd.parquet"}) {
    const std::string file = Fixture(name);
    int errors = 0;
    for (size_t at = 0; at < file.size(); ++at) {
      for (const char flip : {'\x01', '\x80', '\xff'}) {
        std::string corrupt = file;
        corrupt[at] = static_cast<char>(corrupt[at] ^ flip);
        errors += ReadRows(corrupt).ok() ? 0 : 1;
      }
    }
    for (size_t size = 0; size < file.size(); size += 7) errors += ReadRows(file.substr(0, size)).ok() ? 0 : 1;
    EXPECT_GT(errors, 0) << name;
  }
}

}  // namespace
}  // namespace rollout::parquet
