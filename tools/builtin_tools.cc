#include "tools/builtin_tools.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "rewards/arithmetic.h"

namespace rollout::tools {
namespace {

class Calculator : public Tool {
 public:
  absl::StatusOr<std::string> Execute(const nlohmann::ordered_json& arguments) const override {
    const auto expression = arguments.find("expression");
    if (expression == arguments.end() || !expression->is_string()) {
      return absl::InvalidArgumentError("calculator takes a string \"expression\"");
    }
    absl::StatusOr<rewards::ArithmeticResult> result =
        rewards::EvaluateArithmetic(expression->get<std::string>());
    if (!result.ok()) return result.status();
    return result->value.ToString();
  }
};

}  // namespace

std::vector<std::string> BuiltinToolNames() { return {"calculator"}; }

absl::StatusOr<std::unique_ptr<Tool>> MakeBuiltinTool(const std::string& class_name,
                                                      const nlohmann::ordered_json& config) {
  if (class_name == "calculator") {
    if (!config.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("calculator takes no config; got ", config.dump()));
    }
    return std::make_unique<Calculator>();
  }
  return absl::InvalidArgumentError(absl::StrCat("no built-in tool has class_name '", class_name,
                                                 "' (Python tools cannot be loaded); the built-in tools: ",
                                                 absl::StrJoin(BuiltinToolNames(), ", "),
                                                 "; a tool plug-in is class_name plugin (tools/plugin_api.h)"));
}

}  // namespace rollout::tools
