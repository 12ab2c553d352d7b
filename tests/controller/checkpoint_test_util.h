// Helpers for the checkpoint tests: what fake workers write into a save, and a
// whole save in one call.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "controller/checkpoint_store.h"

namespace rollout::testing {

// Writes the files a worker of each role would (role/model.safetensors,
// role/optim.pt, role/extra/rng.bin), with contents that differ per step.
void WriteRoleFiles(const std::string& dir, int64_t step, const std::vector<std::string>& roles);

// {"global_step": step}
std::string TrainerStateJson(int64_t step);

// BeginSave, WriteRoleFiles into the staging directory, CommitSave.
absl::Status SaveCheckpoint(controller::CheckpointStore& store, int64_t step,
                            const std::vector<std::string>& roles = {"actor", "critic"});

bool PathExists(const std::string& path);
// The tracker's contents; "" when there is none.
std::string TrackerContents(const std::string& root);

}  // namespace rollout::testing
