// ZeRO-1 over a data-parallel group: each rank keeps the AdamW state (float32 master,
// moments, step) of a share of the trained tensors only, as verl's FSDP and OpenRLHF's
// DeepSpeed do, so that this state — 12 bytes a parameter of a bfloat16 model — takes
// 1/N of it on each of N ranks. Gradients are still averaged whole on every rank
// (gradient_sync.h), so each owner takes exactly the step an unsharded optimizer
// would, bit for bit; the owners then copy the stepped tensors to the other ranks.
//
// A checkpoint stays one copy of every tensor, whatever the group's size
// (checkpoint_io.h): saving gathers the shares on rank 0, loading reads each rank's.
//
// Every function here is a collective: every rank of the group calls it, with the
// same tensors in the same order.
#pragma once

#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "workers/adamw.h"
#include "workers/checkpoint_io.h"
#include "workers/communicator.h"

namespace rollout::workers {

// The owners of `params` in a group of `world_size`: consecutive runs of tensors, one
// rank each, with about the same number of elements per rank (a tensor goes to the
// rank its middle element falls in). The same on every rank.
std::vector<int> BalancedOwners(const std::vector<at::Tensor*>& params, int world_size);

// The shards of `params` for this rank of `group`; unsharded ({}) without a group or
// for a group of one.
StateShards ShardsFor(const std::vector<at::Tensor*>& params, const Communicator* group);

// For a worker's log: this rank's share of a sharded `optimizer`'s state, e.g.
// "optimizer state sharded over 2 ranks (ZeRO-1): rank 0 steps 146 of 291 tensors,
// 178927616 of 357840000 elements (50.0%)".
std::string ShareOf(const AdamW& optimizer);

// After a sharded AdamW::Step: copies every parameter of `optimizer` that has a
// gradient from the rank that owns (and stepped) it to the others, one broadcast per
// owner. Every rank must hold gradients for the same parameters, as AverageGradients
// leaves them.
absl::Status BroadcastStepped(Communicator& group, const AdamW& optimizer);

// Every parameter's state, gathered from its owner: on rank 0 the full list (what an
// unsharded optimizer's states() would be, as CPU tensors except those rank 0 owns,
// which are its own), elsewhere an empty one. Broadcasts one parameter's state at a
// time, so no rank holds more than that beyond its share.
absl::StatusOr<std::vector<AdamW::State>> GatherStates(Communicator& group, const AdamW& optimizer);

// Before a role's checkpoint is written (by rank 0), on every rank of its data-parallel
// `group` (null for none): when `parts` include the optimizer and `role.optimizer` is
// sharded, gathers its state into `role.gathered_states` (GatherStates); otherwise
// changes nothing.
absl::Status GatherForSave(Communicator* group, const CheckpointParts& parts, RoleCheckpoint& role);

}  // namespace rollout::workers
