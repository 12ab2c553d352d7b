#include "workers/reference_sync.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace rollout::workers {

bool ReferenceSyncDue(const config::RefConfig& ref, int64_t updates) {
  return ref.sync_ref_model() && updates > 0 && updates % ref.ref_model_sync_steps() == 0;
}

absl::Status MixIntoReference(const models::CausalLM& actor, double alpha, models::CausalLM* reference) {
  std::map<std::string, const at::Tensor*> actor_weights;
  for (const auto& [name, tensor] : actor.NamedParameters()) actor_weights.emplace(name, tensor);
  std::vector<std::pair<at::Tensor*, const at::Tensor*>> pairs;
  for (const auto& [name, tensor] : reference->NamedParameters()) {
    const auto found = actor_weights.find(name);
    if (found == actor_weights.end() || found->second->sizes() != tensor->sizes()) {
      return absl::InvalidArgumentError(absl::StrCat("ref.sync_ref_model: the reference's weight '", name,
                                                     "' has no counterpart of its shape in the actor"));
    }
    pairs.emplace_back(tensor, found->second);
  }
  c10::NoGradGuard no_grad;
  for (const auto& [weight, toward] : pairs) {
    weight->lerp_(toward->to(weight->device(), weight->scalar_type()), alpha);
  }
  return absl::OkStatus();
}

}  // namespace rollout::workers
