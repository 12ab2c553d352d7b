#include "tools/yaml_json.h"

#include <cmath>
#include <cstdint>

#include <yaml-cpp/yaml.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "re2/re2.h"

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

}  // namespace

absl::StatusOr<nlohmann::ordered_json> LoadYamlAsJson(const std::string& path, const std::string& what,
                                                      const std::string& key) {
  try {
    return ToJson(YAML::LoadFile(path));
  } catch (const YAML::BadFile&) {
    return absl::NotFoundError(absl::StrCat(what, " ", path, " (", key, ") cannot be read"));
  } catch (const YAML::Exception& error) {
    return absl::InvalidArgumentError(absl::StrCat(what, " ", path, ": ", error.what()));
  }
}

}  // namespace rollout::tools
