// The process-lifetime guarantees of DESIGN.md §1, checked on real processes: a
// controller (tests/controller/lifetime_fixture_main.cc) driving two real
// `rollout worker` processes.
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <sstream>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/subprocess.h"

namespace rollout::testing {
namespace {

using ::testing::HasSubstr;

struct Started {
  pid_t controller = 0;
  std::vector<pid_t> workers;
};

Started ParseReady(const std::string& line) {
  Started started;
  std::istringstream in(line.substr(std::string("READY ").size()));
  in >> started.controller;
  for (pid_t pid; in >> pid;) started.workers.push_back(pid);
  return started;
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

class ProcessLifetime : public ::testing::Test {
 protected:
  void SetUp() override {
    BecomeSubreaper();
    fixture_ = std::make_unique<Subprocess>(
        std::vector<std::string>{LIFETIME_FIXTURE_PATH, ROLLOUT_BINARY_PATH});
    const std::string ready = fixture_->WaitForLine("READY ", 60);
    ASSERT_FALSE(ready.empty()) << fixture_->Output();
    started_ = ParseReady(ready);
    ASSERT_EQ(started_.workers.size(), 2u) << ready;
    for (pid_t pid : started_.workers) ASSERT_TRUE(ProcessRunning(pid));
  }

  void TearDown() override {
    for (pid_t pid : started_.workers) kill(pid, SIGKILL);
    fixture_.reset();
    ReapZombies();
  }

  std::unique_ptr<Subprocess> fixture_;
  Started started_;
};

TEST_F(ProcessLifetime, KilledWorkerStopsTheControllerWithinFiveSecondsNamingIt) {
  const auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(kill(started_.workers[1], SIGKILL), 0);
  const int status = fixture_->Wait(5.0);
  ASSERT_NE(status, -1) << "controller still running 5 s after its worker was killed";
  EXPECT_LT(SecondsSince(start), 5.0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) != 0);
  const std::string output = fixture_->Output();
  EXPECT_THAT(output, HasSubstr("worker 1 (pool cpu_pool, rank 1/2"));
  EXPECT_THAT(output, HasSubstr("was killed by signal 9 (SIGKILL)"));
  // The surviving worker was stopped too.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  ReapZombies();
  EXPECT_FALSE(ProcessRunning(started_.workers[0]));
}

TEST_F(ProcessLifetime, KilledControllerLeavesNoWorkerAfterThreeSeconds) {
  ASSERT_EQ(kill(started_.controller, SIGKILL), 0);
  ASSERT_NE(fixture_->Wait(5.0), -1);
  std::this_thread::sleep_for(std::chrono::seconds(3));
  ReapZombies();  // we are the subreaper: orphans that died are our zombies now
  for (pid_t pid : started_.workers) {
    EXPECT_FALSE(ProcessRunning(pid)) << "worker pid " << pid << " outlived its controller";
  }
}

TEST_F(ProcessLifetime, InterruptStopsWorkersAndExitsWith130) {
  ASSERT_EQ(kill(started_.controller, SIGINT), 0);
  const int status = fixture_->Wait(10.0);
  ASSERT_NE(status, -1);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130) << fixture_->Output();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  ReapZombies();
  for (pid_t pid : started_.workers) EXPECT_FALSE(ProcessRunning(pid));
  // Workers were asked to stop, not killed.
  EXPECT_THAT(fixture_->Output(), HasSubstr("shutting down: controller shutting down"));
}

}  // namespace
}  // namespace rollout::testing
