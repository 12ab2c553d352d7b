// PolicyWorker: the weight sync between an actor and a rollout in different processes
// — actor.get_weights and rollout.update_weights through the controller, or
// actor.broadcast_weights and rollout.receive_weights over the weight-sync group (the
// rest of the class is in policy_worker.cc).
#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include <set>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "workers/policy_worker.h"
#include "workers/weight_broadcast.h"

namespace rollout::workers {

absl::StatusOr<Batch> PolicyWorker::GetWeights() {
  Batch weights;
  for (const auto& [name, tensor] : NamedTrainable()) {
    RETURN_IF_ERROR(weights.AddTensor(name, tensor->detach().reshape({1, -1})));
  }
  return weights;
}

absl::StatusOr<Batch> PolicyWorker::UpdateWeights(const Batch& input) {
  c10::NoGradGuard no_grad;
  const NamedTensors trained = NamedTrainable();
  std::set<std::string> expected;
  for (const auto& [name, tensor] : trained) {
    expected.insert(name);
    absl::StatusOr<at::Tensor> update = input.Tensor(name);
    if (!update.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("rollout.update_weights: no tensor '", name, "'"));
    }
    if (update->numel() != tensor->numel()) {
      return absl::InvalidArgumentError(absl::StrCat("rollout.update_weights: '", name, "' has ", update->numel(),
                                                     " elements; the rollout's model has ", tensor->numel()));
    }
    tensor->copy_(update->view(tensor->sizes()));
  }
  for (const auto& [name, tensor] : input.tensors()) {
    if (expected.count(name) == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("rollout.update_weights: '", name, "' is not a tensor the actor trains"));
    }
  }
  WeightsChanged();
  return Batch();
}

absl::StatusOr<Batch> PolicyWorker::BroadcastWeights() {
  RETURN_IF_ERROR(BroadcastNamedTensors(*setup_.weight_sync, NamedTrainable(), setup_.device));
  return Batch();
}

absl::StatusOr<Batch> PolicyWorker::ReceiveWeights() {
  RETURN_IF_ERROR(ReceiveNamedTensors(*setup_.weight_sync, NamedTrainable(), setup_.device));
  WeightsChanged();
  return Batch();
}

absl::Status PolicyWorker::RegisterWeightSyncMethods(MethodRegistry* registry) {
  if (Hosts("actor") && actor_ != nullptr) {
    RETURN_IF_ERROR(registry->Register("actor.get_weights", [this](const Batch&) { return GetWeights(); }));
    if (setup_.weight_sync != nullptr && setup_.weight_sync->rank() == 0) {
      RETURN_IF_ERROR(
          registry->Register("actor.broadcast_weights", [this](const Batch&) { return BroadcastWeights(); }));
    }
  }
  if (engine_ == nullptr || Hosts("actor")) return absl::OkStatus();
  // One way in: by broadcast in a weight-sync group, else through the controller.
  if (setup_.weight_sync != nullptr) {
    return registry->Register("rollout.receive_weights", [this](const Batch&) { return ReceiveWeights(); });
  }
  return registry->Register("rollout.update_weights", [this](const Batch& in) { return UpdateWeights(in); });
}

}  // namespace rollout::workers
