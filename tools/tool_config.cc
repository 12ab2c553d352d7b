#include "tools/tool_config.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "tools/builtin_tools.h"
#include "tools/plugin_config.h"
#include "tools/plugin_tool.h"
#include "tools/yaml_json.h"

namespace rollout::tools {
namespace {

absl::Status AddTool(const nlohmann::ordered_json& entry, const std::string& config_path, ToolSet& tools) {
  if (!entry.is_object()) return absl::InvalidArgumentError("is not a map");
  const auto class_name = entry.find("class_name");
  if (class_name == entry.end() || !class_name->is_string()) {
    return absl::InvalidArgumentError("has no string class_name");
  }
  nlohmann::ordered_json config = entry.value("config", nlohmann::ordered_json::object());
  if (config.is_null()) config = nlohmann::ordered_json::object();
  if (!config.is_object()) return absl::InvalidArgumentError("has a config that is not a map");
  if (config.contains("type")) {
    if (config["type"] != "native") {
      return absl::InvalidArgumentError(absl::StrCat("has config.type ", config["type"].dump(),
                                                     "; only native tools run here (not verl's mcp servers)"));
    }
    config.erase("type");
  }
  const auto schema = entry.find("tool_schema");
  if (schema == entry.end()) return absl::InvalidArgumentError("has no tool_schema");
  if (*class_name == "plugin") {
    ASSIGN_OR_RETURN(const PluginConfig plugin, ReadPluginConfig(std::move(config), config_path));
    ASSIGN_OR_RETURN(std::unique_ptr<Tool> tool, LoadToolPlugin(plugin.library, plugin.config));
    return tools.Add(*schema, std::move(tool));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<Tool> tool, MakeBuiltinTool(class_name->get<std::string>(), config));
  return tools.Add(*schema, std::move(tool));
}

}  // namespace

absl::StatusOr<ToolSet> LoadToolConfig(const std::string& path) {
  ASSIGN_OR_RETURN(const nlohmann::ordered_json config,
                   LoadYamlAsJson(path, "tool config", "rollout.multi_turn.tool_config_path"));
  const auto list = config.is_object() ? config.find("tools") : config.end();
  if (list == config.end() || !list->is_array() || list->empty()) {
    return absl::InvalidArgumentError(absl::StrCat("tool config ", path, " has no list of tools under 'tools'"));
  }
  ToolSet tools;
  for (size_t i = 0; i < list->size(); ++i) {
    if (absl::Status added = AddTool((*list)[i], path, tools); !added.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("tool config ", path, ": tools[", i, "]: ", added.message()));
    }
  }
  return tools;
}

absl::StatusOr<ToolSet> LoadMultiTurnTools(const config::MultiTurnConfig& multi_turn) {
  if (!multi_turn.enable()) return ToolSet();
  if (multi_turn.tool_config_path().empty()) {
    if (!multi_turn.interaction_config_path().empty()) return ToolSet();  // simulated users only
    return absl::InvalidArgumentError(
        "rollout.multi_turn.enable needs rollout.multi_turn.tool_config_path (the tools the model may call) or "
        "interaction_config_path (simulated users, tools/interaction.h)");
  }
  return LoadToolConfig(multi_turn.tool_config_path());
}

}  // namespace rollout::tools
