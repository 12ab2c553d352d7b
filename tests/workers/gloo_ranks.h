// Test support for the CPU collectives (Gloo): ranks as threads of this process that
// meet through an in-memory rendezvous.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "workers/communicator.h"

namespace rollout::workers::testing {

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

inline CommunicatorOptions GroupOf(int rank, int world, const std::string& group = "pool") {
  CommunicatorOptions options;
  options.group = group;
  options.rank = rank;
  options.world_size = world;
  options.timeout = absl::Seconds(20);
  return options;
}

// Runs `body(rank, communicator)` on `world` threads that joined one group.
inline void OnRanks(int world, const std::function<void(int, Communicator&)>& body) {
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

}  // namespace rollout::workers::testing
