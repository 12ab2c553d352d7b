// The weight sync between an actor and a rollout in another pool over a collective
// group (communicator.h; DESIGN.md §1: NCCL broadcast on GPUs, Gloo on CPUs), in place
// of relaying the tensors through the controller. The weight-sync group's rank 0 is
// the actor pool's rank 0, ranks 1..R the rollout pool's workers in rank order; the
// controller asks for it at worker.init_roles (controller/weight_sync.h writes the
// meta read here).
//
// One sync: rank 0 broadcasts a manifest, one line "name dtype [shape]" per tensor;
// each receiver compares it with its own tensors, and an all-reduce tells every rank
// whether any receiver disagreed. Only then do the tensors move, in the manifest's
// order, straight into the receivers' tensors. A model that differs is an error on
// every rank (the receivers' naming the first tensor that differs), never a partial
// or misplaced copy. Both functions are collective: every rank of the group calls one
// of them at the same time (rank 0 BroadcastNamedTensors, the others
// ReceiveNamedTensors), with tensors on `device`, the group's device.
#pragma once

#include <c10/core/Device.h>

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "common/batch.h"
#include "workers/checkpoint_io.h"
#include "workers/communicator.h"

namespace rollout::workers {

struct WeightSyncMembership {
  std::string group;  // the communicator's group name, unique in the run
  int rank = 0;
  int world_size = 0;
};

// This worker's place in the weight-sync group that worker.init_roles' meta
// (weight_sync_group, weight_sync_actor_pool, weight_sync_rollout_pool,
// weight_sync_world_size) asks for, given the worker's pool and rank there: rank 0 for
// the actor pool's rank 0, 1 + rank for a worker of the rollout pool. nullopt when the
// meta asks for no group or this worker is not a member; InvalidArgument for a meta
// that is incomplete or does not fit (a world size that is not 1 + a rank beyond it).
absl::StatusOr<std::optional<WeightSyncMembership>> WeightSyncMembershipFrom(const Batch& init,
                                                                             const std::string& pool, int rank);

// Rank 0: sends `tensors` (read only). FailedPrecondition when a receiver's tensors
// differ from them; the communicator's errors otherwise.
absl::Status BroadcastNamedTensors(Communicator& group, const NamedTensors& tensors, c10::Device device);

// Ranks 1..R: overwrites `tensors` with rank 0's. FailedPrecondition naming the first
// entry where rank 0's manifest and `tensors` differ (nothing is then overwritten),
// also when another receiver's differs.
absl::Status ReceiveNamedTensors(Communicator& group, const NamedTensors& tensors, c10::Device device);

}  // namespace rollout::workers
