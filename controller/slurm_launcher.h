// Launcher for a Slurm allocation (runtime.launcher: slurm): `rollout train` runs inside
// one — an sbatch script or salloc that holds the nodes the recipe's pools span — and
// each worker is a step of it, `srun --overlap` on the node its placement slot names
// (slot node i: the allocation's i-th node), sharing the node's CPUs and GPUs with the
// other workers there as local workers share this machine's; its --device (cuda:N)
// picks among the GPUs the allocation holds on the node.
//
// Each srun is a child of this process, started, watched and stopped as LocalLauncher
// starts workers (parent-death signal, its own process group, output pumped): Slurm ends
// a step whose srun is gone, so workers die with the controller here too, and the
// heartbeat watchdog covers the rest. The worker's parent is slurmstepd, not this
// process (WorkersAreChildren() is false).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "controller/launcher.h"
#include "controller/local_launcher.h"
#include "controller/placement.h"

namespace rollout::controller {

// The allocation this process runs in.
struct SlurmAllocation {
  std::string job_id;               // SLURM_JOB_ID
  std::vector<std::string> nodes;   // SLURM_JOB_NODELIST, expanded
  std::string srun;                 // the path of srun, found on PATH
};

// From this process's environment. FailedPrecondition when it is not inside an
// allocation (no SLURM_JOB_ID), names no nodes, or srun is not on PATH; InvalidArgument
// for a node list that does not read.
absl::StatusOr<SlurmAllocation> FindSlurmAllocation();

class SlurmLauncher final : public Launcher {
 public:
  explicit SlurmLauncher(SlurmAllocation allocation) : allocation_(std::move(allocation)) {}

  // Whether `placement` fits the allocation, with the servers bound to `bind_address`
  // (runtime.bind_address): FailedPrecondition when a pool spans more nodes than it
  // holds, or when workers on another host than this one would have to reach a
  // loopback address.
  absl::Status CheckFits(const Placement& placement, const std::string& bind_address) const;

  // FailedPrecondition for a spec.node the allocation does not hold.
  absl::Status Launch(const LaunchSpec& spec) override;
  std::vector<WorkerExit> PollExited() override { return steps_.PollExited(); }
  int64_t Pid(int worker_id) const override { return steps_.Pid(worker_id); }  // its srun's
  void StopAll(absl::Duration grace) override { steps_.StopAll(grace); }
  bool WorkersAreChildren() const override { return false; }

 private:
  SlurmAllocation allocation_;
  LocalLauncher steps_;  // the srun processes
};

}  // namespace rollout::controller
