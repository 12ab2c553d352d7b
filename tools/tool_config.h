// verl's tool config file (rollout.multi_turn.tool_config_path), YAML or JSON:
//
//   tools:
//     - class_name: calculator            # a built-in tool (tools/builtin_tools.h)
//       config: {type: native}            # optional; keys other than type go to the tool
//       ...
//     - class_name: plugin                # a tool plug-in (tools/plugin_api.h)
//       config: {library: libmy_tool.so}  # relative to this file; the other keys go to the tool
//       tool_schema:                      # what the prompt shows the model
//         type: function
//         function:
//           name: calculator              # what the model calls it by
//           description: Evaluates an arithmetic expression exactly.
//           parameters: {type: object, properties: {expression: {type: string}}, required: [expression]}
//
// Schemas keep the file's key order, as chat templates write them (tools/yaml_json.h).
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "proto/recipe.pb.h"
#include "tools/tool.h"

namespace rollout::tools {

// InvalidArgument naming the file and the tool (by index) for a malformed file, an
// unknown class_name, a plug-in that does not load (tools/plugin_tool.h), a config
// type other than native (verl's mcp servers) or a
// schema without a function name; NotFound when the file cannot be read.
absl::StatusOr<ToolSet> LoadToolConfig(const std::string& path);

// The tools rollout.multi_turn offers: none unless it is enabled, then those of its
// tool_config_path — none when only its interaction_config_path is set, InvalidArgument
// when neither is.
absl::StatusOr<ToolSet> LoadMultiTurnTools(const config::MultiTurnConfig& multi_turn);

}  // namespace rollout::tools
