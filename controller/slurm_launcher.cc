#include "controller/slurm_launcher.h"

#include <unistd.h>

#include <cstdlib>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "controller/slurm_hostlist.h"

namespace rollout::controller {
namespace {

// The first executable `name` in the PATH's folders; empty when there is none.
std::string FindOnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return "";
  for (absl::string_view folder : absl::StrSplit(path, ':', absl::SkipEmpty())) {
    std::string candidate = absl::StrCat(folder, "/", name);
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

std::string ThisHost() {
  char hostname[256] = {0};
  gethostname(hostname, sizeof(hostname) - 1);
  return hostname;
}

// Slurm names nodes by their short host names.
std::string ShortName(const std::string& host) { return host.substr(0, host.find('.')); }

bool IsLoopback(const std::string& address) {
  return address == "localhost" || absl::StartsWith(address, "127.") || address == "::1";
}

}  // namespace

absl::StatusOr<SlurmAllocation> FindSlurmAllocation() {
  const char* job_id = std::getenv("SLURM_JOB_ID");
  if (job_id == nullptr || *job_id == '\0') {
    return absl::FailedPreconditionError(
        "runtime.launcher is slurm, but this process is not inside a Slurm allocation (SLURM_JOB_ID is not set): "
        "run `rollout train` from an sbatch script or under salloc, with the nodes the recipe's pools span");
  }
  SlurmAllocation allocation;
  allocation.job_id = job_id;
  const char* nodelist = std::getenv("SLURM_JOB_NODELIST");
  if (nodelist == nullptr || *nodelist == '\0') {
    return absl::FailedPreconditionError(
        absl::StrCat("Slurm job ", allocation.job_id, ": SLURM_JOB_NODELIST is not set, so its nodes are unknown"));
  }
  ASSIGN_OR_RETURN(allocation.nodes, ExpandSlurmHostlist(nodelist));
  allocation.srun = FindOnPath("srun");
  if (allocation.srun.empty()) {
    return absl::FailedPreconditionError("runtime.launcher is slurm, but srun is not on PATH");
  }
  return allocation;
}

absl::Status SlurmLauncher::CheckFits(const Placement& placement, const std::string& bind_address) const {
  const std::string this_host = ShortName(ThisHost());
  for (const PoolPlan& pool : placement.pools) {
    if (pool.nodes > static_cast<int>(allocation_.nodes.size())) {
      return absl::FailedPreconditionError(absl::StrCat(
          "resource pool '", pool.name, "' spans ", pool.nodes, " nodes, but Slurm job ", allocation_.job_id,
          " holds ", allocation_.nodes.size(), " (", absl::StrJoin(allocation_.nodes, ","), ")"));
    }
    for (int node = 0; node < pool.nodes; ++node) {
      if (IsLoopback(bind_address) && ShortName(allocation_.nodes[node]) != this_host) {
        return absl::FailedPreconditionError(absl::StrCat(
            "runtime.bind_address is ", bind_address, ", which workers on node ", allocation_.nodes[node],
            " cannot reach from there (the controller runs on ", this_host,
            "): set runtime.bind_address to 0.0.0.0 (the run token guards the servers) or to this host's address "
            "on the nodes' network"));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status SlurmLauncher::Launch(const LaunchSpec& spec) {
  if (spec.node < 0 || spec.node >= static_cast<int>(allocation_.nodes.size())) {
    return absl::FailedPreconditionError(absl::StrCat("cannot start ", spec.description, " on node ", spec.node,
                                                      ": Slurm job ", allocation_.job_id, " holds ",
                                                      allocation_.nodes.size(), " node(s)"));
  }
  const std::string& node = allocation_.nodes[spec.node];
  LaunchSpec step = spec;
  // --overlap: the step shares the node's CPUs, memory and GPUs with the other workers'
  // steps; --kill-on-bad-exit: a worker that fails ends its step at once; no input (the
  // terminal's stays the controller's); output line by line, as the worker writes it.
  step.argv = {allocation_.srun,
               "--jobid=" + allocation_.job_id,
               "--nodes=1",
               "--ntasks=1",
               "--nodelist=" + node,
               "--overlap",
               "--kill-on-bad-exit=1",
               "--input=/dev/null",
               "--unbuffered",
               absl::StrCat("--job-name=rollout-worker-", spec.worker_id)};
  step.argv.insert(step.argv.end(), spec.argv.begin(), spec.argv.end());
  RETURN_IF_ERROR(steps_.Launch(step));
  ROLLOUT_LOG(INFO) << "started " << spec.description << " as a step of Slurm job " << allocation_.job_id
                    << " on node " << node;
  return absl::OkStatus();
}

}  // namespace rollout::controller
