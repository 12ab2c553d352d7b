// The config of a tool or interaction entry with class_name plugin (tools/tool_config.h,
// tools/interaction.h): config.library names the plug-in's shared library, relative to
// the config file's folder; the rest of config is the plug-in's own.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"

namespace rollout::tools {

struct PluginConfig {
  std::string library;                  // config.library, joined to the config file's folder
  nlohmann::ordered_json config;        // config without "library"
};

// InvalidArgument when config has no non-empty string library.
absl::StatusOr<PluginConfig> ReadPluginConfig(nlohmann::ordered_json config, const std::string& config_path);

}  // namespace rollout::tools
