// Simulated users run by plug-ins: shared libraries with the C ABI of
// tools/interaction_plugin_api.h, which an interaction config names with class_name
// plugin (tools/interaction.h).
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "tools/interaction.h"

namespace rollout::tools {

// The interaction of the plug-in at `library`, created with `config` (a JSON object).
// The library stays loaded, and the interaction alive, as long as the returned
// Interaction. NotFound when the library cannot be loaded; InvalidArgument when it lacks
// one of the ABI's functions, was built for another ABI version, or its
// rollout_interaction_create fails (with its message). A refused check or a failed
// answer is an error carrying what the plug-in wrote.
absl::StatusOr<std::unique_ptr<Interaction>> LoadInteractionPlugin(const std::string& library,
                                                                   const nlohmann::ordered_json& config);

}  // namespace rollout::tools
