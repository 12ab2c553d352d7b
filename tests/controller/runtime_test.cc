// ControllerRuntime with real `rollout worker` processes on this machine.
#include "controller/runtime.h"

#include <ATen/ATen.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>


#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "algorithms/token_log_probs.h"
#include "common/recipe_loader.h"
#include "controller/local_launcher.h"
#include "tests/support/temp_dir.h"

namespace rollout::controller {
namespace {

using ::rollout::testing::TempDir;
using ::testing::HasSubstr;

config::LoadedRecipe CpuRecipe(int workers) {
  const std::string yaml = "resource_pools:\n  cpu_pool: {devices_per_node: " +
                           std::to_string(workers) +
                           ", device: cpu}\n"
                           "algorithm: {adv_estimator: grpo}\n"
                           "runtime: {heartbeat_interval_s: 0.2, heartbeat_timeout_s: 3,"
                           " register_timeout_s: 60}\n";
  return config::ParseRecipeYaml(yaml, "test").value();
}

RuntimeOptions Options(const config::LoadedRecipe& recipe) {
  RuntimeOptions options;
  options.worker_binary = ROLLOUT_BINARY_PATH;
  options.recipe_yaml = config::RecipeToYaml(recipe.recipe);
  options.config = recipe.recipe.runtime();
  return options;
}

class RuntimeWithWorkers : public ::testing::Test {
 protected:
  void Start(int workers) {
    recipe_ = CpuRecipe(workers);
    placement_ = ResolvePlacement(recipe_).value();
    absl::StatusOr<std::unique_ptr<ControllerRuntime>> started =
        ControllerRuntime::Start(placement_, Options(recipe_), &launcher_, &health_);
    ASSERT_TRUE(started.ok()) << started.status();
    runtime_ = *std::move(started);
    group_ = runtime_->Group("cpu_pool").value();
  }

  config::LoadedRecipe recipe_;
  Placement placement_;
  LocalLauncher launcher_;
  RunHealth health_;
  std::unique_ptr<ControllerRuntime> runtime_;
  WorkerGroup* group_ = nullptr;
};

TEST_F(RuntimeWithWorkers, DpSplitOfLogProbsOnFourWorkersEqualsLocalResult) {
  Start(4);
  ASSERT_EQ(group_->world_size(), 4);
  Batch input;
  at::Tensor logits = at::randn({10, 6, 50});  // 10 rows over 4 ranks: padding
  at::Tensor tokens = at::randint(0, 50, {10, 6}, at::kLong);
  ASSERT_TRUE(input.AddTensor("logits", logits).ok());
  ASSERT_TRUE(input.AddTensor("tokens", tokens).ok());
  absl::StatusOr<Batch> result = group_->CallDpSplit("diag.token_log_probs", input);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->size(), 10);
  at::Tensor local = algorithms::TokenLogProbs(logits, tokens).value();
  EXPECT_TRUE(at::equal(result->Tensor("log_probs").value(), local));
}

TEST_F(RuntimeWithWorkers, CallAllReachesEveryRankAndRankZeroOnlyTheFirst) {
  Start(2);
  absl::StatusOr<std::vector<Batch>> infos = group_->CallAll("diag.info", Batch());
  ASSERT_TRUE(infos.ok()) << infos.status();
  ASSERT_EQ(infos->size(), 2u);
  EXPECT_EQ((*infos)[0].Meta("rank"), "0");
  EXPECT_EQ((*infos)[1].Meta("rank"), "1");
  EXPECT_NE((*infos)[0].Meta("pid"), (*infos)[1].Meta("pid"));
  EXPECT_EQ((*infos)[1].Meta("roles"), "actor+ref+rollout");
  absl::StatusOr<Batch> first = group_->CallRankZero("diag.info", Batch());
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->Meta("rank"), "0");
}

TEST_F(RuntimeWithWorkers, A256MiBBatchCrossesGrpcBothWays) {
  Start(1);
  Batch input;
  const int64_t rows = 1024;
  at::Tensor big = at::randn({rows, 64 * 1024});  // 1024 x 256 KiB = 256 MiB float32
  ASSERT_EQ(big.nbytes(), 256u << 20);
  ASSERT_TRUE(input.AddTensor("big", big).ok());
  ASSERT_TRUE(input.AddTensor("ids", at::arange(rows, at::kLong)).ok());
  absl::StatusOr<Batch> echoed = group_->CallRankZero("diag.echo", input);
  ASSERT_TRUE(echoed.ok()) << echoed.status();
  EXPECT_TRUE(at::equal(echoed->Tensor("big").value(), big));
  EXPECT_TRUE(at::equal(echoed->Tensor("ids").value(), input.Tensor("ids").value()));
}

