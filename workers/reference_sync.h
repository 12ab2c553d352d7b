// TR-DPO's reference refresh (TRL's sync_ref_model; ref.sync_ref_model here): every
// ref.ref_model_sync_steps actor updates, the reference policy moves toward the actor,
// each weight becoming alpha x the actor's + (1 - alpha) x its own, so a long run's KL
// term anchors to a recent policy instead of the initial one.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "models/causal_lm.h"
#include "proto/recipe.pb.h"

namespace rollout::workers {

// Whether the update that brought the learner's count to `updates` (>= 1) is followed by
// a refresh under `ref`'s settings.
bool ReferenceSyncDue(const config::RefConfig& ref, int64_t updates);

// reference = alpha x actor + (1 - alpha) x reference, weight by weight, in the
// reference's dtype (torch's lerp_ toward the actor). InvalidArgument naming the first
// weight the two models do not share (name or shape); then nothing has changed.
absl::Status MixIntoReference(const models::CausalLM& actor, double alpha, models::CausalLM* reference);

}  // namespace rollout::workers
