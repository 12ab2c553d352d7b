#include "tools/tool_config.h"

#include <cmath>
#include <cstdint>
#include <utility>

#include <yaml-cpp/yaml.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "re2/re2.h"
#include "tools/builtin_tools.h"
#include "tools/plugin_tool.h"

namespace rollout::tools {
namespace {

// A plain scalar as YAML 1.2's core schema types it.
nlohmann::ordered_json PlainScalar(const std::string& text) {
  static const RE2 kNull("null|Null|NULL|~|");
  static const RE2 kTrue("true|True|TRUE");
  static const RE2 kFalse("false|False|FALSE");
  static const RE2 kInt("[-+]?[0-9]+");
  static const RE2 kFloat(R"([-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?)");
  if (RE2::FullMatch(text, kNull)) return nullptr;
  if (RE2::FullMatch(text, kTrue)) return true;
  if (RE2::FullMatch(text, kFalse)) return false;
  int64_t integer = 0;
  if (RE2::FullMatch(text, kInt) && absl::SimpleAtoi(text, &integer)) return integer;
  double real = 0;
  if (RE2::FullMatch(text, kFloat) && absl::SimpleAtod(text, &real) && std::isfinite(real)) return real;
  return text;
}

nlohmann::ordered_json ToJson(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      nlohmann::ordered_json object = nlohmann::ordered_json::object();
      for (const auto& entry : node) object[entry.first.Scalar()] = ToJson(entry.second);
      return object;
    }
    case YAML::NodeType::Sequence: {
      nlohmann::ordered_json list = nlohmann::ordered_json::array();
      for (const auto& element : node) list.push_back(ToJson(element));
      return list;
    }
    case YAML::NodeType::Scalar:
      return node.Tag() == "!" ? nlohmann::ordered_json(node.Scalar()) : PlainScalar(node.Scalar());
    default:
      return nullptr;
  }
}

// class_name plugin's tool: its config's library (relative to the tool config's
// folder) created with the rest of its config.
absl::StatusOr<std::unique_ptr<Tool>> MakePluginTool(nlohmann::ordered_json config, const std::string& config_path) {
  const auto library = config.find("library");
  if (library == config.end() || !library->is_string() || library->get<std::string>().empty()) {
    return absl::InvalidArgumentError("is a plugin without config.library, the path of its shared library");
  }
  const std::string path = JoinPath(Dirname(config_path), library->get<std::string>());
  config.erase(library);
  return LoadToolPlugin(path, config);
}

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
  absl::StatusOr<std::unique_ptr<Tool>> tool = *class_name == "plugin"
                                                   ? MakePluginTool(std::move(config), config_path)
                                                   : MakeBuiltinTool(class_name->get<std::string>(), config);
  if (!tool.ok()) return tool.status();
  return tools.Add(*schema, *std::move(tool));
}

}  // namespace

absl::StatusOr<ToolSet> LoadToolConfig(const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    return absl::NotFoundError(absl::StrCat("tool config ", path, " (rollout.multi_turn.tool_config_path) cannot be read"));
  } catch (const YAML::Exception& error) {
    return absl::InvalidArgumentError(absl::StrCat("tool config ", path, ": ", error.what()));
  }
  const nlohmann::ordered_json config = ToJson(root);
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
    return absl::InvalidArgumentError(
        "rollout.multi_turn.enable needs rollout.multi_turn.tool_config_path: the tools the model may call");
  }
  return LoadToolConfig(multi_turn.tool_config_path());
}

}  // namespace rollout::tools
