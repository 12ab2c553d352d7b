// The byte-level pieces of the Parquet reader on hand-encoded input: Thrift's compact
// protocol, Snappy, page codecs, the RLE / bit-packed hybrid, PLAIN values and UTF-8
// checks.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <zlib.h>
#include <zstd.h>

#include <string>
#include <vector>

#include "common/parquet_codecs.h"
#include "common/parquet_encodings.h"
#include "common/snappy.h"
#include "common/thrift_compact.h"

namespace rollout {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Bytes(std::initializer_list<int> values) {
  std::string out;
  for (const int v : values) out.push_back(static_cast<char>(v));
  return out;
}

// struct { 1: i32 5, 4: binary "ab", 20: i64 -1, 21: struct { 1: bool true },
//          22: list<i32> [1, 2] }
const std::string kStruct = Bytes({0x15, 0x0a, 0x38, 0x02, 'a', 'b', 0x06, 0x28, 0x01, 0x1c, 0x11, 0x00,
                                   0x19, 0x25, 0x02, 0x04, 0x00});

TEST(ThriftCompact, ReadsFieldsByIdWithShortAndLongDeltas) {
  thrift::CompactReader in(kStruct);
  ASSERT_TRUE(in.BeginStruct().ok());
  thrift::Field field = in.NextField().value();
  EXPECT_EQ(field.id, 1);
  EXPECT_EQ(in.ReadInt(field.type).value(), 5);
  field = in.NextField().value();
  EXPECT_EQ(field.id, 4);
  EXPECT_EQ(in.ReadBinary().value(), "ab");
  field = in.NextField().value();
  EXPECT_EQ(field.id, 20);
  EXPECT_EQ(in.ReadInt(field.type).value(), -1);
  field = in.NextField().value();
  EXPECT_EQ(field.id, 21);
  ASSERT_TRUE(in.BeginStruct().ok());
  field = in.NextField().value();
  EXPECT_EQ(field.id, 1);
  EXPECT_TRUE(in.ReadBool(field.type).value());
  EXPECT_EQ(in.NextField().value().type, thrift::Type::kStop);
  ASSERT_TRUE(in.EndStruct().ok());
  field = in.NextField().value();
  EXPECT_EQ(field.id, 22);  // the delta counts from the outer struct's last field
  const thrift::ListHeader list = in.ReadListHeader().value();
  EXPECT_EQ(list.size, 2);
  EXPECT_EQ(in.ReadInt(list.element_type).value(), 1);
  EXPECT_EQ(in.ReadInt(list.element_type).value(), 2);
  EXPECT_EQ(in.NextField().value().type, thrift::Type::kStop);
  EXPECT_TRUE(in.EndStruct().ok());
  EXPECT_EQ(in.position(), kStruct.size());
}

TEST(ThriftCompact, SkipsAWholeStructAndReportsTruncationWithItsOffset) {
  thrift::CompactReader in(kStruct);
  ASSERT_TRUE(in.Skip(thrift::Type::kStruct).ok());
  EXPECT_EQ(in.position(), kStruct.size());
  thrift::CompactReader cut(absl::string_view(kStruct).substr(0, 5));
  const absl::Status status = cut.Skip(thrift::Type::kStruct);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("at byte"));
}

TEST(Snappy, LiteralsAndOverlappingCopies) {
  // 11 bytes: literal "abc", then a copy of 8 bytes from 3 back (overlapping itself).
  EXPECT_EQ(snappy::Decompress(Bytes({11, 0x08, 'a', 'b', 'c', 0x11, 0x03})).value(), "abcabcabcab");
  // A literal whose length (61) follows its tag; then a 2-byte-offset copy of 5 bytes.
  std::string long_literal = Bytes({66, 0xf0, 60}) + std::string(61, 'x') + Bytes({0x12, 61, 0});
  EXPECT_EQ(snappy::Decompress(long_literal).value(), std::string(61, 'x') + "xxxxx");
  EXPECT_EQ(snappy::Decompress(Bytes({0})).value(), "");
}

TEST(Snappy, CorruptInputIsAnError) {
  auto message = [](const std::string& in) { return std::string(snappy::Decompress(in).status().message()); };
  EXPECT_THAT(message(Bytes({3, 0x00, 'a', 0x05, 0x02})), HasSubstr("a copy from before the start"));
  EXPECT_THAT(message(Bytes({5, 0x08, 'a', 'b', 'c'})), HasSubstr("3 bytes where 5 were declared"));
  EXPECT_THAT(message(Bytes({3, 0x08, 'a'})), HasSubstr("a truncated literal"));
  EXPECT_THAT(message(Bytes({2, 0x08, 'a', 'b', 'c'})), HasSubstr("past the declared length"));
  EXPECT_THAT(message(Bytes({0xff, 0xff, 0xff, 0x7f, 0x00})), HasSubstr("declared length"));
  EXPECT_THAT(message(""), HasSubstr("preamble"));
}

