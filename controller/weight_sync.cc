#include "controller/weight_sync.h"

#include <algorithm>
#include <functional>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "controller/trainer_common.h"

namespace rollout::controller {
namespace {

// "cpu" or "cuda": the type of the pool's devices ("cpu", "cuda:N").
std::string DeviceType(const WorkerGroup& group) {
  const std::string& device = group.workers().front()->info().slot.device;
  return device.substr(0, device.find(':'));
}

// Asks, in worker.init_roles' meta, for the weight-sync group of `actor`'s rank 0 and
// `rollout`'s workers (workers/weight_broadcast.h reads it).
void RequestWeightSyncGroup(const WorkerGroup& actor, const WorkerGroup& rollout, Batch* init) {
  init->SetMeta("weight_sync_group", absl::StrCat("weight_sync.", actor.pool(), ".", rollout.pool()));
  init->SetMeta("weight_sync_actor_pool", actor.pool());
  init->SetMeta("weight_sync_rollout_pool", rollout.pool());
  init->SetMeta("weight_sync_world_size", absl::StrCat(1 + rollout.world_size()));
}

// Whether the group's members — the actor pool's rank 0 and every rollout worker —
// replied to worker.init_roles that they joined it.
bool EveryMemberJoined(const std::vector<Batch>& actor_replies, const std::vector<Batch>& rollout_replies) {
  if (actor_replies.front().Meta("weight_sync") != "broadcast") return false;
  return std::all_of(rollout_replies.begin(), rollout_replies.end(),
                     [](const Batch& reply) { return reply.Meta("weight_sync") == "broadcast"; });
}

}  // namespace

absl::StatusOr<WeightTransport> InitRolesWithWeightSync(const std::vector<WorkerGroup*>& pools, WorkerGroup& actor,
                                                        WorkerGroup& rollout, int64_t total_training_steps) {
  const bool colocated = &actor == &rollout;
  const bool same_device_type = DeviceType(actor) == DeviceType(rollout);
  Batch init = InitRolesInput(total_training_steps);
  if (!colocated && same_device_type) RequestWeightSyncGroup(actor, rollout, &init);
  std::vector<std::vector<Batch>> replies(pools.size());
  std::vector<std::function<absl::Status()>> calls;
  for (size_t i = 0; i < pools.size(); ++i) {
    calls.push_back([&, i]() -> absl::Status {
      ASSIGN_OR_RETURN(replies[i], pools[i]->CallAll("worker.init_roles", init));
      return absl::OkStatus();
    });
  }
  RETURN_IF_ERROR(RunConcurrently(actor.health(), calls));
  if (colocated) return WeightTransport::kColocated;

  const std::string rollout_pool = absl::StrCat("the rollout's pool ", rollout.pool());
  if (!same_device_type) {
    ROLLOUT_LOG(INFO) << rollout_pool << " (" << DeviceType(rollout) << ") gets the weights of the actor's pool "
                      << actor.pool() << " (" << DeviceType(actor)
                      << ") through the controller (gRPC relay): no collective spans two device types";
    return WeightTransport::kRelay;
  }
  const auto index_of = [&](const WorkerGroup* group) {
    return static_cast<size_t>(std::find(pools.begin(), pools.end(), group) - pools.begin());
  };
  if (!EveryMemberJoined(replies.at(index_of(&actor)), replies.at(index_of(&rollout)))) {
    ROLLOUT_LOG(INFO) << rollout_pool << " gets the weights of the actor's pool " << actor.pool()
                      << " through the controller (gRPC relay): this build has no collectives for "
                      << DeviceType(actor) << " workers";
    return WeightTransport::kRelay;
  }
  ROLLOUT_LOG(INFO) << rollout_pool << " gets the weights of the actor's pool " << actor.pool()
                    << " by broadcast from its rank 0 over " << (DeviceType(actor) == "cuda" ? "NCCL" : "Gloo")
                    << " (" << 1 + rollout.world_size() << " ranks)";
  return WeightTransport::kBroadcast;
}

absl::Status SendWeights(WorkerGroup& actor, WorkerGroup& rollout, WeightTransport transport) {
  switch (transport) {
    case WeightTransport::kColocated:
      return absl::OkStatus();
    case WeightTransport::kRelay: {
      ASSIGN_OR_RETURN(const Batch weights, actor.CallRankZero("actor.get_weights", Batch()));
      return rollout.CallAll("rollout.update_weights", weights).status();
    }
    case WeightTransport::kBroadcast:
      return RunConcurrently(actor.health(),
                             {[&] { return rollout.CallAll("rollout.receive_weights", Batch()).status(); },
                              [&] { return actor.CallRankZero("actor.broadcast_weights", Batch()).status(); }});
  }
  return absl::InternalError("SendWeights: unknown weight transport");
}

}  // namespace rollout::controller
