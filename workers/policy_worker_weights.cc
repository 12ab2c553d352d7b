// PolicyWorker: actor.get_weights and rollout.update_weights, the weight sync between
// an actor and a rollout in different processes (the rest of the class is in
// policy_worker.cc).
#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include <set>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "workers/policy_worker.h"

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

}  // namespace rollout::workers
