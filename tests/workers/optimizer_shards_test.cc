// ZeRO-1 (workers/optimizer_shards.h) on ranks that are threads joined over Gloo: a
// sharded optimizer takes exactly the unsharded steps, bit for bit, while each rank
// keeps the state of its share only; its checkpoint is the unsharded one's, and loads
// on a group of another size.
#include "workers/optimizer_shards.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "common/file_util.h"
#include "models/safetensors.h"
#include "tests/support/temp_dir.h"
#include "tests/workers/gloo_ranks.h"
#include "workers/gradient_sync.h"

namespace rollout::workers {
namespace {

using testing::OnRanks;

// Deterministic values of a given shape (no shared random generator: the ranks are
// threads), different for every `seed`.
at::Tensor Values(at::IntArrayRef shape, double seed) {
  int64_t numel = 1;
  for (int64_t size : shape) numel *= size;
  return at::arange(numel, at::kDouble).mul(0.37 + seed).add(seed * 1.3).sin().reshape(shape).to(at::kFloat);
}

// Five trained tensors: bfloat16 ones (stepped through float32 masters) beside float32
// ones, and one (index 3) that never gets a gradient.
constexpr int kNeverStepped = 3;

struct Model {
  Model() {
    const std::vector<std::pair<std::vector<int64_t>, at::ScalarType>> layout = {
        {{7, 5}, at::kBFloat16}, {{13}, at::kFloat}, {{4, 4, 2}, at::kBFloat16}, {{3}, at::kFloat}, {{6}, at::kBFloat16}};
    for (size_t i = 0; i < layout.size(); ++i) {
      tensors.push_back(Values(layout[i].first, static_cast<double>(i)).to(layout[i].second).set_requires_grad(true));
    }
  }
  std::vector<at::Tensor*> Params() {
    std::vector<at::Tensor*> params;
    for (at::Tensor& tensor : tensors) params.push_back(&tensor);
    return params;
  }
  std::vector<std::string> Names() const { return {"w0", "w1", "w2", "w3", "w4"}; }
  std::vector<at::Tensor> tensors;
};

AdamWOptions Options() {
  AdamWOptions options;
  options.lr = 0.05;
  options.weight_decay = 0.1;
  return options;
}

// One data-parallel optimizer step: each rank's own gradients (different per rank and
// step), averaged, stepped, and with sharding copied from the owners.
void TrainStep(Communicator& group, Model& model, AdamW& optimizer, int step) {
  std::vector<at::Tensor*> params = model.Params();
  for (size_t i = 0; i < params.size(); ++i) {
    if (static_cast<int>(i) == kNeverStepped) continue;
    params[i]->mutable_grad() = Values(params[i]->sizes(), 10.0 * step + 3.0 * group.rank() + i)
                                    .to(params[i]->scalar_type());
  }
  optimizer.WidenGradients();
  ASSERT_TRUE(AverageGradients(group, params).ok());
  optimizer.Step();
  if (optimizer.sharded()) {
    ASSERT_TRUE(BroadcastStepped(group, optimizer).ok());
  }
  optimizer.ZeroGrad();
}

void ExpectSameState(const AdamW::State& got, const AdamW::State& want, size_t index) {
  ASSERT_EQ(got.step.defined(), want.step.defined()) << "parameter " << index;
  if (!want.step.defined()) return;
  EXPECT_TRUE(at::equal(got.exp_avg.cpu(), want.exp_avg.cpu())) << "exp_avg of parameter " << index;
  EXPECT_TRUE(at::equal(got.exp_avg_sq.cpu(), want.exp_avg_sq.cpu())) << "exp_avg_sq of parameter " << index;
  EXPECT_TRUE(at::equal(got.step.cpu(), want.step.cpu())) << "step of parameter " << index;
  ASSERT_EQ(got.master.defined(), want.master.defined()) << "parameter " << index;
  if (want.master.defined()) {
    EXPECT_TRUE(at::equal(got.master.cpu(), want.master.cpu())) << "master of parameter " << index;
  }
}

TEST(OptimizerShards, BalancedOwnersGiveEachRankConsecutiveTensorsOfAboutEqualSize) {
  at::Tensor a = at::zeros({10}), b = at::zeros({10}), c = at::zeros({10}), d = at::zeros({10});
  EXPECT_EQ(BalancedOwners({&a, &b, &c, &d}, 2), (std::vector<int>{0, 0, 1, 1}));
  EXPECT_EQ(BalancedOwners({&a, &b, &c, &d}, 1), (std::vector<int>{0, 0, 0, 0}));
  // A tensor goes to the rank its middle element falls in.
  at::Tensor large = at::zeros({100}), one = at::zeros({1});
  EXPECT_EQ(BalancedOwners({&large, &one, &one, &one}, 2), (std::vector<int>{0, 1, 1, 1}));
  // More ranks than tensors: some own nothing.
  EXPECT_EQ(BalancedOwners({&a, &b}, 4), (std::vector<int>{1, 3}));
  at::Tensor empty = at::zeros({0});
  EXPECT_EQ(BalancedOwners({&empty, &empty}, 3), (std::vector<int>{0, 0}));
}

TEST(OptimizerShards, NoGroupOrAGroupOfOneLeavesTheOptimizerUnsharded) {
  Model model;
  EXPECT_TRUE(ShardsFor(model.Params(), nullptr).owners.empty());
  OnRanks(1, [&](int, Communicator& group) { EXPECT_TRUE(ShardsFor(model.Params(), &group).owners.empty()); });
}

TEST(OptimizerShards, ShareOfSaysWhatThisRankSteps) {
  OnRanks(2, [](int rank, Communicator& group) {
    Model model;  // 35, 13, 32, 3 and 6 elements: rank 0 steps the first two, rank 1 the rest
    AdamW sharded(model.Params(), Options(), ShardsFor(model.Params(), &group));
    EXPECT_EQ(ShareOf(sharded), rank == 0 ? "optimizer state sharded over 2 ranks (ZeRO-1): rank 0 steps 2 of 5 "
                                            "tensors, 48 of 89 elements (53.9%)"
                                          : "optimizer state sharded over 2 ranks (ZeRO-1): rank 1 steps 3 of 5 "
                                            "tensors, 41 of 89 elements (46.1%)");
  });
}

TEST(OptimizerShards, ShardedStepsEqualUnshardedOnesBitForBitWithEachRankHoldingItsShare) {
  OnRanks(3, [](int rank, Communicator& group) {
    Model whole_model, sharded_model;
    AdamW whole(whole_model.Params(), Options());
    AdamW sharded(sharded_model.Params(), Options(), ShardsFor(sharded_model.Params(), &group));
    ASSERT_TRUE(sharded.sharded());
    for (int step = 0; step < 3; ++step) {
      TrainStep(group, whole_model, whole, step);
      TrainStep(group, sharded_model, sharded, step);
    }
    for (size_t i = 0; i < whole_model.tensors.size(); ++i) {
      EXPECT_TRUE(at::equal(sharded_model.tensors[i], whole_model.tensors[i])) << "rank " << rank << ", tensor " << i;
      // Only the owner keeps state, and nobody for the tensor without a gradient.
      const bool stepped = static_cast<int>(i) != kNeverStepped;
      EXPECT_EQ(sharded.states()[i].step.defined(), stepped && sharded.Owns(i)) << "rank " << rank << ", tensor " << i;
    }
    absl::StatusOr<std::vector<AdamW::State>> gathered = GatherStates(group, sharded);
    ASSERT_TRUE(gathered.ok()) << gathered.status();
    if (rank != 0) {
      EXPECT_TRUE(gathered->empty());
      return;
    }
    ASSERT_EQ(gathered->size(), whole.states().size());
    for (size_t i = 0; i < gathered->size(); ++i) ExpectSameState((*gathered)[i], whole.states()[i], i);
  });
}

TEST(OptimizerShards, EveryRankOwnsPartOfTheStateAndNoneAllOfIt) {
  OnRanks(3, [](int rank, Communicator& group) {
    Model model;
    AdamW sharded(model.Params(), Options(), ShardsFor(model.Params(), &group));
    TrainStep(group, model, sharded, 0);
    int64_t held = 0;
    int64_t trained = 0;
    for (size_t i = 0; i < model.tensors.size(); ++i) {
      if (sharded.states()[i].step.defined()) held += model.tensors[i].numel();
      if (static_cast<int>(i) != kNeverStepped) trained += model.tensors[i].numel();
    }
    EXPECT_GT(held, 0) << "rank " << rank;
    EXPECT_LT(held, trained) << "rank " << rank;
  });
}

TEST(OptimizerShards, ACheckpointOfShardedStateIsTheUnshardedOneAndResumesOnAnotherGroupSize) {
  rollout::testing::TempDir dir("optimizer_shards");
  CheckpointParts optimizer_only;
  optimizer_only.optimizer = true;
  std::vector<at::Tensor> trained_weights;
  OnRanks(3, [&](int rank, Communicator& group) {
    Model whole_model, sharded_model;
    AdamW whole(whole_model.Params(), Options());
    AdamW sharded(sharded_model.Params(), Options(), ShardsFor(sharded_model.Params(), &group));
    for (int step = 0; step < 2; ++step) {
      TrainStep(group, whole_model, whole, step);
      TrainStep(group, sharded_model, sharded, step);
    }
    RoleCheckpoint role;
    role.optimizer = &sharded;
    role.trainable_names = sharded_model.Names();
    ASSERT_TRUE(GatherForSave(&group, optimizer_only, role).ok());
    if (rank != 0) return;
    ASSERT_TRUE(SaveRoleCheckpoint(role, optimizer_only, dir.Path("sharded")).ok());
    RoleCheckpoint unsharded;
    unsharded.optimizer = &whole;
    unsharded.trainable_names = whole_model.Names();
    ASSERT_TRUE(SaveRoleCheckpoint(unsharded, optimizer_only, dir.Path("whole")).ok());
    for (const at::Tensor& tensor : sharded_model.tensors) trained_weights.push_back(tensor.detach().clone());
  });
  ASSERT_EQ(trained_weights.size(), 5u);

  // The two files hold the same tensors, bit for bit.
  auto sharded_file = models::SafetensorsReader::OpenFile(JoinPath(dir.Path("sharded"), kOptimizerFile));
  auto whole_file = models::SafetensorsReader::OpenFile(JoinPath(dir.Path("whole"), kOptimizerFile));
  ASSERT_TRUE(sharded_file.ok() && whole_file.ok());
  ASSERT_EQ((*sharded_file)->Names(), (*whole_file)->Names());
  EXPECT_EQ((*whole_file)->Names().size(), 4u * 3 + 3u * 1);  // three entries a tensor, a master for bfloat16
  for (const std::string& name : (*whole_file)->Names()) {
    EXPECT_TRUE(at::equal((*sharded_file)->Load(name).value(), (*whole_file)->Load(name).value())) << name;
  }

  // On two ranks, each loads its share and the run goes on as an unsharded one does.
  OnRanks(2, [&](int rank, Communicator& group) {
    Model whole_model, sharded_model;
    for (size_t i = 0; i < trained_weights.size(); ++i) {
      whole_model.tensors[i].detach().copy_(trained_weights[i]);
      sharded_model.tensors[i].detach().copy_(trained_weights[i]);
    }
    AdamW whole(whole_model.Params(), Options());
    AdamW sharded(sharded_model.Params(), Options(), ShardsFor(sharded_model.Params(), &group));
    RoleCheckpoint unsharded;
    unsharded.optimizer = &whole;
    unsharded.trainable_names = whole_model.Names();
    RoleCheckpoint role;
    role.optimizer = &sharded;
    role.trainable_names = sharded_model.Names();
    ASSERT_TRUE(LoadRoleCheckpoint(unsharded, optimizer_only, dir.Path("whole")).ok());
    const absl::Status loaded = LoadRoleCheckpoint(role, optimizer_only, dir.Path("sharded"));
    ASSERT_TRUE(loaded.ok()) << loaded;
    for (size_t i = 0; i < sharded_model.tensors.size(); ++i) {
      const bool stepped = static_cast<int>(i) != kNeverStepped;
      EXPECT_EQ(sharded.states()[i].step.defined(), stepped && sharded.Owns(i)) << "rank " << rank << ", tensor " << i;
    }
    TrainStep(group, whole_model, whole, 2);
    TrainStep(group, sharded_model, sharded, 2);
    for (size_t i = 0; i < whole_model.tensors.size(); ++i) {
      EXPECT_TRUE(at::equal(sharded_model.tensors[i], whole_model.tensors[i])) << "rank " << rank << ", tensor " << i;
    }
  });
}

}  // namespace
}  // namespace rollout::workers
