// The Slurm launcher through a real Slurm cluster on this machine
// (tests/support/local_slurm.h): workers started as steps of the allocation
// `rollout train` runs in, training there as they do as local processes, and the
// process-lifetime guarantees of DESIGN.md §1 there — a killed controller leaves no
// worker and no step behind, a killed worker stops the run naming it.
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/file_util.h"
#include "tests/e2e/rollout_run.h"
#include "tests/support/local_slurm.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace rollout::testing {
namespace {

using ::testing::HasSubstr;

std::string HostName() {
  char hostname[256] = {0};
  gethostname(hostname, sizeof(hostname) - 1);
  return hostname;
}

class SlurmCluster : public ::testing::Test {
 protected:
  void SetUp() override {
    // Only root can run slurmd, which runs jobs as their users.
    if (geteuid() != 0) GTEST_SKIP() << "slurmd needs root";
    ASSERT_EQ(LocalSlurmCluster::MissingPrograms(), "");
    absl::StatusOr<std::unique_ptr<LocalSlurmCluster>> cluster = LocalSlurmCluster::Start(temp_.path(), 2);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
    setenv("SLURM_CONF", cluster_->conf().c_str(), 1);
  }

  // The steps of the allocation still known to Slurm, one "JOB.STEP NAME" a line.
  std::string Steps() {
    return std::string(absl::StripAsciiWhitespace(
        RunCommand({LocalSlurmCluster::Program("squeue"), "-h", "-s", "-o", "%i %j"}, 30).output));
  }

  TempDir temp_{"slurm"};
  std::unique_ptr<LocalSlurmCluster> cluster_;
};

TEST_F(SlurmCluster, TrainStartsEachWorkerAsAStepOfItsAllocation) {
  const std::string recipe = temp_.Write(
      "dry.yaml", "resource_pools:\n  cpu_pool: {devices_per_node: 2, device: cpu}\n"
                  "algorithm: {adv_estimator: grpo}\nruntime: {launcher: slurm}\n"
                  "trainer: {default_local_dir: " + temp_.Path("run") + "}\n");
  const CommandResult result = RunCommand(
      {LocalSlurmCluster::Program("salloc"), "-N1", ROLLOUT_BINARY_PATH, "train", recipe, "--dry-run"}, 240);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  for (const char* worker : {"worker 0 (pool cpu_pool, rank 0/2", "worker 1 (pool cpu_pool, rank 1/2"}) {
    EXPECT_THAT(result.output, HasSubstr(absl::StrCat("started ", worker)));
  }
  EXPECT_THAT(result.output, HasSubstr("as a step of Slurm job "));
  EXPECT_THAT(result.output, HasSubstr(" on node " + HostName().substr(0, HostName().find('.'))));
  EXPECT_THAT(result.output, HasSubstr("all 2 worker(s) registered"));
  EXPECT_THAT(result.output, HasSubstr("pool cpu_pool: token log-probs on 2 worker(s) match"));
  EXPECT_EQ(Steps(), "");
}

// GRPO with two data-parallel CPU workers (gradients averaged over Gloo), as Slurm steps
// and as local processes: the launcher changes nothing of the training, so both runs'
// checkpoints hold the same weights, bit for bit.
TEST_F(SlurmCluster, TwoWorkersAsStepsTrainAsTwoLocalWorkersDo) {
  ASSERT_TRUE(WriteFileDurably(temp_.Path("letters.jsonl"), LetterRows()).ok());
  const auto train = [&](const std::string& name, const std::string& launcher) {
    const std::vector<std::string> args = {
        "train", absl::StrCat(ROLLOUT_SOURCE_DIR, "/recipes/grpo_arith.yaml"), "data.train_files=[letters.jsonl]",
        "data.val_files=[]", absl::StrCat("actor.model.path=", ROLLOUT_SOURCE_DIR, "/tests/data/tiny-qwen2"),
        "trainer.device=cpu", "trainer.n_gpus_per_node=2", "runtime.launcher=" + launcher,
        "trainer.default_local_dir=ckpt/" + name, "trainer.total_training_steps=2", "trainer.save_freq=2",
        "data.train_batch_size=4", "actor.ppo_mini_batch_size=4", "actor.ppo_micro_batch_size_per_gpu=2",
        "actor.optim.lr=1e-3", "rollout.n=2", "rollout.cpu_kv_cache_gib=0.05", "data.max_response_length=8",
        "reward.name=null", std::string("reward.plugin=") + MISBEHAVING_PLUGIN_PATH};
    std::string command = absl::StrCat("cd '", temp_.path(), "' && ",
                                       launcher == "slurm" ? LocalSlurmCluster::Program("salloc") + " -N1 " : "",
                                       ROLLOUT_BINARY_PATH);
    for (const std::string& arg : args) absl::StrAppend(&command, " '", arg, "'");
    return RunCommand({"/bin/sh", "-c", command}, 600);
  };
  const CommandResult local = train("local", "local");
  ASSERT_EQ(local.exit_code, 0) << local.output;
  const CommandResult slurm = train("slurm", "slurm");
  ASSERT_EQ(slurm.exit_code, 0) << slurm.output;
  EXPECT_THAT(slurm.output, HasSubstr("as a step of Slurm job"));
  const auto weights = [&](const std::string& name) {
    return ReadFile(temp_.Path("ckpt/" + name + "/global_step_2/actor/model.safetensors"));
  };
  ASSERT_TRUE(weights("local").ok()) << weights("local").status();
  ASSERT_TRUE(weights("slurm").ok()) << weights("slurm").status();
  EXPECT_TRUE(*weights("local") == *weights("slurm"));
  EXPECT_EQ(Steps(), "");
}

// The controller runs in an allocation that outlives it (as in an sbatch script that
// goes on after it), so that only the launcher can end the workers' steps.
class SlurmLifetime : public SlurmCluster {
 protected:
  void SetUp() override {
    SlurmCluster::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    BecomeSubreaper();
    allocation_ = std::make_unique<Subprocess>(std::vector<std::string>{
        LocalSlurmCluster::Program("salloc"), "-N1", "/bin/bash", "-c",
        absl::StrCat(LIFETIME_FIXTURE_PATH, " ", ROLLOUT_BINARY_PATH, " slurm; echo FIXTURE_ENDED $?; sleep 600")});
    const std::string ready = allocation_->WaitForLine("READY ", 120);
    ASSERT_FALSE(ready.empty()) << allocation_->Output();
    std::istringstream in(ready.substr(std::string("READY ").size()));
    in >> controller_;
    for (pid_t pid; in >> pid;) workers_.push_back(pid);
    ASSERT_EQ(workers_.size(), 2u) << ready;
    for (pid_t pid : workers_) ASSERT_TRUE(ProcessRunning(pid));
    ASSERT_THAT(Steps(), HasSubstr("rollout-worker-1"));
  }

