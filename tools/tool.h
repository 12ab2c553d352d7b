// A tool the model may call between its turns in a multi-turn rollout
// (rollout.multi_turn; workers/multi_turn_rollout.h), and the set a recipe offers.
//
// A call names a tool by its schema's function name and passes a JSON object of
// arguments; the tool's text result goes back to the model as the next ("tool")
// message. Tools run in the rollout worker, one call at a time per tool set.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"

namespace rollout::tools {

class Tool {
 public:
  virtual ~Tool() = default;
  // The result of a call with `arguments` (a JSON object), as text for the model. An
  // error's message is what the model is shown instead (ToolSet::Call).
  virtual absl::StatusOr<std::string> Execute(const nlohmann::ordered_json& arguments) const = 0;
};

// The tools a recipe offers: their schemas, as chat templates write them into prompts,
// and each tool under its schema's function name.
class ToolSet {
 public:
  // InvalidArgument when a schema has no string function.name (`{"type": "function",
  // "function": {"name": ...}}`) or two schemas share a name.
  absl::Status Add(nlohmann::ordered_json schema, std::unique_ptr<Tool> tool);

  const std::vector<nlohmann::ordered_json>& schemas() const { return schemas_; }
  bool empty() const { return schemas_.empty(); }

  // The result of calling tool `name`, or, as verl's tool agent loop shows failures to
  // the model, "Error when executing tool: " and what went wrong (no such tool,
  // arguments that are not an object, the tool's own error).
  std::string Call(const std::string& name, const nlohmann::ordered_json& arguments) const;

 private:
  std::vector<nlohmann::ordered_json> schemas_;
  std::map<std::string, std::unique_ptr<Tool>> by_name_;
};

}  // namespace rollout::tools
