// A controller process for the process-lifetime tests: starts two CPU workers (the
// real `rollout worker`), prints "READY <controller pid> <worker pids...>", then keeps
// them busy with data-parallel calls until the run fails or it is interrupted — the
// way a training loop would. Exit codes follow controller/cli.h. With `slurm`, the
// workers are steps of the Slurm allocation it runs in (controller/slurm_launcher.h).
//
// usage: lifetime_fixture /path/to/rollout [slurm]
#include <unistd.h>

#include <ATen/ATen.h>

#include <iostream>
#include <memory>
#include <string>

#include "common/logging.h"
#include "common/recipe_loader.h"
#include "controller/cli.h"
#include "controller/local_launcher.h"
#include "controller/placement.h"
#include "controller/runtime.h"
#include "controller/slurm_launcher.h"
#include "common/signal_watch.h"

namespace rollout::controller {
namespace {

constexpr char kRecipe[] = R"(
resource_pools:
  cpu_pool: {nodes: 1, devices_per_node: 2, device: cpu}
placement: {actor: cpu_pool, rollout: cpu_pool, ref: cpu_pool}
algorithm: {adv_estimator: grpo}
runtime: {heartbeat_interval_s: 0.2, heartbeat_timeout_s: 2}
)";

absl::Status KeepBusy(ControllerRuntime& runtime, RunHealth& health) {
  absl::StatusOr<WorkerGroup*> group = runtime.Group("cpu_pool");
  if (!group.ok()) return group.status();
  Batch input;
  if (absl::Status s = input.AddTensor("logits", at::randn({4, 3, 16})); !s.ok()) return s;
  if (absl::Status s = input.AddTensor("tokens", at::randint(0, 16, {4, 3}, at::kLong)); !s.ok()) {
    return s;
  }
  while (true) {
    absl::StatusOr<Batch> out = (*group)->CallDpSplit("diag.token_log_probs", input);
    if (!out.ok()) return out.status();
    if (health.WaitForFailure(absl::Milliseconds(50))) return health.status();
  }
}

int Main(int argc, char** argv) {
  RunHealth health;
  SignalWatch signals([&health](int, int) { health.Fail(absl::CancelledError("interrupted")); });
  log::SetProcessTag("fixture controller");
  if (argc != 2 && !(argc == 3 && std::string(argv[2]) == "slurm")) {
    std::cerr << "usage: lifetime_fixture /path/to/rollout [slurm]\n";
    return kExitUsage;
  }
  absl::StatusOr<config::LoadedRecipe> recipe = config::ParseRecipeYaml(kRecipe, "fixture");
  if (!recipe.ok()) return kExitUsage;
  absl::StatusOr<Placement> placement = ResolvePlacement(*recipe);
  if (!placement.ok()) return kExitUsage;
  RuntimeOptions options;
  options.worker_binary = argv[1];
  options.config = recipe->recipe.runtime();
  std::unique_ptr<Launcher> launcher;
  if (argc == 3) {
    absl::StatusOr<SlurmAllocation> allocation = FindSlurmAllocation();
    if (!allocation.ok()) {
      std::cerr << "fixture: " << allocation.status().message() << "\n";
      return kExitRunFailed;
    }
    launcher = std::make_unique<SlurmLauncher>(*std::move(allocation));
  } else {
    launcher = std::make_unique<LocalLauncher>();
  }
  absl::StatusOr<std::unique_ptr<ControllerRuntime>> runtime =
      ControllerRuntime::Start(*placement, options, launcher.get(), &health);
  if (!runtime.ok()) {
    std::cerr << "fixture: " << runtime.status().message() << "\n";
    return kExitRunFailed;
  }
  std::cout << "READY " << getpid();
  for (const WorkerInfo& worker : (*runtime)->Workers()) std::cout << " " << worker.pid;
  std::cout << std::endl;
  absl::Status result = KeepBusy(**runtime, health);
  std::cerr << "fixture: " << result.message() << std::endl;
  return result.code() == absl::StatusCode::kCancelled ? kExitInterrupted : kExitRunFailed;
}

}  // namespace
}  // namespace rollout::controller

int main(int argc, char** argv) { return rollout::controller::Main(argc, argv); }