  void TearDown() override {
    for (pid_t pid : workers_) kill(pid, SIGKILL);
    if (controller_ > 0) kill(controller_, SIGKILL);
    allocation_.reset();
    ReapZombies();
  }

  // Waits up to `seconds` for `done`.
  static bool Within(double seconds, const std::function<bool()>& done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (!done()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return true;
  }

  std::unique_ptr<Subprocess> allocation_;
  pid_t controller_ = 0;
  std::vector<pid_t> workers_;
};

TEST_F(SlurmLifetime, KilledControllerLeavesNoWorkerAndNoStep) {
  ASSERT_EQ(kill(controller_, SIGKILL), 0);
  EXPECT_TRUE(Within(10, [&] {
    ReapZombies();
    for (pid_t pid : workers_) {
      if (ProcessRunning(pid)) return false;
    }
    return true;
  })) << "a worker outlived its controller by 10 s";
  EXPECT_TRUE(Within(10, [&] { return Steps().empty(); })) << Steps();
}

TEST_F(SlurmLifetime, KilledWorkerStopsTheRunNamingIt) {
  ASSERT_EQ(kill(workers_[1], SIGKILL), 0);
  const std::string ended = allocation_->WaitForLine("FIXTURE_ENDED", 30);
  EXPECT_EQ(ended, "FIXTURE_ENDED 1");
  EXPECT_THAT(allocation_->Output(), HasSubstr("worker 1 (pool cpu_pool, rank 1"));
  EXPECT_TRUE(Within(10, [&] { return Steps().empty(); })) << Steps();
}

}  // namespace
}  // namespace rollout::testing
