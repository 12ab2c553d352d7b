#include "tools/plugin_config.h"

#include <utility>

#include "common/file_util.h"

namespace rollout::tools {

absl::StatusOr<PluginConfig> ReadPluginConfig(nlohmann::ordered_json config, const std::string& config_path) {
  const auto library = config.find("library");
  if (library == config.end() || !library->is_string() || library->get<std::string>().empty()) {
    return absl::InvalidArgumentError("is a plugin without config.library, the path of its shared library");
  }
  PluginConfig plugin;
  plugin.library = JoinPath(Dirname(config_path), library->get<std::string>());
  config.erase(library);
  plugin.config = std::move(config);
  return plugin;
}

}  // namespace rollout::tools
