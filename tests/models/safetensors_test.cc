#include "models/safetensors.h"

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <limits>

#include "common/file_util.h"
#include "tests/support/temp_dir.h"

namespace rollout::models {
namespace {

using ::rollout::testing::TempDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

const std::string kFixture = std::string(ROLLOUT_TEST_DATA_DIR) + "/tiny-qwen2";

// Distinct values of `dtype` in `shape`; floating tensors start with NaN and -inf so
// that only a bit-exact copy compares equal.
at::Tensor Sample(c10::ScalarType dtype, std::vector<int64_t> shape) {
  int64_t numel = 1;
  for (int64_t dim : shape) numel *= dim;
  at::Tensor values = at::arange(numel, at::kDouble) * 1.37 - 5.0;
  if (dtype == at::kBool) return (at::arange(numel) % 3 == 0).reshape(shape);
  if (dtype == at::kByte) values = values.abs();
  at::Tensor tensor = values.to(dtype).reshape(shape);
  if (at::isFloatingType(dtype) && numel >= 2) {
    tensor.view(-1)[0] = std::numeric_limits<double>::quiet_NaN();
    tensor.view(-1)[1] = -std::numeric_limits<double>::infinity();
  }
  return tensor;
}

// Same dtype, shape and bytes.
void ExpectBitIdentical(const at::Tensor& actual, const at::Tensor& expected) {
  ASSERT_EQ(actual.scalar_type(), expected.scalar_type());
  ASSERT_EQ(actual.sizes(), expected.sizes());
  const at::Tensor a = actual.contiguous();
  const at::Tensor e = expected.contiguous();
  ASSERT_EQ(a.nbytes(), e.nbytes());
  if (a.nbytes() > 0) {
    EXPECT_EQ(std::memcmp(a.data_ptr(), e.data_ptr(), a.nbytes()), 0);
  }
}

// A safetensors file from its parts: little-endian header length, header, data.
std::string RawFile(const std::string& header, const std::string& data) {
  std::string file(8, '\0');
  const uint64_t size = header.size();
  std::memcpy(file.data(), &size, 8);
  return file + header + data;
}

absl::Status OpenStatus(const std::string& path) {
  return SafetensorsReader::OpenFile(path).status();
}

TEST(Safetensors, EveryDtypeRoundTripsBitIdenticalWithMetadata) {
  TempDir dir;
  const std::vector<c10::ScalarType> dtypes = {at::kFloat, at::kHalf, at::kBFloat16, at::kDouble,
                                               at::kLong,  at::kInt,  at::kShort,    at::kChar,
                                               at::kByte,  at::kBool};
  std::vector<std::pair<std::string, at::Tensor>> tensors;
  for (c10::ScalarType dtype : dtypes) {
    tensors.emplace_back(std::string("t_") + c10::toString(dtype), Sample(dtype, {3, 5}));
  }
  const std::string path = dir.Path("all.safetensors");
  ASSERT_TRUE(WriteSafetensors(path, tensors, {{"format", "pt"}, {"step", "7"}}).ok());

  auto reader = SafetensorsReader::OpenFile(path);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_THAT((*reader)->Metadata(), ElementsAre(Pair("format", "pt"), Pair("step", "7")));
  EXPECT_EQ((*reader)->Names().size(), dtypes.size());
  for (const auto& [name, tensor] : tensors) {
    SCOPED_TRACE(name);
    const TensorInfo info = (*reader)->Info(name).value();
    EXPECT_EQ(info.dtype, tensor.scalar_type());
    EXPECT_THAT(info.shape, ElementsAre(3, 5));
    ExpectBitIdentical((*reader)->Load(name).value(), tensor);
  }
}

TEST(Safetensors, ScalarAndEmptyTensorsRoundTrip) {
  TempDir dir;
  const std::string path = dir.Path("edge.safetensors");
  const at::Tensor scalar = at::scalar_tensor(2.5, at::kFloat);
  const at::Tensor empty = at::empty({0}, at::kLong);
  const at::Tensor empty_rows = at::empty({3, 0}, at::kBFloat16);
  ASSERT_TRUE(
      WriteSafetensors(path, {{"scalar", scalar}, {"empty", empty}, {"rows", empty_rows}}).ok());

  auto reader = SafetensorsReader::OpenFile(path).value();
  EXPECT_THAT(reader->Names(), ElementsAre("empty", "rows", "scalar"));
  EXPECT_TRUE(reader->Info("scalar")->shape.empty());
  ExpectBitIdentical(reader->Load("scalar").value(), scalar);
  ExpectBitIdentical(reader->Load("empty").value(), empty);
  ExpectBitIdentical(reader->Load("rows").value(), empty_rows);
  EXPECT_TRUE(reader->Metadata().empty());
}

TEST(Safetensors, NonContiguousTensorsAreWrittenInLogicalOrder) {
  TempDir dir;
  const std::string path = dir.Path("t.safetensors");
  const at::Tensor base = Sample(at::kFloat, {4, 6});
  const at::Tensor transposed = base.t();
  const at::Tensor strided = base.slice(1, 0, 6, 2);
  ASSERT_TRUE(WriteSafetensors(path, {{"t", transposed}, {"s", strided}}).ok());
  auto reader = SafetensorsReader::OpenFile(path).value();
  ExpectBitIdentical(reader->Load("t").value(), transposed.contiguous());
  ExpectBitIdentical(reader->Load("s").value(), strided.contiguous());
}

TEST(Safetensors, LayoutIsPaddedPackedAndAligned) {
  TempDir dir;
  const std::string path = dir.Path("layout.safetensors");
  ASSERT_TRUE(WriteSafetensors(path,
                               {{"b", at::ones({3}, at::kByte)}, {"a", at::ones({2}, at::kDouble)}},
                               {{"format", "pt"}})
                  .ok());
  const std::string file = ReadFile(path).value();
  uint64_t header_size = 0;
  std::memcpy(&header_size, file.data(), 8);
  EXPECT_EQ(header_size % 8, 0u);
  // Name order in the header; the 8-byte doubles first in the data.
  const std::string json =
      R"({"__metadata__":{"format":"pt"},"a":{"dtype":"F64","shape":[2],"data_offsets":[0,16]},)"
      R"("b":{"dtype":"U8","shape":[3],"data_offsets":[16,19]}})";
  EXPECT_EQ(file.substr(8, header_size), json + std::string(header_size - json.size(), ' '));
  EXPECT_EQ(file.size(), 8 + header_size + 19);
}

TEST(Safetensors, LoadedTensorsOutliveTheReader) {
  TempDir dir;
  const std::string path = dir.Path("t.safetensors");
  const at::Tensor original = Sample(at::kFloat, {8});
  ASSERT_TRUE(WriteSafetensors(path, {{"w", original}}).ok());
  auto reader = SafetensorsReader::OpenFile(path).value();
  at::Tensor loaded = reader->Load("w").value();
  reader.reset();
  ASSERT_TRUE(RemoveTree(path).ok());
  ExpectBitIdentical(loaded, original);
}

TEST(Safetensors, WriterRejectsUnsupportedDtypesAndRepeatedNames) {
  TempDir dir;
  const std::string path = dir.Path("bad.safetensors");
  const absl::Status complex = WriteSafetensors(path, {{"z", at::zeros({2}, at::kComplexFloat)}});
  EXPECT_EQ(complex.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(complex.message(), HasSubstr("'z'"));
  const absl::Status repeated =
      WriteSafetensors(path, {{"x", at::zeros({1})}, {"x", at::zeros({1})}});
  EXPECT_EQ(repeated.code(), absl::StatusCode::kInvalidArgument);
  const absl::Status reserved = WriteSafetensors(path, {{"__metadata__", at::zeros({1})}});
  EXPECT_EQ(reserved.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ReadFile(path).status().code(), absl::StatusCode::kNotFound);
}

TEST(SafetensorsReader, ReadsTheTinyQwen2Fixture) {
  auto reader = SafetensorsReader::OpenDirectory(kFixture);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ((*reader)->Names().size(), 26u);
  EXPECT_THAT((*reader)->Info("model.embed_tokens.weight")->shape, ElementsAre(514, 64));
  EXPECT_THAT((*reader)->Info("model.layers.0.self_attn.q_proj.bias")->shape, ElementsAre(64));
  EXPECT_THAT((*reader)->Info("model.layers.1.self_attn.k_proj.weight")->shape,
              ElementsAre(32, 64));
  EXPECT_THAT((*reader)->Info("model.layers.1.mlp.down_proj.weight")->shape, ElementsAre(64, 160));
  EXPECT_FALSE((*reader)->Has("lm_head.weight"));  // tied to the embedding
  EXPECT_THAT((*reader)->Metadata(), ElementsAre(Pair("format", "pt")));
  const at::Tensor norm = (*reader)->Load("model.norm.weight").value();
  EXPECT_EQ(norm.scalar_type(), at::kFloat);
  EXPECT_TRUE(at::isfinite(norm).all().item<bool>());
}

TEST(SafetensorsReader, ShardedDirectoryServesEachTensorFromItsShard) {
  TempDir dir;
  const at::Tensor a = Sample(at::kBFloat16, {2, 3});
  const at::Tensor b = Sample(at::kFloat, {4});
  const at::Tensor c = Sample(at::kLong, {1});
  ASSERT_TRUE(WriteSafetensors(dir.Path("model-00001-of-00002.safetensors"), {{"a", a}, {"b", b}},
                               {{"format", "pt"}})
                  .ok());
  ASSERT_TRUE(WriteSafetensors(dir.Path("model-00002-of-00002.safetensors"), {{"c", c}}).ok());
  dir.Write("model.safetensors.index.json", R"({"metadata": {"total_size": 24},
      "weight_map": {"a": "model-00001-of-00002.safetensors",
                     "b": "model-00001-of-00002.safetensors",
                     "c": "model-00002-of-00002.safetensors"}})");

  auto reader = SafetensorsReader::OpenDirectory(dir.path());
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_THAT((*reader)->Names(), ElementsAre("a", "b", "c"));
  ExpectBitIdentical((*reader)->Load("a").value(), a);
  ExpectBitIdentical((*reader)->Load("b").value(), b);
  ExpectBitIdentical((*reader)->Load("c").value(), c);
  EXPECT_THAT((*reader)->Metadata(), ElementsAre(Pair("format", "pt")));
}

TEST(SafetensorsReader, IndexPlacingATensorInTheWrongShardIsDataLoss) {
  TempDir dir;
  ASSERT_TRUE(WriteSafetensors(dir.Path("s1.safetensors"), {{"a", at::zeros({1})}}).ok());
  dir.Write("model.safetensors.index.json", R"({"weight_map": {"b": "s1.safetensors"}})");
  const absl::Status status = SafetensorsReader::OpenDirectory(dir.path()).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr("'b'"));
  EXPECT_THAT(status.message(), HasSubstr("s1.safetensors"));
}

TEST(SafetensorsReader, BadIndexIsDataLossAndMissingWeightsNotFound) {
  TempDir dir;
  EXPECT_EQ(SafetensorsReader::OpenDirectory(dir.path()).status().code(),
            absl::StatusCode::kNotFound);
  dir.Write("model.safetensors.index.json", R"({"weight_map": {"a": "../elsewhere"}})");
  EXPECT_EQ(SafetensorsReader::OpenDirectory(dir.path()).status().code(),
            absl::StatusCode::kDataLoss);
  dir.Write("model.safetensors.index.json", R"({"weight_map": )");
  const absl::Status status = SafetensorsReader::OpenDirectory(dir.path()).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr("model.safetensors.index.json"));
}