std::string Gzip(const std::string& text) {
  z_stream stream{};
  EXPECT_EQ(deflateInit2(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&stream, text.size()), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  stream.avail_in = static_cast<uInt>(text.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&stream, Z_FINISH), Z_STREAM_END);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

std::string Zstd(const std::string& text) {
  std::string out(ZSTD_compressBound(text.size()), '\0');
  out.resize(ZSTD_compress(out.data(), out.size(), text.data(), text.size(), 3));
  return out;
}

TEST(PageCodecs, GzipAndZstdPagesDecodeToTheSizeTheirHeaderSays) {
  const std::string text = std::string(5000, 'x') + "the end";
  const int64_t size = static_cast<int64_t>(text.size());
  for (const auto& [codec, stored] : {std::pair{parquet::Codec::kGzip, Gzip(text)},
                                      std::pair{parquet::Codec::kZstd, Zstd(text)}}) {
    SCOPED_TRACE(parquet::CodecName(codec));
    ASSERT_LT(stored.size(), text.size());
    EXPECT_EQ(parquet::DecompressPage(stored, codec, size).value(), text);
    EXPECT_THAT(std::string(parquet::DecompressPage(stored, codec, size + 1).status().message()),
                HasSubstr("bytes where its header says 5008"));
    EXPECT_FALSE(parquet::DecompressPage(stored.substr(0, stored.size() / 2), codec, size).ok());
  }
  EXPECT_THAT(std::string(parquet::DecompressPage("abc", parquet::Codec::kUncompressed, 4).status().message()),
              HasSubstr("a page of 3 bytes where its header says 4"));
  EXPECT_THAT(std::string(parquet::DecompressPage("abc", parquet::Codec::kLz4, 3).status().message()),
              HasSubstr("compressed with LZ4"));
}

TEST(RleHybrid, RunsAndBitPackedGroups) {
  std::vector<uint32_t> out;
  // An RLE run of five 1s (bit width 1).
  ASSERT_TRUE(parquet::DecodeRleHybrid(Bytes({0x0a, 0x01}), 1, 5, &out).ok());
  EXPECT_THAT(out, ElementsAre(1, 1, 1, 1, 1));
  // The format's own example: 0..7 bit-packed at width 3; only the first 6 asked for.
  out.clear();
  ASSERT_TRUE(parquet::DecodeRleHybrid(Bytes({0x03, 0x88, 0xc6, 0xfa}), 3, 6, &out).ok());
  EXPECT_THAT(out, ElementsAre(0, 1, 2, 3, 4, 5));
  // A run of 300 (a two-byte header) of a 9-bit value.
  out.clear();
  ASSERT_TRUE(parquet::DecodeRleHybrid(Bytes({0xd8, 0x04, 0x2c, 0x01}), 9, 300, &out).ok());
  EXPECT_EQ(out.size(), 300u);
  EXPECT_EQ(out.back(), 300u);
  out.clear();
  EXPECT_THAT(std::string(parquet::DecodeRleHybrid(Bytes({0x0a, 0x01}), 1, 6, &out).message()),
              HasSubstr("end after 5 of 6 values"));
}

TEST(PlainValues, NumbersBooleansAndUtf8Text) {
  std::vector<nlohmann::json> out;
  ASSERT_TRUE(parquet::DecodePlain(Bytes({0xfe, 0xff, 0xff, 0xff}), parquet::PhysicalType::kInt32,
                                   parquet::Annotation::kNone, 1, &out).ok());
  ASSERT_TRUE(parquet::DecodePlain(Bytes({0xfe, 0xff, 0xff, 0xff}), parquet::PhysicalType::kInt32,
                                   parquet::Annotation::kUnsignedInt, 1, &out).ok());
  ASSERT_TRUE(parquet::DecodePlain(Bytes({0x05}), parquet::PhysicalType::kBoolean, parquet::Annotation::kNone, 3,
                                   &out).ok());
  ASSERT_TRUE(parquet::DecodePlain(Bytes({2, 0, 0, 0, 'h', 'i'}), parquet::PhysicalType::kByteArray,
                                   parquet::Annotation::kString, 1, &out).ok());
  EXPECT_EQ(nlohmann::json(out), nlohmann::json::parse(R"([-2, 4294967294, true, false, true, "hi"])"));
  const absl::Status not_text = parquet::DecodePlain(Bytes({1, 0, 0, 0, 0xff}), parquet::PhysicalType::kByteArray,
                                                     parquet::Annotation::kNone, 1, &out);
  EXPECT_THAT(std::string(not_text.message()), HasSubstr("not UTF-8 text"));
  EXPECT_THAT(std::string(parquet::DecodePlain(Bytes({1, 2, 3}), parquet::PhysicalType::kInt32,
                                               parquet::Annotation::kNone, 1, &out).message()),
              HasSubstr("PLAIN INT32 end after 0 of 1 values"));
}

TEST(Utf8, AcceptsWellFormedTextOnly) {
  EXPECT_TRUE(parquet::IsValidUtf8("h\xc3\xa9llo \xe2\x9c\x93 \xf0\x9f\x98\x80"));
  EXPECT_TRUE(parquet::IsValidUtf8(""));
  EXPECT_FALSE(parquet::IsValidUtf8("\xc3\x28"));          // a bad continuation byte
  EXPECT_FALSE(parquet::IsValidUtf8("\xc0\xaf"));          // overlong
  EXPECT_FALSE(parquet::IsValidUtf8("\xed\xa0\x80"));      // a surrogate
  EXPECT_FALSE(parquet::IsValidUtf8("\xe2\x82"));          // truncated
  EXPECT_FALSE(parquet::IsValidUtf8("\xf4\x90\x80\x80"));  // past U+10FFFF
}

}  // namespace
}  // namespace rollout
