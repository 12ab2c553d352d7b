#include "common/batch_stream.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

namespace rollout {
namespace {

Batch MixedBatch(int64_t rows) {
  Batch batch;
  EXPECT_TRUE(batch.AddTensor("logits", at::randn({rows, 3, 5})).ok());
  EXPECT_TRUE(batch.AddTensor("ids", at::randint(0, 1000, {rows, 7}, at::kLong)).ok());
  EXPECT_TRUE(batch.AddTensor("mask", at::randn({rows, 7}) > 0).ok());
  EXPECT_TRUE(batch.AddTensor("half", at::randn({rows}).to(at::kBFloat16)).ok());
  std::vector<std::string> text(rows);
  for (int64_t i = 0; i < rows; ++i) text[i] = "row " + std::to_string(i) + " \xE2\x9C\x93";
  EXPECT_TRUE(batch.AddStrings("text", text).ok());
  batch.SetMeta("step", "4");
  return batch;
}

std::vector<wire::BatchChunk> Stream(const Batch& batch, int64_t chunk_bytes) {
  std::vector<wire::BatchChunk> chunks;
  absl::Status status = WriteBatch(
      batch, [&](wire::BatchChunk&& chunk) { chunks.push_back(std::move(chunk)); return true; },
      chunk_bytes);
  EXPECT_TRUE(status.ok()) << status;
  return chunks;
}

void ExpectSameBatch(const Batch& a, const Batch& b) {
  ASSERT_EQ(a.size(), b.size());
  ASSERT_EQ(a.tensors().size(), b.tensors().size());
  for (const auto& [name, tensor] : a.tensors()) {
    EXPECT_TRUE(at::equal(tensor, b.Tensor(name).value())) << name;
  }
  EXPECT_EQ(a.strings(), b.strings());
  EXPECT_EQ(a.meta(), b.meta());
}

class BatchStreamChunkSize : public ::testing::TestWithParam<int64_t> {};

TEST_P(BatchStreamChunkSize, RoundTripsAcrossTensorBoundaries) {
  Batch batch = MixedBatch(9);
  std::vector<wire::BatchChunk> chunks = Stream(batch, GetParam());
  for (const wire::BatchChunk& chunk : chunks) {
    EXPECT_LE(static_cast<int64_t>(chunk.data().size()), GetParam());
  }
  BatchAssembler assembler;
  for (const wire::BatchChunk& chunk : chunks) ASSERT_TRUE(assembler.Add(chunk).ok());
  absl::StatusOr<Batch> back = assembler.Finish();
  ASSERT_TRUE(back.ok()) << back.status();
  ExpectSameBatch(batch, *back);
}

INSTANTIATE_TEST_SUITE_P(Sizes, BatchStreamChunkSize, ::testing::Values(1, 7, 64, 1 << 20));

TEST(BatchStream, EmptyBatchIsOneHeaderChunk) {
  std::vector<wire::BatchChunk> chunks = Stream(Batch(), 1024);
  ASSERT_EQ(chunks.size(), 1u);
  BatchAssembler assembler;
  ASSERT_TRUE(assembler.Add(chunks[0]).ok());
  absl::StatusOr<Batch> back = assembler.Finish();
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->size(), 0);
}

TEST(BatchStream, TruncatedStreamIsDataLoss) {
  std::vector<wire::BatchChunk> chunks = Stream(MixedBatch(4), 16);
  chunks.pop_back();
  BatchAssembler assembler;
  for (const wire::BatchChunk& chunk : chunks) ASSERT_TRUE(assembler.Add(chunk).ok());
  EXPECT_EQ(assembler.Finish().status().code(), absl::StatusCode::kDataLoss);
}

TEST(BatchStream, ExtraDataIsDataLoss) {
  std::vector<wire::BatchChunk> chunks = Stream(MixedBatch(2), 1 << 20);
  wire::BatchChunk extra;
  extra.set_data("xx");
  BatchAssembler assembler;
  ASSERT_TRUE(assembler.Add(chunks[0]).ok());
  EXPECT_EQ(assembler.Add(extra).code(), absl::StatusCode::kDataLoss);
}

TEST(BatchStream, MissingOrRepeatedHeaderIsAnError) {
  wire::BatchChunk data_only;
  data_only.set_data("abc");
  BatchAssembler no_header;
  EXPECT_EQ(no_header.Add(data_only).code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(BatchAssembler().Finish().status().code(), absl::StatusCode::kFailedPrecondition);

  std::vector<wire::BatchChunk> chunks = Stream(Batch(), 1024);
  BatchAssembler twice;
  ASSERT_TRUE(twice.Add(chunks[0]).ok());
  EXPECT_EQ(twice.Add(chunks[0]).code(), absl::StatusCode::kDataLoss);
}

TEST(BatchStream, HeaderWithWrongRowCountIsDataLoss) {
  wire::BatchChunk chunk;
  chunk.mutable_header()->set_size(3);
  wire::TensorSpec* spec = chunk.mutable_header()->add_tensors();
  spec->set_name("x");
  spec->set_dtype(wire::FLOAT32);
  spec->add_shape(2);
  BatchAssembler assembler;
  EXPECT_EQ(assembler.Add(chunk).code(), absl::StatusCode::kDataLoss);
}

TEST(BatchStream, BrokenSinkStopsWithUnavailable) {
  absl::Status status = WriteBatch(
      MixedBatch(3), [](wire::BatchChunk&&) { return false; }, 8);
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace rollout
