// The weight sync by broadcast (Gloo, ranks as threads): rank 0's tensors land in the
// receivers' in place, a receiver whose tensors differ is an error on every rank with
// nothing overwritten, and who belongs to a weight-sync group from worker.init_roles'
// meta.
#include "workers/weight_broadcast.h"

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/workers/gloo_ranks.h"

namespace rollout::workers {
namespace {

using ::testing::HasSubstr;
using testing::OnRanks;

// A model's trained tensors: a bfloat16 matrix and a float32 vector, filled with
// `fill`.
struct TinyModel {
  at::Tensor matrix;
  at::Tensor vector;
  explicit TinyModel(double fill, int64_t rows = 3)
      : matrix(at::full({rows, 2}, fill, at::kBFloat16)), vector(at::full({4}, fill, at::kFloat)) {}
  NamedTensors Named() { return {{"layer.weight", &matrix}, {"layer.bias", &vector}}; }
};

TEST(WeightBroadcast, TheReceiversGetRankZerosTensorsInPlace) {
  OnRanks(3, [](int rank, Communicator& group) {
    TinyModel model(rank == 0 ? 1.5 : 0.0);
    const void* matrix_storage = model.matrix.data_ptr();
    const absl::Status status = rank == 0 ? BroadcastNamedTensors(group, model.Named(), c10::Device(c10::kCPU))
                                          : ReceiveNamedTensors(group, model.Named(), c10::Device(c10::kCPU));
    ASSERT_TRUE(status.ok()) << status;
    EXPECT_TRUE(at::equal(model.matrix, at::full({3, 2}, 1.5, at::kBFloat16))) << "rank " << rank;
    EXPECT_TRUE(at::equal(model.vector, at::full({4}, 1.5f))) << "rank " << rank;
    EXPECT_EQ(model.matrix.data_ptr(), matrix_storage);
  });
}

TEST(WeightBroadcast, AReceiverWithOtherShapesFailsEveryRankAndKeepsItsTensors) {
  OnRanks(3, [](int rank, Communicator& group) {
    // Rank 2 holds a matrix of 5 rows where the sender's has 3.
    TinyModel model(rank == 0 ? 1.5 : 0.0, rank == 2 ? 5 : 3);
    const absl::Status status = rank == 0 ? BroadcastNamedTensors(group, model.Named(), c10::Device(c10::kCPU))
                                          : ReceiveNamedTensors(group, model.Named(), c10::Device(c10::kCPU));
    EXPECT_TRUE(absl::IsFailedPrecondition(status)) << "rank " << rank << ": " << status;
    if (rank == 0) {
      EXPECT_THAT(status.message(), HasSubstr("1 of the 2 rollout workers hold tensors that differ"));
    }
    if (rank == 2) {
      EXPECT_THAT(status.message(),
                  HasSubstr("tensor 0 differs: the actor sends 'layer.weight BFloat16 [3,2]', this rollout's model "
                            "has 'layer.weight BFloat16 [5,2]'"));
    }
    if (rank != 0) {
      EXPECT_TRUE(at::equal(model.vector, at::zeros({4}))) << "rank " << rank;
    }
  });
}

TEST(WeightBroadcast, AReceiverWithFewerTensorsSaysHowMany) {
  OnRanks(2, [](int rank, Communicator& group) {
    TinyModel model(1.0);
    NamedTensors named = model.Named();
    if (rank == 1) named.pop_back();
    const absl::Status status = rank == 0 ? BroadcastNamedTensors(group, named, c10::Device(c10::kCPU))
                                          : ReceiveNamedTensors(group, named, c10::Device(c10::kCPU));
    EXPECT_TRUE(absl::IsFailedPrecondition(status)) << status;
    if (rank == 1) {
      EXPECT_THAT(status.message(), HasSubstr("the actor sends 2 tensors, this rollout's model has 1"));
    }
  });
}

Batch InitAsking(const std::string& world) {
  Batch init;
  init.SetMeta("weight_sync_group", "weight_sync.train.generate");
  init.SetMeta("weight_sync_actor_pool", "train");
  init.SetMeta("weight_sync_rollout_pool", "generate");
  init.SetMeta("weight_sync_world_size", world);
  return init;
}

TEST(WeightSyncMembership, TheActorsRankZeroSendsAndTheRolloutWorkersFollowInRankOrder) {
  const Batch init = InitAsking("3");
  const auto sender = WeightSyncMembershipFrom(init, "train", 0);
  ASSERT_TRUE(sender.ok() && sender->has_value()) << sender.status();
  EXPECT_EQ((*sender)->group, "weight_sync.train.generate");
  EXPECT_EQ((*sender)->rank, 0);
  EXPECT_EQ((*sender)->world_size, 3);
  const auto second_rollout = WeightSyncMembershipFrom(init, "generate", 1);
  ASSERT_TRUE(second_rollout.ok() && second_rollout->has_value()) << second_rollout.status();
  EXPECT_EQ((*second_rollout)->rank, 2);
  // The actor's other ranks, other pools, and inits that ask for no group stay out.
  EXPECT_FALSE(WeightSyncMembershipFrom(init, "train", 1)->has_value());
  EXPECT_FALSE(WeightSyncMembershipFrom(init, "critic", 0)->has_value());
  EXPECT_FALSE(WeightSyncMembershipFrom(Batch(), "generate", 0)->has_value());
}

TEST(WeightSyncMembership, AWorldThatDoesNotFitIsAnError) {
  const auto beyond = WeightSyncMembershipFrom(InitAsking("2"), "generate", 1);
  EXPECT_TRUE(absl::IsInvalidArgument(beyond.status())) << beyond.status();
  EXPECT_THAT(beyond.status().message(), HasSubstr("rollout rank 1 of pool generate does not fit a world of 2"));
  const auto malformed = WeightSyncMembershipFrom(InitAsking("two"), "generate", 0);
  EXPECT_TRUE(absl::IsInvalidArgument(malformed.status())) << malformed.status();
}

}  // namespace
}  // namespace rollout::workers
