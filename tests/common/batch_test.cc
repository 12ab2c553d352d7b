#include "common/batch.h"

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace rollout {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Rows 0..n-1: "ids" [n, 2] int64 with row i = {10 i, 10 i + 1}; "text" = "r<i>".
Batch MakeBatch(int64_t n) {
  Batch batch;
  at::Tensor ids = at::arange(n, at::kLong).unsqueeze(1) * 10 + at::arange(2, at::kLong);
  EXPECT_TRUE(batch.AddTensor("ids", ids).ok());
  std::vector<std::string> text;
  for (int64_t i = 0; i < n; ++i) text.push_back("r" + std::to_string(i));
  EXPECT_TRUE(batch.AddStrings("text", text).ok());
  batch.SetMeta("temperature", "1.0");
  return batch;
}

std::vector<int64_t> FirstColumn(const Batch& batch) {
  at::Tensor ids = batch.Tensor("ids").value();
  std::vector<int64_t> out;
  for (int64_t i = 0; i < ids.size(0); ++i) out.push_back(ids[i][0].item<int64_t>());
  return out;
}

TEST(Batch, FirstColumnSetsSizeAndOthersMustMatch) {
  Batch batch;
  EXPECT_EQ(batch.size(), 0);
  ASSERT_TRUE(batch.AddTensor("a", at::zeros({3, 4})).ok());
  EXPECT_EQ(batch.size(), 3);
  absl::Status status = batch.AddTensor("b", at::zeros({2}));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("'b' has 2 rows but the batch has 3"));
  EXPECT_FALSE(batch.AddStrings("s", {"x"}).ok());
  EXPECT_TRUE(batch.AddStrings("s", {"x", "y", "z"}).ok());
}

TEST(Batch, ScalarTensorIsRejected) {
  Batch batch;
  EXPECT_EQ(batch.AddTensor("x", at::scalar_tensor(1.0)).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(Batch, MissingKeysNameWhatExists) {
  Batch batch = MakeBatch(2);
  absl::StatusOr<at::Tensor> missing = batch.Tensor("logits");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("tensors: ids"));
  EXPECT_EQ(batch.Strings("ids").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(batch.Meta("absent"), "");
}

TEST(Batch, SelectKeepsNamedColumnsAndMeta) {
  Batch batch = MakeBatch(3);
  absl::StatusOr<Batch> picked = batch.Select({"text"});
  ASSERT_TRUE(picked.ok());
  EXPECT_FALSE(picked->HasTensor("ids"));
  EXPECT_TRUE(picked->HasStrings("text"));
  EXPECT_EQ(picked->size(), 3);
  EXPECT_EQ(picked->Meta("temperature"), "1.0");
  EXPECT_EQ(batch.Select({"nope"}).status().code(), absl::StatusCode::kNotFound);
}

TEST(Batch, UnionMergesAndChecksConflicts) {
  Batch a = MakeBatch(2);
  Batch b;
  ASSERT_TRUE(b.AddTensor("scores", at::ones({2})).ok());
  ASSERT_TRUE(b.AddTensor("ids", a.Tensor("ids").value().clone()).ok());  // equal: allowed
  ASSERT_TRUE(a.Union(b).ok());
  EXPECT_TRUE(a.HasTensor("scores"));

  Batch conflicting;
  ASSERT_TRUE(conflicting.AddTensor("scores", at::zeros({2})).ok());
  absl::Status status = a.Union(conflicting);
  EXPECT_THAT(std::string(status.message()), HasSubstr("'scores' differs"));

  Batch wrong_size = MakeBatch(3);
  EXPECT_EQ(a.Union(wrong_size).code(), absl::StatusCode::kInvalidArgument);

  Batch meta_conflict;
  meta_conflict.SetMeta("temperature", "0.5");
  EXPECT_FALSE(a.Union(meta_conflict).ok());
}

TEST(Batch, UnionIntoEmptyTakesOtherSize) {
  Batch empty;
  ASSERT_TRUE(empty.Union(MakeBatch(4)).ok());
  EXPECT_EQ(empty.size(), 4);
}

TEST(Batch, RepeatInterleavedAndTiled) {
  Batch batch = MakeBatch(2);
  absl::StatusOr<Batch> interleaved = batch.Repeat(3, /*interleave=*/true);
  ASSERT_TRUE(interleaved.ok());
  EXPECT_THAT(FirstColumn(*interleaved), ElementsAre(0, 0, 0, 10, 10, 10));
  EXPECT_THAT(interleaved->Strings("text").value(), ElementsAre("r0", "r0", "r0", "r1", "r1", "r1"));
  absl::StatusOr<Batch> tiled = batch.Repeat(2, /*interleave=*/false);
  ASSERT_TRUE(tiled.ok());
  EXPECT_THAT(FirstColumn(*tiled), ElementsAre(0, 10, 0, 10));
  EXPECT_FALSE(batch.Repeat(0).ok());
}

TEST(Batch, ReorderPermutesEveryColumn) {
  Batch batch = MakeBatch(3);
  absl::StatusOr<Batch> reordered = batch.Reorder({2, 0, 1});
  ASSERT_TRUE(reordered.ok());
  EXPECT_THAT(FirstColumn(*reordered), ElementsAre(20, 0, 10));
  EXPECT_THAT(reordered->Strings("text").value(), ElementsAre("r2", "r0", "r1"));
  absl::StatusOr<Batch> bad = batch.Reorder({0, 3});
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("index 3 at position 1"));
  EXPECT_FALSE(batch.Reorder({-1}).ok());
}

TEST(Batch, SliceBounds) {
  Batch batch = MakeBatch(4);
  absl::StatusOr<Batch> middle = batch.Slice(1, 3);
  ASSERT_TRUE(middle.ok());
  EXPECT_THAT(FirstColumn(*middle), ElementsAre(10, 20));
  EXPECT_FALSE(batch.Slice(3, 2).ok());
  EXPECT_FALSE(batch.Slice(0, 5).ok());
  EXPECT_EQ(batch.Slice(2, 2)->size(), 0);
}

TEST(Batch, ConcatJoinsRowsAndChecksSchemas) {
  absl::StatusOr<Batch> joined = Batch::Concat({MakeBatch(2), MakeBatch(1)});
  ASSERT_TRUE(joined.ok());
  EXPECT_EQ(joined->size(), 3);
  EXPECT_THAT(FirstColumn(*joined), ElementsAre(0, 10, 0));
  EXPECT_THAT(joined->Strings("text").value(), ElementsAre("r0", "r1", "r0"));

  Batch other_names;
  ASSERT_TRUE(other_names.AddTensor("x", at::zeros({1, 2}, at::kLong)).ok());
  EXPECT_FALSE(Batch::Concat({MakeBatch(1), other_names}).ok());

  Batch other_shape;
  ASSERT_TRUE(other_shape.AddTensor("ids", at::zeros({1, 3}, at::kLong)).ok());
  ASSERT_TRUE(other_shape.AddStrings("text", {"q"}).ok());
  absl::StatusOr<Batch> bad = Batch::Concat({MakeBatch(1), other_shape});
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("cannot concat tensor 'ids'"));

  Batch other_dtype;
  ASSERT_TRUE(other_dtype.AddTensor("ids", at::zeros({1, 2}, at::kInt)).ok());
  ASSERT_TRUE(other_dtype.AddStrings("text", {"q"}).ok());
  EXPECT_FALSE(Batch::Concat({MakeBatch(1), other_dtype}).ok());

  EXPECT_EQ(Batch::Concat({})->size(), 0);
}

