// Slurm's host lists ("node[01-03,07],gpu-a[1-2]x[0-1],login"), as SLURM_JOB_NODELIST
// writes an allocation's nodes, expanded to host names in Slurm's order (what
// `scontrol show hostnames` prints): entries left to right; in an entry with several
// bracket groups, the first group varying slowest; each range counting up with its
// lower bound's zero padding.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace rollout::controller {

// InvalidArgument naming what is malformed (an unclosed bracket, a range whose bound is
// not a number or that counts down, an empty entry) in `hostlist`.
absl::StatusOr<std::vector<std::string>> ExpandSlurmHostlist(const std::string& hostlist);

}  // namespace rollout::controller