TEST(SafetensorsReader, MissingFileOrTensorIsNotFound) {
  TempDir dir;
  EXPECT_EQ(OpenStatus(dir.Path("none.safetensors")).code(), absl::StatusCode::kNotFound);
  const std::string path = dir.Path("t.safetensors");
  ASSERT_TRUE(WriteSafetensors(path, {{"w", at::zeros({2})}}).ok());
  auto reader = SafetensorsReader::OpenFile(path).value();
  EXPECT_FALSE(reader->Has("v"));
  EXPECT_EQ(reader->Info("v").status().code(), absl::StatusCode::kNotFound);
  const absl::Status load = reader->Load("v").status();
  EXPECT_EQ(load.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(load.message(), HasSubstr(path));
}

TEST(SafetensorsReader, TruncatedDataIsDataLossNamingFileAndTensor) {
  TempDir dir;
  const std::string path = dir.Path("t.safetensors");
  ASSERT_TRUE(WriteSafetensors(path, {{"weight", at::zeros({4})}}).ok());
  const std::string file = ReadFile(path).value();
  dir.Write("t.safetensors", file.substr(0, file.size() - 3));
  const absl::Status status = OpenStatus(path);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr(path));
  EXPECT_THAT(status.message(), HasSubstr("'weight'"));
}

