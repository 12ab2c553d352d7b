// TFRecord framing, CRC-32C and the TensorBoard sink. The expected bytes come from
// the specifications (RFC 3720's CRC-32C vectors, TFRecord's layout, the protobuf
// wire format with TensorFlow's field numbers), not from the code under test.
#include "controller/tensorboard_sink.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/file_util.h"
#include "controller/tfrecord_writer.h"
#include "proto/tensorboard.pb.h"
#include "tests/support/temp_dir.h"

namespace rollout::controller {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

uint64_t ReadLittleEndian(const std::string& bytes, size_t offset, int size) {
  uint64_t value = 0;
  for (int i = size - 1; i >= 0; --i)
    value = (value << 8) | static_cast<unsigned char>(bytes[offset + i]);
  return value;
}

// Splits a TFRecord file into its records, checking each length and both CRCs the
// way TensorFlow's reader does.
std::vector<std::string> ReadRecords(const std::string& path) {
  absl::StatusOr<std::string> file = ReadFile(path);
  EXPECT_TRUE(file.ok()) << file.status();
  std::vector<std::string> records;
  size_t offset = 0;
  while (file.ok() && offset < file->size()) {
    if (offset + 12 > file->size()) {
      ADD_FAILURE() << "truncated header at byte " << offset;
      break;
    }
    const uint64_t length = ReadLittleEndian(*file, offset, 8);
    EXPECT_EQ(ReadLittleEndian(*file, offset + 8, 4), MaskCrc32c(Crc32c(file->substr(offset, 8))))
        << "length CRC of record " << records.size();
    if (offset + 12 + length + 4 > file->size()) {
      ADD_FAILURE() << "truncated record at byte " << offset;
      break;
    }
    const std::string data = file->substr(offset + 12, length);
    EXPECT_EQ(ReadLittleEndian(*file, offset + 12 + length, 4), MaskCrc32c(Crc32c(data)))
        << "data CRC of record " << records.size();
    records.push_back(data);
    offset += 12 + length + 4;
  }
  return records;
}

tensorboard::Event ParseEvent(const std::string& bytes) {
  tensorboard::Event event;
  EXPECT_TRUE(event.ParseFromString(bytes));
  return event;
}

std::string Bytes(std::initializer_list<int> values) {
  std::string bytes;
  for (int value : values) bytes.push_back(static_cast<char>(value));
  return bytes;
}

TEST(Crc32c, MatchesPublishedCheckValues) {
  EXPECT_EQ(Crc32c(""), 0x00000000u);
  EXPECT_EQ(Crc32c("123456789"), 0xE3069283u);
  // RFC 3720, B.4.
  EXPECT_EQ(Crc32c(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(Crc32c(std::string(32, '\xFF')), 0x62A8AB43u);
  std::string ascending;
  for (int i = 0; i < 32; ++i) ascending.push_back(static_cast<char>(i));
  EXPECT_EQ(Crc32c(ascending), 0x46DD794Eu);
}

TEST(MaskCrc32c, RotatesRightBy15AndAddsTheDelta) {
  EXPECT_EQ(MaskCrc32c(0), 0xa282ead8u);
  EXPECT_EQ(MaskCrc32c(1), 0xa282ead8u + (1u << 17));
  EXPECT_EQ(MaskCrc32c(1u << 15), 0xa282ead8u + 1u);
}

TEST(FrameTfRecord, LengthThenItsCrcThenDataThenItsCrc) {
  const std::string framed = FrameTfRecord("abc");
  ASSERT_EQ(framed.size(), 8u + 4u + 3u + 4u);
  EXPECT_EQ(framed.substr(0, 8), Bytes({3, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(ReadLittleEndian(framed, 8, 4), MaskCrc32c(Crc32c(framed.substr(0, 8))));
  EXPECT_EQ(framed.substr(12, 3), "abc");
  EXPECT_EQ(ReadLittleEndian(framed, 15, 4), MaskCrc32c(Crc32c("abc")));
}

TEST(TfRecordWriter, RecordsReadBackInOrderBeforeClose) {
  testing::TempDir dir;
  absl::StatusOr<std::unique_ptr<TfRecordWriter>> writer =
      TfRecordWriter::Create(dir.Path("r.tfrecord"));
  ASSERT_TRUE(writer.ok()) << writer.status();
  ASSERT_TRUE((*writer)->Write("first").ok());
  ASSERT_TRUE((*writer)->Write("").ok());
  ASSERT_TRUE((*writer)->Write(std::string(100000, 'x')).ok());
  // Each record is flushed when written.
  const std::vector<std::string> records = ReadRecords(dir.Path("r.tfrecord"));
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0], "first");
  EXPECT_EQ(records[1], "");
  EXPECT_EQ(records[2].size(), 100000u);
}

TEST(TfRecordWriter, RefusesToOverwriteAnExistingFile) {
  testing::TempDir dir;
  const std::string path = dir.Write("existing", "keep me");
  absl::StatusOr<std::unique_ptr<TfRecordWriter>> writer = TfRecordWriter::Create(path);
  ASSERT_EQ(writer.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(writer.status().message(), HasSubstr(path));
  absl::StatusOr<std::string> contents = ReadFile(path);
  EXPECT_EQ(contents.value_or(""), "keep me");
}

TEST(TfRecordWriter, MissingDirectoryIsAnErrorNamingThePath) {
  testing::TempDir dir;
  const std::string path = dir.Path("missing/r.tfrecord");
  absl::StatusOr<std::unique_ptr<TfRecordWriter>> writer = TfRecordWriter::Create(path);
  ASSERT_FALSE(writer.ok());
  EXPECT_THAT(writer.status().message(), HasSubstr(path));
}

TEST(TfRecordWriter, WriteAfterCloseIsFailedPrecondition) {
  testing::TempDir dir;
  absl::StatusOr<std::unique_ptr<TfRecordWriter>> writer = TfRecordWriter::Create(dir.Path("r"));
  ASSERT_TRUE(writer.ok()) << writer.status();
  ASSERT_TRUE((*writer)->Close().ok());
  ASSERT_TRUE((*writer)->Close().ok());
  EXPECT_EQ((*writer)->Write("late").code(), absl::StatusCode::kFailedPrecondition);
}

// The protobuf wire bytes TensorFlow's Event has for these fields: wall_time is
// field 1 (fixed64, key 0x09), step field 2 (varint, 0x10), file_version field 3
// (bytes, 0x1A), summary field 5 (bytes, 0x2A); Summary.value is field 1 (0x0A);
// Value.tag field 1 (0x0A), simple_value field 2 (fixed32, 0x15).
TEST(TensorboardProto, FieldNumbersMatchTensorFlowsEventProto) {
  tensorboard::Event header;
  header.set_wall_time(1.5);  // 0x3FF8000000000000
  header.set_file_version("brain.Event:2");
  EXPECT_EQ(header.SerializeAsString(),
            Bytes({0x09, 0, 0, 0, 0, 0, 0, 0xF8, 0x3F, 0x1A, 13}) + "brain.Event:2");

  tensorboard::Event step;
  step.set_step(3);
  tensorboard::Summary::Value* value = step.mutable_summary()->add_value();
  value->set_tag("a");
  value->set_simple_value(0.5f);  // 0x3F000000
  EXPECT_EQ(step.SerializeAsString(),
            Bytes({0x10, 3, 0x2A, 10, 0x0A, 8, 0x0A, 1, 'a', 0x15, 0, 0, 0, 0x3F}));
}

// A text value as TensorBoard's text plug-in reads it: Value.tag (0x0A), metadata field
// 9 (0x4A) with plugin_data field 1 (0x0A) holding plugin_name field 1 (0x0A) "text",
// tensor field 8 (0x42) with dtype field 1 (varint 0x08) DT_STRING 7, an empty
// tensor_shape field 2 (0x12) and string_val field 8 (0x42).
TEST(TensorboardProto, TextIsAStringTensorForTheTextPlugin) {
  tensorboard::Summary::Value value;
  value.set_tag("t");
  value.mutable_metadata()->mutable_plugin_data()->set_plugin_name("text");
  value.mutable_tensor()->set_dtype(7);
  value.mutable_tensor()->mutable_tensor_shape();
  value.mutable_tensor()->add_string_val("hi");
  EXPECT_EQ(value.SerializeAsString(),
            Bytes({0x0A, 1, 't', 0x42, 8, 0x08, 7, 0x12, 0, 0x42, 2, 'h', 'i', 0x4A, 8, 0x0A, 6, 0x0A, 4}) + "text");
}

TEST(TensorboardSink, GenerationsAreOneMarkdownTextEventAtTheirStep) {
  testing::TempDir dir;
  absl::StatusOr<std::unique_ptr<TensorboardSink>> sink = TensorboardSink::Create(dir.Path("tb"));
  ASSERT_TRUE(sink.ok()) << sink.status();
  ASSERT_TRUE((*sink)->LogGenerations(4, {{"2+3=", "5", 1.0}, {"1+1=", "3", 0.0}}).ok());
  ASSERT_TRUE((*sink)->Close().ok());
  const std::vector<std::string> records = ReadRecords((*sink)->path());
  ASSERT_EQ(records.size(), 2u);
  const tensorboard::Event event = ParseEvent(records[1]);
  EXPECT_EQ(event.step(), 4);
  ASSERT_EQ(event.summary().value_size(), 1);
  const tensorboard::Summary::Value& text = event.summary().value(0);
  EXPECT_EQ(text.tag(), "val/generations");
  EXPECT_EQ(text.metadata().plugin_data().plugin_name(), "text");
  EXPECT_EQ(text.tensor().dtype(), 7);
  EXPECT_EQ(text.tensor().tensor_shape().dim_size(), 0);
  ASSERT_EQ(text.tensor().string_val_size(), 1);
  EXPECT_EQ(text.tensor().string_val(0),
            "**Generation Results - Step 4**\n\n"
            "### Sample 1\n**Input:** 2+3=\n\n**Output:** 5\n\n**Score:** 1\n\n"
            "### Sample 2\n**Input:** 1+1=\n\n**Output:** 3\n\n**Score:** 0\n\n");
}

TEST(EventsFileName, FollowsTensorFlowsPattern) {
  EXPECT_EQ(EventsFileName(1700000000, "node7", 4242, 0),
            "events.out.tfevents.1700000000.node7.4242.0");
}

TEST(TensorboardSink, WritesFileVersionThenOneSummaryEventPerStep) {
  testing::TempDir dir;
  const std::string log_dir = dir.Path("tensorboard_log/project/experiment");
  const double before = absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch());
  absl::StatusOr<std::unique_ptr<TensorboardSink>> sink = TensorboardSink::Create(log_dir);
  ASSERT_TRUE(sink.ok()) << sink.status();
  ASSERT_TRUE((*sink)->Log(1, {{"critic/score/mean", 0.25}, {"actor/pg_loss", -1.5}}).ok());
  ASSERT_TRUE((*sink)->Log(2, {{"critic/score/mean", 0.75}, {"actor/kl_loss", std::nan("")}}).ok());
  ASSERT_TRUE((*sink)->Close().ok());

  absl::StatusOr<std::vector<std::string>> files = ListDirectory(log_dir);
  ASSERT_TRUE(files.ok()) << files.status();
  ASSERT_EQ(files->size(), 1u);
  EXPECT_EQ(JoinPath(log_dir, (*files)[0]), (*sink)->path());
  EXPECT_THAT((*files)[0], StartsWith("events.out.tfevents."));
  EXPECT_THAT((*files)[0], HasSubstr(absl::StrCat(".", getpid(), ".")));

  const std::vector<std::string> records = ReadRecords((*sink)->path());
  ASSERT_EQ(records.size(), 3u);
  const tensorboard::Event header = ParseEvent(records[0]);
  EXPECT_EQ(header.file_version(), "brain.Event:2");
  EXPECT_GE(header.wall_time(), before);
  EXPECT_LT(header.wall_time(), before + 3600);

  const tensorboard::Event first = ParseEvent(records[1]);
  EXPECT_EQ(first.step(), 1);
  EXPECT_GE(first.wall_time(), header.wall_time());
  ASSERT_EQ(first.summary().value_size(), 2);
  EXPECT_EQ(first.summary().value(0).tag(), "actor/pg_loss");
  EXPECT_EQ(first.summary().value(0).simple_value(), -1.5f);
  EXPECT_EQ(first.summary().value(1).tag(), "critic/score/mean");
  EXPECT_EQ(first.summary().value(1).simple_value(), 0.25f);

  const tensorboard::Event second = ParseEvent(records[2]);
  EXPECT_EQ(second.step(), 2);
  ASSERT_EQ(second.summary().value_size(), 2);
  EXPECT_TRUE(std::isnan(second.summary().value(0).simple_value()));
  EXPECT_EQ(second.summary().value(1).simple_value(), 0.75f);
}

TEST(TensorboardSink, EachSinkWritesItsOwnFile) {
  testing::TempDir dir;
  absl::StatusOr<std::unique_ptr<TensorboardSink>> first = TensorboardSink::Create(dir.path());
  absl::StatusOr<std::unique_ptr<TensorboardSink>> second = TensorboardSink::Create(dir.path());
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_NE((*first)->path(), (*second)->path());
  absl::StatusOr<std::vector<std::string>> files = ListDirectory(dir.path());
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_EQ(files->size(), 2u);
}

TEST(TensorboardSink, UncreatableDirectoryIsAnErrorNamingIt) {
  testing::TempDir dir;
  const std::string log_dir = JoinPath(dir.Write("a_file", "x"), "tb");
  absl::StatusOr<std::unique_ptr<TensorboardSink>> sink = TensorboardSink::Create(log_dir);
  ASSERT_FALSE(sink.ok());
  EXPECT_THAT(sink.status().message(), HasSubstr(log_dir));
}

}  // namespace
}  // namespace rollout::controller
