// The foundation on a GPU: device opening, tensors from CUDA memory on the wire, and
// a worker process computing on cuda:0 checked against the CPU.
#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "common/batch_stream.h"
#include "common/recipe_loader.h"
#include "common/tensor_proto.h"
#include "controller/local_launcher.h"
#include "controller/preflight.h"
#include "controller/runtime.h"
#include "common/device.h"

namespace rollout {
namespace {

using ::testing::HasSubstr;

TEST(Cuda, OpensTheFirstGpu) {
  absl::StatusOr<c10::Device> device = OpenDevice("cuda:0");
  ASSERT_TRUE(device.ok()) << device.status();
  EXPECT_TRUE(device->is_cuda());
}

TEST(Cuda, TensorsOnTheGpuCrossTheWire) {
  at::Tensor source = at::randn({4, 5}, at::device(at::kCUDA).dtype(at::kBFloat16));
  absl::StatusOr<at::Tensor> back = TensorFromProto(TensorToProto(source).value());
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(at::equal(*back, source.cpu()));

  Batch batch;
  ASSERT_TRUE(batch.AddTensor("x", at::arange(12, at::device(at::kCUDA)).reshape({3, 4})).ok());
  BatchAssembler assembler;
  ASSERT_TRUE(WriteBatch(batch, [&](wire::BatchChunk&& c) { return assembler.Add(c).ok(); }).ok());
  absl::StatusOr<Batch> received = assembler.Finish();
  ASSERT_TRUE(received.ok());
  EXPECT_TRUE(at::equal(received->Tensor("x").value(), batch.Tensor("x").value().cpu()));
}

TEST(Cuda, WorkerOnGpuPassesThePreflightCheck) {
  config::LoadedRecipe recipe =
      config::ParseRecipeYaml("trainer: {device: cuda, n_gpus_per_node: 1}\n"
                              "algorithm: {adv_estimator: grpo}\n",
                              "gpu_test")
          .value();
  controller::Placement placement = controller::ResolvePlacement(recipe).value();
  controller::RuntimeOptions options;
  options.worker_binary = ROLLOUT_BINARY_PATH;
  options.config = recipe.recipe.runtime();
  controller::LocalLauncher launcher;
  controller::RunHealth health;
  absl::StatusOr<std::unique_ptr<controller::ControllerRuntime>> runtime =
      controller::ControllerRuntime::Start(placement, options, &launcher, &health);
  ASSERT_TRUE(runtime.ok()) << runtime.status();
  std::ostringstream report;
  absl::Status checked = controller::RunPreflight(**runtime, placement, report);
  ASSERT_TRUE(checked.ok()) << checked;
  EXPECT_THAT(report.str(), HasSubstr("cuda:0"));
  EXPECT_THAT(report.str(), HasSubstr("match the CPU reference"));
}

}  // namespace
}  // namespace rollout