TEST(Batch, ChunkEvenSplitHasNoPadding) {
  absl::StatusOr<Batch::Chunks> chunks = MakeBatch(6).Chunk(3);
  ASSERT_TRUE(chunks.ok());
  EXPECT_EQ(chunks->padding, 0);
  ASSERT_EQ(chunks->parts.size(), 3u);
  EXPECT_THAT(FirstColumn(chunks->parts[1]), ElementsAre(20, 30));
}

TEST(Batch, ChunkPadsWithLeadingRowsAndRoundTrips) {
  Batch batch = MakeBatch(5);
  absl::StatusOr<Batch::Chunks> chunks = batch.Chunk(4);
  ASSERT_TRUE(chunks.ok());
  EXPECT_EQ(chunks->padding, 3);
  for (const Batch& part : chunks->parts) EXPECT_EQ(part.size(), 2);
  EXPECT_THAT(FirstColumn(chunks->parts[3]), ElementsAre(10, 20));  // padded rows 1, 2
  absl::StatusOr<Batch> joined = Batch::Concat(chunks->parts);
  ASSERT_TRUE(joined.ok());
  absl::StatusOr<Batch> restored = joined->Slice(0, batch.size());
  ASSERT_TRUE(restored.ok());
  EXPECT_TRUE(at::equal(restored->Tensor("ids").value(), batch.Tensor("ids").value()));
  EXPECT_EQ(restored->Strings("text").value(), batch.Strings("text").value());
}

TEST(Batch, ChunkMorePartsThanRowsRepeatsRows) {
  absl::StatusOr<Batch::Chunks> chunks = MakeBatch(2).Chunk(5);
  ASSERT_TRUE(chunks.ok());
  EXPECT_EQ(chunks->padding, 3);
  EXPECT_THAT(FirstColumn(chunks->parts[4]), ElementsAre(0));
  EXPECT_FALSE(MakeBatch(2).Chunk(0).ok());
}

TEST(Batch, OperationsNeverModifyTheirInput) {
  Batch batch = MakeBatch(3);
  at::Tensor before = batch.Tensor("ids").value().clone();
  ASSERT_TRUE(batch.Reorder({2, 1, 0}).ok());
  ASSERT_TRUE(batch.Repeat(2).ok());
  ASSERT_TRUE(batch.Chunk(2).ok());
  EXPECT_TRUE(at::equal(batch.Tensor("ids").value(), before));
  EXPECT_EQ(batch.size(), 3);
}

}  // namespace
}  // namespace rollout
