#include "tools/tool.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace rollout::tools {
namespace {

using json = nlohmann::ordered_json;

bool Offers(const std::vector<std::string>& offered, const std::string& name) {
  return offered.empty() || std::find(offered.begin(), offered.end(), name) != offered.end();
}

// The create_kwargs of tool `name` in `tools_kwargs` (checked by CheckToolsKwargs), or {}.
const json& CreateKwargs(const json& tools_kwargs, const std::string& name) {
  static const json* const kNone = new json(json::object());
  const auto entry = tools_kwargs.find(name);
  if (entry == tools_kwargs.end()) return *kNone;
  const auto create_kwargs = entry->find("create_kwargs");
  return create_kwargs == entry->end() ? *kNone : *create_kwargs;
}

}  // namespace

absl::Status Tool::CheckCreateKwargs(const json& /*create_kwargs*/) const { return absl::OkStatus(); }

absl::Status ToolSet::Add(json schema, std::unique_ptr<Tool> tool) {
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

absl::Status ToolSet::CheckToolsKwargs(const json& tools_kwargs, const std::vector<std::string>& offered) const {
  if (!tools_kwargs.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat("must be an object of tool names, not ", tools_kwargs.type_name()));
  }
  for (const auto& [name, entry] : tools_kwargs.items()) {
    if (by_name_.count(name) == 0 || !Offers(offered, name)) {
      std::vector<std::string> names;
      for (const auto& [known, tool] : by_name_) {
        if (Offers(offered, known)) names.push_back(known);
      }
      return absl::InvalidArgumentError(absl::StrCat("names ", name, ", which the prompt does not offer (it offers ",
                                                     absl::StrJoin(names, ", "), ")"));
    }
    if (!entry.is_object()) {
      return absl::InvalidArgumentError(absl::StrCat(name, " must be an object, not ", entry.type_name()));
    }
    const auto create_kwargs = entry.find("create_kwargs");
    if (create_kwargs != entry.end() && !create_kwargs->is_object()) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ".create_kwargs must be an object, not ", create_kwargs->type_name()));
    }
  }
  for (const auto& [name, tool] : by_name_) {
    if (!Offers(offered, name)) continue;
    if (absl::Status status = tool->CheckCreateKwargs(CreateKwargs(tools_kwargs, name)); !status.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(name, ".create_kwargs ", status.message()));
    }
  }
  return absl::OkStatus();
}

ToolResult ToolSet::Call(const std::string& name, const json& arguments, const Trajectory& trajectory) const {
  const auto error = [](auto... what) { return ToolResult{absl::StrCat("Error when executing tool: ", what...)}; };
  const auto tool = by_name_.find(name);
  if (tool == by_name_.end() || !Offers(trajectory.offered, name)) {
    std::string known;
    for (const auto& entry : by_name_) {
      if (Offers(trajectory.offered, entry.first)) absl::StrAppend(&known, known.empty() ? "" : ", ", entry.first);
    }
    return error("no tool is named '", name, "' (the tools: ", known, ")");
  }
  if (!arguments.is_object()) return error("the arguments are not a JSON object");
  absl::StatusOr<ToolResult> result = tool->second->Execute(arguments, CreateKwargs(trajectory.tools_kwargs, name));
  if (!result.ok()) return error(result.status().message());
  return *std::move(result);
}

}  // namespace rollout::tools
