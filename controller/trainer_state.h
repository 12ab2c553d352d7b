// trainer_state.json: what the controller needs to continue a run exactly where a
// checkpoint left it (the workers' state is in the role directories):
//   {"global_step": 40,
//    "data_position": {"epoch": 1, "batch_in_epoch": 3},   the batch step 41 takes
//    "kl_coef": 0.0012,                                     only with a KL controller
//    "recipe_fingerprint": "1a2b3c4d",
//    "seeds": {"trainer": 1, "data": 1, "rollout": 0}}
// The seeds are recorded for whoever inspects the checkpoint; resuming takes them from
// the recipe, and the fingerprint tells when that recipe differs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "controller/dataloader.h"
#include "proto/recipe.pb.h"

namespace rollout::controller {

struct TrainerState {
  int64_t global_step = 0;
  DataLoader::Position data_position;
  std::optional<double> kl_coef;  // the KL controller's value (algorithm.kl_ctrl)
  std::string recipe_fingerprint;
  int64_t trainer_seed = 0;
  int64_t data_seed = 0;
  int64_t rollout_seed = 0;

  std::string ToJson() const;
  // DataLoss naming `path` (the file it came from) when `text` is not such an object.
  static absl::StatusOr<TrainerState> FromJson(absl::string_view text, absl::string_view path);
};

// Eight hex digits (CRC32C) over the recipe sections that decide what is trained (data,
// actor, rollout, ref, critic, algorithm, reward, sft_warm_start), leaving out what a
// resumed run may change: trainer (steps, logging, checkpoint and resume keys), the
// placement and pools, runtime, and <role>.checkpoint.
std::string RecipeFingerprint(const config::Recipe& recipe);

// The state of a run of `recipe` after `global_step` steps, the loader at `position`.
TrainerState TrainerStateOf(const config::Recipe& recipe, int64_t global_step,
                            const DataLoader::Position& position, std::optional<double> kl_coef);

}  // namespace rollout::controller
