// The data-parallel collectives on the CPU (Gloo) with ranks as threads of this
// process, meeting through an in-memory rendezvous: sums, gradient averaging with and
// without gradients on some ranks, and the errors.
#include "workers/communicator.h"

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "workers/gradient_sync.h"

namespace rollout::workers {
namespace {

using ::testing::HasSubstr;

class InMemoryRendezvous final : public RendezvousClient {
 public:
  absl::Status Set(const std::string& key, const std::string& value) override {
    absl::MutexLock lock(&mu_);
    values_[key] = value;
    return absl::OkStatus();
  }
  absl::StatusOr<std::string> Get(const std::string& key, absl::Duration timeout) override {
    absl::MutexLock lock(&mu_);
    auto written = [&] { return values_.count(key) > 0; };
    if (!mu_.AwaitWithTimeout(absl::Condition(&written), timeout)) {
      return absl::DeadlineExceededError(absl::StrCat("rendezvous key ", key, " was not written"));
    }
    return values_[key];
  }

 private:
  absl::Mutex mu_;
  std::map<std::string, std::string> values_;
};

CommunicatorOptions GroupOf(int rank, int world, const std::string& group = "pool") {
  CommunicatorOptions options;
  options.group = group;
  options.rank = rank;
  options.world_size = world;
  options.timeout = absl::Seconds(20);
  return options;
}

// Runs `body(rank, communicator)` on `world` threads that joined one group.
void OnRanks(int world, const std::function<void(int, Communicator&)>& body) {
  InMemoryRendezvous rendezvous;
  std::vector<std::thread> threads;
  for (int rank = 0; rank < world; ++rank) {
    threads.emplace_back([&, rank] {
      absl::StatusOr<std::unique_ptr<Communicator>> communicator =
          CreateCommunicator(GroupOf(rank, world), &rendezvous);
      ASSERT_TRUE(communicator.ok()) << communicator.status();
      EXPECT_EQ((*communicator)->rank(), rank);
      EXPECT_EQ((*communicator)->world_size(), world);
      body(rank, **communicator);
    });
  }
  for (std::thread& thread : threads) thread.join();
}

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