// The data lie widest dtype first, then by name: "b" (float64) before "a" and "c".
TEST(SafetensorsReader, NamesInFileOrderFollowTheData) {
  TempDir dir;
  const std::string path = dir.Path("t.safetensors");
  ASSERT_TRUE(WriteSafetensors(path, {{"c", Sample(at::kFloat, {4})},
                                      {"b", Sample(at::kDouble, {2})},
                                      {"a", Sample(at::kHalf, {3})}})
                  .ok());
  auto reader = SafetensorsReader::OpenFile(path).value();
  EXPECT_THAT(reader->Names(), ElementsAre("a", "b", "c"));
  EXPECT_THAT(reader->NamesInFileOrder(), ElementsAre("b", "c", "a"));
}

TEST(SafetensorsReader, ReadIntoFillsAMatchingTensorAndRefusesOthers) {
  TempDir dir;
  const std::string path = dir.Path("t.safetensors");
  const at::Tensor weight = Sample(at::kBFloat16, {3, 4});
  ASSERT_TRUE(WriteSafetensors(path, {{"w", weight}}).ok());
  auto reader = SafetensorsReader::OpenFile(path).value();
  at::Tensor destination = at::zeros({3, 4}, at::kBFloat16);
  ASSERT_TRUE(reader->ReadInto("w", destination).ok());
  ExpectBitIdentical(destination, weight);
  at::Tensor wrong_dtype = at::zeros({3, 4}, at::kFloat);
  at::Tensor wrong_shape = at::zeros({4, 3}, at::kBFloat16);
  at::Tensor strided = at::zeros({4, 3}, at::kBFloat16).t();
  for (at::Tensor* bad : {&wrong_dtype, &wrong_shape, &strided}) {
    const absl::Status status = reader->ReadInto("w", *bad);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(status.message(), HasSubstr("'w'"));
    EXPECT_EQ(bad->abs().sum().item<float>(), 0.f);  // untouched
  }
  EXPECT_EQ(reader->ReadInto("v", destination).code(), absl::StatusCode::kNotFound);
}

