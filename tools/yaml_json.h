// verl's YAML config files (tool configs, interaction configs) read as JSON values:
// plain scalars typed as YAML 1.2's core schema types them (null, true, 3, 0.5), quoted
// ones strings, maps keeping the file's key order (chat templates write tool schemas in
// that order).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"

namespace rollout::tools {

// The file at `path` as JSON. NotFound naming `what` ("tool config"), the path and the
// recipe key `key` that names it when it cannot be read; InvalidArgument naming `what`
// and the path for text that is not YAML.
absl::StatusOr<nlohmann::ordered_json> LoadYamlAsJson(const std::string& path, const std::string& what,
                                                      const std::string& key);

}  // namespace rollout::tools
