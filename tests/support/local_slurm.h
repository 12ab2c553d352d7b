// Test support: a private Slurm cluster on this machine — munged, slurmctld and one
// slurmd for a node named after this host (at 127.0.0.1: no name lookups), with their
// own ports, key, state and logs in a folder of their own — so that tests run the Slurm
// launcher through real salloc/srun. Needs the slurm-wlm and munge packages (scripts/setup.sh installs them)
// and root, as slurmd runs jobs as their users.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tests/support/subprocess.h"

namespace rollout::testing {

class LocalSlurmCluster {
 public:
  // The Slurm and munge programs it needs that are not installed, as a message; empty
  // when all are.
  static std::string MissingPrograms();

  // Starts the daemons with their files under `dir` (an existing folder) and a node of
  // `cpus` CPUs, and waits until the node takes jobs. An error names the daemon that did
  // not come up, with the end of its log.
  static absl::StatusOr<std::unique_ptr<LocalSlurmCluster>> Start(const std::string& dir, int cpus);
  ~LocalSlurmCluster();  // stops the daemons

  // The configuration file Slurm's commands read (set SLURM_CONF to it).
  const std::string& conf() const { return conf_; }
  // The path of a Slurm command ("salloc", "squeue").
  static std::string Program(const std::string& name);

 private:
  LocalSlurmCluster() = default;

  std::string conf_;
  std::vector<std::unique_ptr<Subprocess>> daemons_;  // munged first: stopped last
};

}  // namespace rollout::testing
