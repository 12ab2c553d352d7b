// Tools run by plug-ins: shared libraries with the C ABI of tools/plugin_api.h, which a
// tool config names with class_name plugin (tools/tool_config.h).
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "tools/tool.h"

namespace rollout::tools {

// The tool of the plug-in at `library`, created with `config` (a JSON object). The
// library stays loaded, and the tool alive, as long as the returned Tool. NotFound when
// the library cannot be loaded; InvalidArgument when it lacks one of the ABI's functions,
// was built for another ABI version, or its rollout_tool_create fails (with its message).
// A failed call is an error whose message is what the plug-in wrote.
absl::StatusOr<std::unique_ptr<Tool>> LoadToolPlugin(const std::string& library, const nlohmann::ordered_json& config);

}  // namespace rollout::tools
