#include "controller/trainer_state.h"

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "common/crc32c.h"
#include "common/status_macros.h"

namespace rollout::controller {

std::string TrainerState::ToJson() const {
  nlohmann::json json = {
      {"global_step", global_step},
      {"data_position", nlohmann::json::parse(data_position.ToJson())},
      {"recipe_fingerprint", recipe_fingerprint},
      {"seeds", {{"trainer", trainer_seed}, {"data", data_seed}, {"rollout", rollout_seed}}},
  };
  if (kl_coef.has_value()) json["kl_coef"] = *kl_coef;
  return json.dump(2) + "\n";
}

absl::StatusOr<TrainerState> TrainerState::FromJson(absl::string_view text, absl::string_view path) {
  TrainerState state;
  std::string position;
  try {
    const nlohmann::json json = nlohmann::json::parse(text.begin(), text.end());
    state.global_step = json.at("global_step").get<int64_t>();
    position = json.at("data_position").dump();
    if (json.contains("kl_coef")) state.kl_coef = json.at("kl_coef").get<double>();
    state.recipe_fingerprint = json.at("recipe_fingerprint").get<std::string>();
    const nlohmann::json& seeds = json.at("seeds");
    state.trainer_seed = seeds.at("trainer").get<int64_t>();
    state.data_seed = seeds.at("data").get<int64_t>();
    state.rollout_seed = seeds.at("rollout").get<int64_t>();
  } catch (const nlohmann::json::exception& error) {
    return absl::DataLossError(absl::StrCat(path, ": ", error.what()));
  }
  absl::StatusOr<DataLoader::Position> parsed = DataLoader::Position::FromJson(position);
  if (!parsed.ok()) return absl::DataLossError(absl::StrCat(path, ": ", parsed.status().message()));
  state.data_position = *parsed;
  if (state.global_step < 0) {
    return absl::DataLossError(absl::StrCat(path, ": global_step is ", state.global_step));
  }
  return state;
}

std::string RecipeFingerprint(const config::Recipe& recipe) {
  config::Recipe fingerprinted = recipe;
  fingerprinted.clear_trainer();
  fingerprinted.clear_resource_pools();  // the only map field: the rest serializes deterministically
  fingerprinted.clear_placement();
  fingerprinted.clear_runtime();
  fingerprinted.mutable_actor()->clear_checkpoint();
  fingerprinted.mutable_critic()->clear_checkpoint();
  std::string bytes;
  fingerprinted.SerializeToString(&bytes);
  return crc32c::ToHex(crc32c::Value(bytes));
}

TrainerState TrainerStateOf(const config::Recipe& recipe, int64_t global_step,
                            const DataLoader::Position& position, std::optional<double> kl_coef) {
  TrainerState state;
  state.global_step = global_step;
  state.data_position = position;
  state.kl_coef = kl_coef;
  state.recipe_fingerprint = RecipeFingerprint(recipe);
  state.trainer_seed = recipe.trainer().seed();
  state.data_seed = recipe.data().seed();
  state.rollout_seed = recipe.rollout().seed();
  return state;
}

}  // namespace rollout::controller
