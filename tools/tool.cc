#include "tools/tool.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace rollout::tools {

absl::Status ToolSet::Add(nlohmann::ordered_json schema, std::unique_ptr<Tool> tool) {
  const auto function = schema.find("function");
  if (!schema.is_object() || function == schema.end() || !function->is_object() ||
      !function->contains("name") || !(*function)["name"].is_string()) {
    return absl::InvalidArgumentError(
        "a tool schema needs a string function.name ({\"type\": \"function\", \"function\": {\"name\": ...}})");
  }
  const std::string name = (*function)["name"].get<std::string>();
  if (by_name_.count(name) > 0) {
    return absl::InvalidArgumentError(absl::StrCat("two tools are named '", name, "'"));
  }
  by_name_[name] = std::move(tool);
  schemas_.push_back(std::move(schema));
  return absl::OkStatus();
}

std::string ToolSet::Call(const std::string& name, const nlohmann::ordered_json& arguments) const {
  const char kError[] = "Error when executing tool: ";
  const auto tool = by_name_.find(name);
  if (tool == by_name_.end()) {
    std::string known;
    for (const auto& entry : by_name_) absl::StrAppend(&known, known.empty() ? "" : ", ", entry.first);
    return absl::StrCat(kError, "no tool is named '", name, "' (the tools: ", known, ")");
  }
  if (!arguments.is_object()) return absl::StrCat(kError, "the arguments are not a JSON object");
  absl::StatusOr<std::string> result = tool->second->Execute(arguments);
  if (!result.ok()) return absl::StrCat(kError, result.status().message());
  return *std::move(result);
}

}  // namespace rollout::tools