// Truncating a file while a reader has it open: reads past the new end fail (they used
// to be a SIGBUS through a memory map).
TEST(SafetensorsReader, FileTruncatedWhileOpenIsDataLoss) {
  TempDir dir;
  const std::string path = dir.Path("t.safetensors");
  ASSERT_TRUE(WriteSafetensors(path, {{"w", at::ones({1024})}}).ok());
  auto reader = SafetensorsReader::OpenFile(path).value();
  ASSERT_EQ(truncate(path.c_str(), 64), 0);
  const absl::Status status = reader->Load("w").status();
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr(path));
}

TEST(SafetensorsReader, HeaderLengthPastEndOfFileIsDataLoss) {
  TempDir dir;
  std::string file = RawFile("{}", "");
  const uint64_t huge = uint64_t{1} << 40;
  std::memcpy(file.data(), &huge, 8);
  const std::string path = dir.Write("t.safetensors", file);
  const absl::Status status = OpenStatus(path);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr(path));
  EXPECT_THAT(status.message(), HasSubstr("header length"));
  EXPECT_EQ(OpenStatus(dir.Write("short.safetensors", "abc")).code(), absl::StatusCode::kDataLoss);
}

TEST(SafetensorsReader, OffsetsNotMatchingShapeAreDataLoss) {
  TempDir dir;
  const std::string path = dir.Write(
      "t.safetensors",
      RawFile(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})", std::string(8, 'x')));
  const absl::Status status = OpenStatus(path);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr(path));
  EXPECT_THAT(status.message(), HasSubstr("'w'"));
}

TEST(SafetensorsReader, MalformedHeadersAreDataLoss) {
  TempDir dir;
  const std::vector<std::string> headers = {
      "{not json",
      "[1, 2]",
      R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
      R"("w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
      R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
      R"("b":{"dtype":"I32","shape":[1],"data_offsets":[2,6]}})",
      R"({"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})",
      R"({"w":{"dtype":"F32","shape":[1]}})",
      R"({"__metadata__":{"format":1}})",
  };
  for (const std::string& header : headers) {
    SCOPED_TRACE(header);
    const std::string path = dir.Write("t.safetensors", RawFile(header, std::string(8, 'x')));
    const absl::Status status = OpenStatus(path);
    EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
    EXPECT_THAT(status.message(), HasSubstr(path));
  }
}

TEST(SafetensorsReader, UnsupportedDtypeInFileIsInvalidArgument) {
  TempDir dir;
  const std::string path =
      dir.Write("t.safetensors",
                RawFile(R"({"w":{"dtype":"F8_E4M3","shape":[4],"data_offsets":[0,4]}})", "abcd"));
  const absl::Status status = OpenStatus(path);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("F8_E4M3"));
  EXPECT_THAT(status.message(), HasSubstr("'w'"));
}

}  // namespace
}  // namespace rollout::models
