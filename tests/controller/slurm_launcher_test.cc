// The Slurm launcher's parts that need no cluster: host lists as Slurm expands them,
// the allocation read from the environment, and whether a placement fits it. The
// launcher itself, through a real local Slurm cluster: tests/controller/slurm_cluster_test.cc.
#include <stdlib.h>
#include <unistd.h>

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/recipe_loader.h"
#include "controller/placement.h"
#include "controller/slurm_hostlist.h"
#include "controller/slurm_launcher.h"

namespace rollout::controller {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// As `scontrol show hostnames` expands them (Slurm 22.05).
TEST(SlurmHostlist, ExpandsAsScontrolDoes) {
  EXPECT_THAT(ExpandSlurmHostlist("n[01-03],x[1,5-6]y[0-1],plain,gpu-[8-10]").value(),
              ElementsAre("n01", "n02", "n03", "x1y0", "x1y1", "x5y0", "x5y1", "x6y0", "x6y1", "plain", "gpu-8",
                          "gpu-9", "gpu-10"));
  EXPECT_THAT(ExpandSlurmHostlist("vm").value(), ElementsAre("vm"));
  EXPECT_THAT(ExpandSlurmHostlist("node[098-101]").value(), ElementsAre("node098", "node099", "node100", "node101"));
}

TEST(SlurmHostlist, NamesWhatDoesNotRead) {
  const auto error = [](const std::string& hostlist) {
    return std::string(ExpandSlurmHostlist(hostlist).status().message());
  };
  EXPECT_EQ(error("n[1-2"), "the host list 'n[1-2': in 'n[1-2', a '[' is not closed");
  EXPECT_EQ(error("n[3-1]"), "the host list 'n[3-1]': in 'n[3-1]', the range '3-1' counts down");
  EXPECT_EQ(error("n[a-b]"), "the host list 'n[a-b]': in 'n[a-b]', 'a-b' is not a number or a range of numbers");
  EXPECT_EQ(error("a,,b"), "the host list 'a,,b' has an empty entry");
}

TEST(SlurmAllocation, OutsideAnAllocationSaysHowToGetOne) {
  unsetenv("SLURM_JOB_ID");
  EXPECT_EQ(FindSlurmAllocation().status().message(),
            "runtime.launcher is slurm, but this process is not inside a Slurm allocation (SLURM_JOB_ID is not set): "
            "run `rollout train` from an sbatch script or under salloc, with the nodes the recipe's pools span");
  const std::string path = getenv("PATH") != nullptr ? getenv("PATH") : "";
  setenv("SLURM_JOB_ID", "42", 1);
  setenv("SLURM_JOB_NODELIST", "gpu[1-2]", 1);
  setenv("PATH", "/nonexistent", 1);
  EXPECT_EQ(FindSlurmAllocation().status().message(), "runtime.launcher is slurm, but srun is not on PATH");
  setenv("PATH", path.c_str(), 1);
  unsetenv("SLURM_JOB_ID");
  unsetenv("SLURM_JOB_NODELIST");
}

Placement PlacementOf(const std::string& yaml) {
  return ResolvePlacement(config::ParseRecipeYaml(yaml, "test.yaml").value()).value();
}

TEST(SlurmLauncher, RefusesPlacementsTheAllocationCannotHold) {
  const Placement two_nodes = PlacementOf(
      "resource_pools:\n  gpus: {nodes: 2, devices_per_node: 8}\nalgorithm: {adv_estimator: grpo}\n"
      "runtime: {launcher: slurm}\n");
  const SlurmLauncher one_node(SlurmAllocation{"42", {"gpu1"}, "/usr/bin/srun"});
  EXPECT_EQ(one_node.CheckFits(two_nodes, "0.0.0.0").message(),
            "resource pool 'gpus' spans 2 nodes, but Slurm job 42 holds 1 (gpu1)");
  const SlurmLauncher elsewhere(SlurmAllocation{"42", {"gpu1", "gpu2"}, "/usr/bin/srun"});
  EXPECT_TRUE(elsewhere.CheckFits(two_nodes, "0.0.0.0").ok());
  EXPECT_THAT(elsewhere.CheckFits(two_nodes, "127.0.0.1").message(),
              HasSubstr("runtime.bind_address is 127.0.0.1, which workers on node gpu1 cannot reach from there"));
  // On this host alone, the loopback address serves.
  char hostname[256] = {0};
  gethostname(hostname, sizeof(hostname) - 1);
  const SlurmLauncher here(SlurmAllocation{"42", {hostname}, "/usr/bin/srun"});
  EXPECT_TRUE(here.CheckFits(PlacementOf("resource_pools:\n  gpus: {devices_per_node: 2}\n"
                                         "algorithm: {adv_estimator: grpo}\n"),
                             "127.0.0.1")
                  .ok());
}

}  // namespace
}  // namespace rollout::controller