TEST_F(RuntimeWithWorkers, UnknownMethodNamesTheWorkerAndWhatItHas) {
  Start(1);
  absl::StatusOr<Batch> result = group_->CallRankZero("actor.nope", Batch());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(result.status().message()), HasSubstr("worker 0 (pool cpu_pool"));
  EXPECT_THAT(std::string(result.status().message()), HasSubstr("no method 'actor.nope'"));
  EXPECT_THAT(std::string(result.status().message()), HasSubstr("diag.echo"));
}

TEST_F(RuntimeWithWorkers, MethodErrorComesBackWithItsMessage) {
  Start(1);
  Batch input;
  ASSERT_TRUE(input.AddTensor("logits", at::randn({2, 3, 4})).ok());
  absl::StatusOr<Batch> result = group_->CallRankZero("diag.token_log_probs", input);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(result.status().message()), HasSubstr("no tensor 'tokens'"));
}

TEST_F(RuntimeWithWorkers, DeadWorkerFailsTheNextCallWithItsName) {
  Start(2);
  const WorkerInfo victim = runtime_->Workers()[1];
  ASSERT_EQ(kill(static_cast<pid_t>(victim.pid), SIGKILL), 0);
  EXPECT_TRUE(health_.WaitForFailure(absl::Seconds(5)));
  absl::StatusOr<std::vector<Batch>> result = group_->CallAll("diag.info", Batch());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(result.status().message()),
              HasSubstr("worker 1 (pool cpu_pool, rank 1/2"));
}

// Rank 0's call fails at once while rank 1's runs on, as a rank stuck in a collective
// waiting for rank 0 would (forever, under NCCL): the failure ends the run and cancels
// rank 1's call instead of waiting for it.
TEST_F(RuntimeWithWorkers, AFailingCallCancelsTheOtherCallsOfItsDispatch) {
  Start(2);
  Batch bad, long_sleep;
  bad.SetMeta("seconds", "soon");
  long_sleep.SetMeta("seconds", "600");
  const absl::Time start = absl::Now();
  const absl::StatusOr<std::vector<Batch>> result = group_->CallEach("diag.sleep", {bad, long_sleep});
  EXPECT_LT(absl::Now() - start, absl::Seconds(60)) << "rank 1's call was waited for";
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(result.status().message()), HasSubstr("worker 0 (pool cpu_pool"));
  EXPECT_THAT(std::string(result.status().message()), HasSubstr("meta 'seconds' is 'soon'"));
  EXPECT_EQ(health_.status(), result.status());
}

TEST(ControllerRuntime, WorkerThatCannotStartIsReportedWithStatusAndOutput) {
  config::LoadedRecipe recipe = CpuRecipe(1);
  Placement placement = ResolvePlacement(recipe).value();
  placement.workers[0].device = "cuda:99";  // no such device anywhere
  LocalLauncher launcher;
  RunHealth health;
  absl::StatusOr<std::unique_ptr<ControllerRuntime>> started =
      ControllerRuntime::Start(placement, Options(recipe), &launcher, &health);
  ASSERT_FALSE(started.ok());
  EXPECT_EQ(started.status().code(), absl::StatusCode::kUnavailable);
  const std::string message(started.status().message());
  EXPECT_THAT(message, HasSubstr("worker 0 (pool cpu_pool"));
  EXPECT_THAT(message, HasSubstr("exited with status 2"));
  EXPECT_THAT(message, HasSubstr("device cuda:99 requested"));
}

TEST(ControllerRuntime, WorkerThatNeverRegistersTimesOutNamingIt) {
  TempDir dir("runtime");
  const std::string script = dir.Write("silent_worker.sh", "#!/bin/sh\nexec sleep 30\n");
  ASSERT_EQ(chmod(script.c_str(), 0755), 0);
  config::LoadedRecipe recipe = CpuRecipe(1);
  recipe.recipe.mutable_runtime()->set_register_timeout_s(1);
  Placement placement = ResolvePlacement(recipe).value();
  RuntimeOptions options = Options(recipe);
  options.worker_binary = script;
  LocalLauncher launcher;
  RunHealth health;
  absl::StatusOr<std::unique_ptr<ControllerRuntime>> started =
      ControllerRuntime::Start(placement, options, &launcher, &health);
  EXPECT_EQ(started.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(std::string(started.status().message()), HasSubstr("worker 0 (pool cpu_pool"));
}

TEST(ControllerRuntime, MissingWorkerBinaryIsAClearError) {
  config::LoadedRecipe recipe = CpuRecipe(1);
  Placement placement = ResolvePlacement(recipe).value();
  RuntimeOptions options = Options(recipe);
  options.worker_binary = "/nonexistent/rollout";
  LocalLauncher launcher;
  RunHealth health;
  absl::StatusOr<std::unique_ptr<ControllerRuntime>> started =
      ControllerRuntime::Start(placement, options, &launcher, &health);
  EXPECT_EQ(started.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(started.status().message()), HasSubstr("/nonexistent/rollout"));
}

}  // namespace
}  // namespace rollout::controller
