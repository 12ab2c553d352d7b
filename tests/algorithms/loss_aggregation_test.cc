#include "algorithms/loss_aggregation.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace rollout::algorithms {
namespace {

const std::vector<std::string> kModes = {"token-mean", "seq-mean-token-sum", "seq-mean-token-mean",
                                         "seq-mean-token-sum-norm"};

at::Tensor Doubles(std::vector<double> values, std::vector<int64_t> shape) {
  return at::tensor(values, at::kDouble).reshape(shape);
}

// loss [[1, 2, 3, 4], [5, 6, 7, 8]] with mask [[1, 1, 1, 0], [1, 1, 0, 0]]: row sums 6 and 11,
// row token counts 3 and 2, 5 tokens in all, T = 4.
at::Tensor HandLoss() { return Doubles({1, 2, 3, 4, 5, 6, 7, 8}, {2, 4}); }
at::Tensor HandMask() { return Doubles({1, 1, 1, 0, 1, 1, 0, 0}, {2, 4}); }

double Aggregate(const at::Tensor& loss, const at::Tensor& mask, const std::string& mode,
                 double loss_scale_factor = 0) {
  absl::StatusOr<at::Tensor> out = AggregateLoss(loss, mask, mode, loss_scale_factor);
  EXPECT_TRUE(out.ok()) << mode << ": " << out.status();
  return out.ok() ? out->item<double>() : 0;
}

TEST(AggregateLoss, TokenMeanWeighsEveryTokenEqually) {
  // (6 + 11) / 5 = 3.4
  EXPECT_NEAR(Aggregate(HandLoss(), HandMask(), "token-mean"), 3.4, 1e-7);
}

TEST(AggregateLoss, SeqMeanTokenSumAveragesRowSums) {
  // (6 + 11) / 2 = 8.5
  EXPECT_NEAR(Aggregate(HandLoss(), HandMask(), "seq-mean-token-sum"), 8.5, 1e-12);
}

TEST(AggregateLoss, SeqMeanTokenMeanAveragesRowMeans) {
  // (6 / 3 + 11 / 2) / 2 = (2 + 5.5) / 2 = 3.75
  EXPECT_NEAR(Aggregate(HandLoss(), HandMask(), "seq-mean-token-mean"), 3.75, 1e-12);
}

TEST(AggregateLoss, SeqMeanTokenSumNormDividesTheBatchSumByTheHorizon) {
  // Default horizon T = 4: 17 / 4 = 4.25. Caller's horizon 10: 17 / 10 = 1.7.
  EXPECT_NEAR(Aggregate(HandLoss(), HandMask(), "seq-mean-token-sum-norm"), 4.25, 1e-12);
  EXPECT_NEAR(Aggregate(HandLoss(), HandMask(), "seq-mean-token-sum-norm", 10), 1.7, 1e-12);
}

TEST(AggregateLoss, LossScaleFactorOnlyAffectsSumNorm) {
  for (const char* mode : {"token-mean", "seq-mean-token-sum", "seq-mean-token-mean"}) {
    EXPECT_DOUBLE_EQ(Aggregate(HandLoss(), HandMask(), mode, 10),
                     Aggregate(HandLoss(), HandMask(), mode))
        << mode;
  }
}

TEST(AggregateLoss, MaskedTokensChangeNeitherLossNorGradient) {
  const at::Tensor mask = HandMask();
  const at::Tensor garbage = Doubles({0, 0, 0, 1e6, 0, 0, -3e5, 7}, {2, 4});
  for (const std::string& mode : kModes) {
    at::Tensor loss = HandLoss().requires_grad_(true);
    at::Tensor out = AggregateLoss(loss, mask, mode).value();
    out.backward();
    EXPECT_DOUBLE_EQ(out.item<double>(), Aggregate(HandLoss() + garbage, mask, mode)) << mode;
    EXPECT_TRUE(at::equal(loss.grad() * (1 - mask), at::zeros_like(mask))) << mode;
  }
}

TEST(AggregateLoss, AppendedEmptyRowsChangeNothing) {
  const at::Tensor loss = at::cat({HandLoss(), Doubles({9, 9, 9, 9, -4, 2, 0, 1}, {2, 4})});
  const at::Tensor mask = at::cat({HandMask(), at::zeros({2, 4}, at::kDouble)});
  for (const std::string& mode : kModes) {
    EXPECT_DOUBLE_EQ(Aggregate(loss, mask, mode), Aggregate(HandLoss(), HandMask(), mode)) << mode;
  }
}

TEST(AggregateLoss, AllMaskedGivesZeroWithZeroGradient) {
  for (const std::string& mode : kModes) {
    at::Tensor loss = HandLoss().requires_grad_(true);
    at::Tensor out = AggregateLoss(loss, at::zeros({2, 4}), mode).value();
    out.backward();
    EXPECT_EQ(out.item<double>(), 0.0) << mode;
    EXPECT_TRUE(at::equal(loss.grad(), at::zeros_like(loss))) << mode;
  }
}

TEST(AggregateLoss, EmptyBatchGivesZero) {
  for (const std::string& mode : kModes) {
    EXPECT_EQ(Aggregate(at::zeros({0, 4}, at::kDouble), at::zeros({0, 4}), mode), 0.0) << mode;
    EXPECT_EQ(Aggregate(at::zeros({3, 0}, at::kDouble), at::zeros({3, 0}), mode), 0.0) << mode;
  }
}

TEST(AggregateLoss, AcceptsBoolAndIntegerMasksAndKeepsTheLossDtype) {
  const at::Tensor loss = HandLoss().to(at::kFloat);
  for (at::ScalarType mask_dtype : {at::kBool, at::kLong, at::kFloat}) {
    at::Tensor out = AggregateLoss(loss, HandMask().to(mask_dtype), "seq-mean-token-mean").value();
    EXPECT_EQ(out.scalar_type(), at::kFloat);
    EXPECT_EQ(out.dim(), 0);
    EXPECT_NEAR(out.item<double>(), 3.75, 1e-6);
  }
}

TEST(AggregateLoss, UnknownModeListsTheValidOnes) {
  absl::StatusOr<at::Tensor> out = AggregateLoss(HandLoss(), HandMask(), "token-sum");
  ASSERT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(out.status().message().find("\"token-sum\""), std::string::npos) << out.status();
  for (const std::string& mode : kModes) {
    EXPECT_NE(out.status().message().find(mode), std::string::npos) << out.status();
  }
}

TEST(AggregateLoss, RejectsBadInputsNamingThem) {
  struct Case {
    at::Tensor loss;
    at::Tensor mask;
    double loss_scale_factor;
    std::string expected;
  };
  const at::Tensor nan_loss = Doubles({1, 2, NAN, 4, 5, 6, 7, 8}, {2, 4});
  const std::vector<Case> cases = {
      {HandLoss(), at::ones({2, 3}), 0, "does not match loss_mask [2, 3]"},
      {HandLoss(), at::ones({8}), 0, "loss_mask: expected a [B, T] tensor; got [8]"},
      {HandLoss().to(at::kLong), HandMask(), 0, "loss_mat: expected a floating dtype"},
      {nan_loss, HandMask(), 0, "loss_mat: 1 NaN and 0 infinite values (first at [0, 2])"},
      {HandLoss(), Doubles({1, 1, 1, INFINITY, 1, 1, 0, 0}, {2, 4}), 0, "loss_mask: 0 NaN and 1"},
      {HandLoss(), HandMask(), -1, "loss_scale_factor: must be finite and >= 0"},
      {HandLoss(), HandMask(), NAN, "loss_scale_factor"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<at::Tensor> out =
        AggregateLoss(c.loss, c.mask, "seq-mean-token-sum-norm", c.loss_scale_factor);
    ASSERT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument) << c.expected;
    EXPECT_NE(out.status().message().find(c.expected), std::string::npos) << out.status();
  }
}

TEST(CheckTokenLossInputs, NamesTheFirstOffendingTensor) {
  const at::Tensor mask = HandMask();
  EXPECT_TRUE(
      CheckTokenLossInputs(mask, "response_mask", {{"a", HandLoss()}, {"b", HandLoss()}}).ok());
  absl::Status status = CheckTokenLossInputs(mask, "response_mask",
                                             {{"a", HandLoss()}, {"b", HandLoss().slice(1, 0, 3)}});
  EXPECT_EQ(status.message(), "b: shape [2, 3] does not match response_mask [2, 4]");
  status = CheckTokenLossInputs(mask, "response_mask", {{"a", HandLoss()}, {"b", at::Tensor()}});
  EXPECT_EQ(status.message(), "b: missing");
}

TEST(CheckTokenLossInputs, RejectsATensorOnAnotherDevice) {
  // A meta tensor stands in for a GPU one: the device is compared before any data is read.
  const at::Tensor elsewhere = at::empty({2, 4}, at::TensorOptions().device(at::kMeta));
  EXPECT_EQ(CheckTokenLossInputs(HandMask(), "response_mask", {{"values", elsewhere}}).message(),
            "values: on meta but response_mask on cpu");
}

}  // namespace
}  // namespace rollout::algorithms
