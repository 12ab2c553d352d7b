// A tool the model may call between its turns in a multi-turn rollout
// (rollout.multi_turn; workers/multi_turn_rollout.h), and the set a recipe offers.
//
// A call names a tool by its schema's function name and passes a JSON object of
// arguments; the tool's text result goes back to the model as the next ("tool")
// message. Tools run in the rollout worker, one call at a time per tool set.
//
// A trajectory may bring its own values for its tools, as verl's rows do under
// extra_info.tools_kwargs: {"<tool name>": {"create_kwargs": {...}}}. verl's tool agent
// loop creates a tool instance with them for each call and releases it afterwards; here
// a tool gets them with each call, which is the same for every tool whose state lives
// no longer than a call. Of the other entries verl knows (execute_kwargs,
// calc_reward_kwargs, release_kwargs) its agent loop passes none, and neither does this.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"

namespace rollout::tools {

// What a call gives: the text the model is shown, and the call's reward (verl's
// tool_reward: 0 unless the tool says otherwise), which the trajectory's reward function
// finds in extra_info.tool_rewards.
struct ToolResult {
  std::string text;
  double reward = 0;
};

class Tool {
 public:
  virtual ~Tool() = default;
  // The result of a call with `arguments` (a JSON object) in a trajectory whose
  // create_kwargs for this tool are `create_kwargs` (an object, empty when it has none).
  // An error's message is what the model is shown instead, with reward 0
  // (ToolSet::Call).
  virtual absl::StatusOr<ToolResult> Execute(const nlohmann::ordered_json& arguments,
                                             const nlohmann::ordered_json& create_kwargs) const = 0;

  // Whether the tool can serve a trajectory with these create_kwargs (an object, empty
  // when it has none), so that a row it cannot serve is refused when the data loads
  // rather than failing each call; InvalidArgument saying what is wrong otherwise.
  virtual absl::Status CheckCreateKwargs(const nlohmann::ordered_json& create_kwargs) const;
};

// What one trajectory may call and with what (verl's per-row extra_info).
struct Trajectory {
  // The function names its prompt offers (extra_info.tool_selection); empty: every tool.
  std::vector<std::string> offered;
  // Its extra_info.tools_kwargs (an object), which ToolSet::CheckToolsKwargs accepted.
  nlohmann::ordered_json tools_kwargs = nlohmann::ordered_json::object();
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

  // Whether a trajectory that offers the tools named `offered` (empty: all) can have
  // `tools_kwargs`: an object whose keys name offered tools, each an object whose
  // create_kwargs, when present, is an object; and every offered tool accepts its
  // create_kwargs (Tool::CheckCreateKwargs; {} for a tool without an entry).
  // InvalidArgument naming the entry otherwise ("calc_gsm8k_reward.create_kwargs ...").
  absl::Status CheckToolsKwargs(const nlohmann::ordered_json& tools_kwargs,
                                const std::vector<std::string>& offered) const;

  // The result of calling tool `name` in `trajectory`, or, as verl's tool agent loop
  // shows failures to the model, "Error when executing tool: " and what went wrong (no
  // such tool among those offered, arguments that are not an object, the tool's own
  // error) with reward 0.
  ToolResult Call(const std::string& name, const nlohmann::ordered_json& arguments,
                  const Trajectory& trajectory = {}) const;

 private:
  std::vector<nlohmann::ordered_json> schemas_;
  std::map<std::string, std::unique_ptr<Tool>> by_name_;
};

}  // namespace rollout::tools
