#include "common/tensor_proto.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

namespace rollout {
namespace {

class TensorProtoRoundTrip : public ::testing::TestWithParam<c10::ScalarType> {};

TEST_P(TensorProtoRoundTrip, KeepsDtypeShapeAndBits) {
  const c10::ScalarType type = GetParam();
  at::Tensor source = (at::randn({3, 5}) * 100).to(type);
  if (type == at::kBool) source = at::randn({3, 5}) > 0;
  absl::StatusOr<wire::TensorProto> proto = TensorToProto(source);
  ASSERT_TRUE(proto.ok()) << proto.status();
  EXPECT_EQ(proto->data().size(), source.nbytes());
  absl::StatusOr<at::Tensor> back = TensorFromProto(*proto);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->scalar_type(), type);
  EXPECT_EQ(back->sizes(), source.sizes());
  EXPECT_TRUE(at::equal(*back, source));
}

INSTANTIATE_TEST_SUITE_P(EveryWireDtype, TensorProtoRoundTrip,
                         ::testing::Values(at::kFloat, at::kBFloat16, at::kHalf, at::kLong,
                                           at::kInt, at::kByte, at::kBool));

TEST(TensorProto, NonContiguousTensorIsPackedInLogicalOrder) {
  at::Tensor source = at::arange(12, at::kInt).reshape({3, 4}).t();
  ASSERT_FALSE(source.is_contiguous());
  absl::StatusOr<at::Tensor> back = TensorFromProto(TensorToProto(source).value());
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(at::equal(*back, source));
}

TEST(TensorProto, EmptyAndScalarTensors) {
  at::Tensor empty = at::zeros({0, 7});
  EXPECT_EQ(TensorFromProto(TensorToProto(empty).value())->sizes(), empty.sizes());
  at::Tensor scalar = at::scalar_tensor(3.5);
  absl::StatusOr<at::Tensor> back = TensorFromProto(TensorToProto(scalar).value());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->dim(), 0);
  EXPECT_EQ(back->item<float>(), 3.5f);
}

TEST(TensorProto, UnsupportedDtypeIsAnError) {
  absl::StatusOr<wire::TensorProto> proto = TensorToProto(at::zeros({2}, at::kDouble));
  EXPECT_EQ(proto.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(TensorProto, ByteCountMismatchIsAnError) {
  wire::TensorProto proto = TensorToProto(at::zeros({4})).value();
  proto.mutable_data()->pop_back();
  absl::StatusOr<at::Tensor> back = TensorFromProto(proto);
  EXPECT_EQ(back.status().code(), absl::StatusCode::kInvalidArgument);
  proto.set_dtype(wire::DTYPE_UNSPECIFIED);
  EXPECT_FALSE(TensorFromProto(proto).ok());
}

}  // namespace
}  // namespace rollout
