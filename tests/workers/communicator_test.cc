// The collectives on the CPU (Gloo) with ranks as threads of this process, meeting
// through an in-memory rendezvous: sums, broadcasts of every dtype a model uses,
// gradient averaging with and without gradients on some ranks and in buckets, and the
// errors.
#include "workers/communicator.h"

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "tests/workers/gloo_ranks.h"
#include "workers/gradient_sync.h"

namespace rollout::workers {
namespace {

using ::testing::HasSubstr;

using testing::GroupOf;
using testing::InMemoryRendezvous;
using testing::OnRanks;

TEST(GlooCommunicator, SumsEveryTensorOverTheRanks) {
  OnRanks(3, [](int rank, Communicator& communicator) {
    at::Tensor a = at::full({4}, static_cast<float>(rank + 1));
    at::Tensor b = at::arange(6, at::kFloat).view({2, 3}) * (rank + 1);
    at::Tensor empty = at::zeros({0}, at::kFloat);
    ASSERT_TRUE(communicator.AllReduceSum({a, b, empty}).ok());
    EXPECT_TRUE(at::equal(a, at::full({4}, 6.0f)));
    EXPECT_TRUE(at::equal(b, at::arange(6, at::kFloat).view({2, 3}) * 6));
  });
}

TEST(GlooCommunicator, RefusesTensorsItCannotReduce) {
  OnRanks(2, [](int rank, Communicator& communicator) {
    const absl::Status status = communicator.AllReduceSum({at::zeros({2}, at::kDouble)});
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
    EXPECT_THAT(status.message(), HasSubstr("contiguous float32 on the CPU, got Double"));
  });
}

TEST(GlooCommunicator, BroadcastCopiesTheRootsTensorsOfEveryModelDtype) {
  OnRanks(3, [](int rank, Communicator& communicator) {
    // Rank 1 sends; the others start from zeros.
    const double fill = rank == 1 ? 1.0 : 0.0;
    at::Tensor f32 = at::arange(6, at::kFloat).view({2, 3}) * fill;
    at::Tensor bf16 = at::full({5}, -2.5 * fill, at::kBFloat16);
    at::Tensor f16 = at::full({3, 1}, 0.125 * fill, at::kHalf);
    at::Tensor i64 = at::full({2}, static_cast<int64_t>(fill) << 40, at::kLong);
    at::Tensor empty = at::zeros({0}, at::kFloat);
    ASSERT_TRUE(communicator.Broadcast({f32, bf16, f16, i64, empty}, /*root=*/1).ok());
    EXPECT_TRUE(at::equal(f32, at::arange(6, at::kFloat).view({2, 3}))) << "rank " << rank;
    EXPECT_TRUE(at::equal(bf16, at::full({5}, -2.5, at::kBFloat16))) << "rank " << rank;
    EXPECT_TRUE(at::equal(f16, at::full({3, 1}, 0.125, at::kHalf))) << "rank " << rank;
    EXPECT_TRUE(at::equal(i64, at::full({2}, int64_t{1} << 40, at::kLong))) << "rank " << rank;
  });
}

TEST(GlooCommunicator, BroadcastRefusesWhatItCannotSendBeforeSendingAnything) {
  OnRanks(2, [](int rank, Communicator& communicator) {
    const at::Tensor strided = at::zeros({4, 4}, at::kFloat).t();
    const absl::Status not_contiguous = communicator.Broadcast({at::zeros({2}), strided}, 0);
    EXPECT_TRUE(absl::IsInvalidArgument(not_contiguous)) << not_contiguous;
    EXPECT_THAT(not_contiguous.message(), HasSubstr("tensor 1 must be contiguous on cpu"));
    const absl::Status boolean = communicator.Broadcast({at::zeros({2}, at::kBool)}, 0);
    EXPECT_TRUE(absl::IsInvalidArgument(boolean)) << boolean;
    EXPECT_THAT(boolean.message(), HasSubstr("got Bool on cpu"));
    const absl::Status root = communicator.Broadcast({at::zeros({2})}, 2);
    EXPECT_TRUE(absl::IsInvalidArgument(root)) << root;
    EXPECT_THAT(root.message(), HasSubstr("root 2 is not in a world of 2"));
    // Nothing moved: the group still works.
    at::Tensor value = at::full({1}, static_cast<float>(rank + 7));
    ASSERT_TRUE(communicator.Broadcast({value}, 0).ok());
    EXPECT_EQ(value.item<float>(), 7.0f);
  });
}

TEST(GradientSync, AveragesAndKeepsParametersNoRankHasAGradientForWithout) {
  OnRanks(2, [](int rank, Communicator& communicator) {
    at::Tensor everywhere = at::zeros({2, 2}, at::kFloat);
    at::Tensor on_rank_one = at::zeros({3}, at::kFloat);
    at::Tensor nowhere = at::zeros({5}, at::kFloat);
    at::Tensor bf16 = at::zeros({2}, at::kBFloat16);
    everywhere.mutable_grad() = at::full({2, 2}, rank == 0 ? 1.0f : 3.0f);
    if (rank == 1) on_rank_one.mutable_grad() = at::full({3}, 4.0f);
    bf16.mutable_grad() = at::full({2}, rank == 0 ? 0.5 : 1.5, at::kBFloat16);
    ASSERT_TRUE(AverageGradients(communicator, {&everywhere, &on_rank_one, &nowhere, &bf16}).ok());
    EXPECT_TRUE(at::equal(everywhere.grad(), at::full({2, 2}, 2.0f)));
    ASSERT_TRUE(on_rank_one.grad().defined()) << "rank " << rank;
    EXPECT_TRUE(at::equal(on_rank_one.grad(), at::full({3}, 2.0f)));
    EXPECT_FALSE(nowhere.grad().defined());
    EXPECT_EQ(bf16.grad().scalar_type(), at::kBFloat16);
    EXPECT_TRUE(at::equal(bf16.grad(), at::full({2}, 1.0, at::kBFloat16)));
  });
}

// Buckets of 6 elements: gradients of 2 and 3 elements share one, 4 and 1 the next; 8
// (float32: in place), 7 (bfloat16: through a buffer of its own) and 9 (only rank 2
// has it) go alone. Rank r's gradient is (r + 1) x (arange + 10 i), so the mean is
// twice arange + 10 i, exact in either dtype.
TEST(GradientSync, AveragesInBucketsAndLargeGradientsOnTheirOwn) {
  OnRanks(3, [](int rank, Communicator& communicator) {
    const std::vector<std::pair<int64_t, at::ScalarType>> layout = {
        {2, at::kFloat}, {3, at::kFloat}, {8, at::kFloat}, {4, at::kFloat}, {7, at::kBFloat16}, {1, at::kFloat},
        {9, at::kFloat}};
    const size_t only_on_rank_two = 6;
    std::vector<at::Tensor> tensors;
    for (const auto& [numel, dtype] : layout) tensors.push_back(at::zeros({numel}, dtype));
    std::vector<at::Tensor*> params;
    for (size_t i = 0; i < tensors.size(); ++i) {
      params.push_back(&tensors[i]);
      const at::Tensor base = at::arange(tensors[i].numel(), at::kFloat).add(10.0 * i);
      if (i == only_on_rank_two) {
        if (rank == 2) tensors[i].mutable_grad() = base.mul(3);
        continue;
      }
      tensors[i].mutable_grad() = base.mul(rank + 1).to(tensors[i].scalar_type());
    }
    const void* large_float32 = tensors[2].grad().data_ptr();
    ASSERT_TRUE(AverageGradients(communicator, params, /*bucket_elements=*/6).ok());
    for (size_t i = 0; i < tensors.size(); ++i) {
      const at::Tensor base = at::arange(tensors[i].numel(), at::kFloat).add(10.0 * i);
      const at::Tensor want = i == only_on_rank_two ? base : base.mul(2);
      ASSERT_TRUE(tensors[i].grad().defined()) << "rank " << rank << ", tensor " << i;
      EXPECT_EQ(tensors[i].grad().scalar_type(), tensors[i].scalar_type()) << "tensor " << i;
      EXPECT_TRUE(at::equal(tensors[i].grad().to(at::kFloat), want)) << "rank " << rank << ", tensor " << i;
    }
    EXPECT_EQ(tensors[2].grad().data_ptr(), large_float32) << "summed in place";
  });
}

TEST(Communicator, ARankOutsideTheWorldIsAnError) {
  InMemoryRendezvous rendezvous;
  const auto communicator = CreateCommunicator(GroupOf(2, 2), &rendezvous);
  EXPECT_TRUE(absl::IsInvalidArgument(communicator.status()));
  EXPECT_THAT(communicator.status().message(), HasSubstr("rank 2 is not in a world of 2"));
}

TEST(Communicator, APeerThatNeverComesIsAnErrorNamingTheGroup) {
  InMemoryRendezvous rendezvous;
  CommunicatorOptions options = GroupOf(0, 2, "lonely");
  options.timeout = absl::Milliseconds(300);
  const auto communicator = CreateCommunicator(options, &rendezvous);
  ASSERT_FALSE(communicator.ok());
  EXPECT_THAT(communicator.status().message(), HasSubstr("rank 0 of group lonely (2 ranks)"));
}

}  // namespace
}  // namespace rollout::workers
