// How a rollout in another pool than the actor's gets the actor's weights (DESIGN.md
// §1 and step 7 of §2; verl's update_weights), the trained tensors only (with LoRA, the
// adapters):
//   broadcast  the actor's rank 0 and every rollout worker form a weight-sync group at
//              worker.init_roles (workers/weight_broadcast.h); a sync is
//              actor.broadcast_weights on the first and rollout.receive_weights on the
//              others, at the same time — NCCL between GPUs, Gloo between CPUs, and
//              no byte passes through the controller;
//   relay      actor.get_weights on the actor's rank 0, then rollout.update_weights on
//              every rollout worker, through the controller over gRPC: when the pools'
//              device types differ, or the build has no collectives for them (a CUDA
//              build without Gloo, with CPU pools).
// Colocated roles share their weights and need neither.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "controller/worker_group.h"

namespace rollout::controller {

enum class WeightTransport { kColocated, kRelay, kBroadcast };

// worker.init_roles with the LR schedules' horizon on every pool of `pools` (distinct;
// `actor` and `rollout` among them), all at the same time: the members of a
// weight-sync group meet inside that call. Asks for the group when `rollout` is
// another pool than `actor`, on the same device type. Returns how SendWeights moves
// the weights — kBroadcast when every member joined the group — and logs it.
absl::StatusOr<WeightTransport> InitRolesWithWeightSync(const std::vector<WorkerGroup*>& pools, WorkerGroup& actor,
                                                        WorkerGroup& rollout, int64_t total_training_steps);

// One sync of the actor's weights into `rollout`'s workers by `transport`; nothing
// for kColocated. A broadcast returns the rollout workers' errors before the actor's
// (they name a tensor that differs).
absl::Status SendWeights(WorkerGroup& actor, WorkerGroup& rollout, WeightTransport transport);

}  // namespace rollout::controller
