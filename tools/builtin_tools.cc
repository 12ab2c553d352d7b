#include "tools/builtin_tools.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "rewards/arithmetic.h"
#include "rewards/builtin_rewards.h"
#include "rewards/python_text.h"
#include "tools/python_values.h"

namespace rollout::tools {
namespace {

class Calculator : public Tool {
 public:
  absl::StatusOr<ToolResult> Execute(const nlohmann::ordered_json& arguments,
                                     const nlohmann::ordered_json& /*create_kwargs*/) const override {
    const auto expression = arguments.find("expression");
    if (expression == arguments.end() || !expression->is_string()) {
      return absl::InvalidArgumentError("calculator takes a string \"expression\"");
    }
    absl::StatusOr<rewards::ArithmeticResult> result =
        rewards::EvaluateArithmetic(expression->get<std::string>());
    if (!result.ok()) return result.status();
    return ToolResult{result->value.ToString()};
  }
};

class Gsm8kTool : public Tool {
 public:
  Gsm8kTool() : reward_(rewards::MakeGsm8kReward({/*method=*/"flexible", /*format_score=*/0.0, /*score=*/1.0})) {}

  absl::Status CheckCreateKwargs(const nlohmann::ordered_json& create_kwargs) const override {
    return Gsm8kGroundTruth(create_kwargs, kScorer).status();
  }

  absl::StatusOr<ToolResult> Execute(const nlohmann::ordered_json& arguments,
                                     const nlohmann::ordered_json& create_kwargs) const override {
    ASSIGN_OR_RETURN(const std::string ground_truth, Gsm8kGroundTruth(create_kwargs, kScorer));
    const auto given = arguments.find("answer");
    const std::string answer = given == arguments.end() ? "" : PythonStr(*given);
    rewards::RewardInput input;
    input.response = absl::StartsWith(answer, "#### ") ? answer : absl::StrCat("#### ", answer);
    input.ground_truth = ground_truth;
    ASSIGN_OR_RETURN(const rewards::RewardOutput scored, reward_->Score(input));
    // verl's reward is the int 0 when its answer pattern, [0-9.,], matches nothing in the
    // response's last 300 characters, else the float score or format_score.
    const bool no_answer =
        rewards::LastCodePoints(input.response, 300).find_first_of("0123456789.,") == absl::string_view::npos;
    // verl's tool reward: 0 for an answer that improves on the instance's best so far,
    // else -0.05; its instance lives for one call, so the best so far is 0.
    return ToolResult{absl::StrCat("Current parsed answer=", PythonRepr(answer),
                                   " reward=", no_answer ? "0" : PythonRepr(scored.score)),
                      scored.score > 0 ? 0.0 : -0.05};
  }

 private:
  static constexpr absl::string_view kScorer = "the gsm8k tool scores answers";
  std::unique_ptr<rewards::RewardFunction> reward_;
};

}  // namespace

absl::StatusOr<std::string> Gsm8kGroundTruth(const nlohmann::ordered_json& kwargs, absl::string_view scorer) {
  const auto ground_truth = kwargs.find("ground_truth");
  if (ground_truth == kwargs.end()) {
    return absl::InvalidArgumentError(absl::StrCat("needs a ground_truth, which ", scorer, " against"));
  }
  if (ground_truth->is_string()) return ground_truth->get<std::string>();
  if (ground_truth->is_number_integer()) return ground_truth->dump();
  return absl::InvalidArgumentError(
      absl::StrCat("has a ground_truth that is ", ground_truth->type_name(), ", not a string or an integer"));
}

std::vector<std::string> BuiltinToolNames() { return {"calculator", "gsm8k", "verl.tools.gsm8k_tool.Gsm8kTool"}; }

absl::StatusOr<std::unique_ptr<Tool>> MakeBuiltinTool(const std::string& class_name,
                                                      const nlohmann::ordered_json& config) {
  if (class_name == "calculator") {
    if (!config.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("calculator takes no config; got ", config.dump()));
    }
    return std::make_unique<Calculator>();
  }
  if (class_name == "gsm8k" || class_name == "verl.tools.gsm8k_tool.Gsm8kTool") {
    if (!config.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(class_name, " takes no config; got ", config.dump()));
    }
    return std::make_unique<Gsm8kTool>();
  }
  return absl::InvalidArgumentError(absl::StrCat("no built-in tool has class_name '", class_name,
                                                 "' (Python tools cannot be loaded); the built-in tools: ",
                                                 absl::StrJoin(BuiltinToolNames(), ", "),
                                                 "; a tool plug-in is class_name plugin (tools/plugin_api.h)"));
}

}  // namespace rollout::tools
