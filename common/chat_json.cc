#include "common/chat_json.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace rollout {
namespace {

using nlohmann::ordered_json;

// Call `call` of a message's "tool_calls" with "function" unwrapped (transformers'
// templates take either form), or null when it has neither form.
const ordered_json* FunctionOf(const ordered_json& call) {
  if (!call.is_object()) return nullptr;
  const auto function = call.find("function");
  return function != call.end() ? &*function : &call;
}

absl::Status CheckToolCalls(const ordered_json& calls) {
  if (!calls.is_array() || calls.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("\"tool_calls\" must be a non-empty list, not ", calls.dump()));
  }
  for (size_t i = 0; i < calls.size(); ++i) {
    const ordered_json* function = FunctionOf(calls[i]);
    if (function == nullptr || !function->is_object()) {
      return absl::InvalidArgumentError(
          absl::StrCat("tool call ", i, " is not {\"function\": {\"name\": ..., \"arguments\": ...}}"));
    }
    const auto name = function->find("name");
    if (name == function->end() || !name->is_string()) {
      return absl::InvalidArgumentError(absl::StrCat("tool call ", i, " has no string \"name\""));
    }
    const auto arguments = function->find("arguments");
    if (arguments == function->end() || !(arguments->is_object() || arguments->is_string())) {
      return absl::InvalidArgumentError(absl::StrCat("tool call ", i, " (", name->get<std::string>(),
                                                     ") has no \"arguments\" object or JSON string"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckChatMessage(const ordered_json& message) {
  if (!message.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat("is not a {\"role\": ..., \"content\": ...} object but ",
                                                   message.type_name()));
  }
  const auto role = message.find("role");
  if (role == message.end() || !role->is_string()) return absl::InvalidArgumentError("has no string \"role\"");
  const std::string name = role->get<std::string>();
  if (name != "system" && name != "user" && name != "assistant" && name != "tool") {
    return absl::InvalidArgumentError(
        absl::StrCat("has role '", name, "'; supported roles are system, user, assistant and tool"));
  }
  const auto calls = message.find("tool_calls");
  const bool makes_calls = calls != message.end() && !calls->is_null();
  if (makes_calls) {
    if (name != "assistant") {
      return absl::InvalidArgumentError(
          absl::StrCat("has \"tool_calls\" but role '", name, "'; only assistant messages make tool calls"));
    }
    RETURN_IF_ERROR(CheckToolCalls(*calls));
  }
  const auto content = message.find("content");
  const bool no_content = content == message.end() || content->is_null();
  if (no_content ? !makes_calls : !content->is_string()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "has no string \"content\"", makes_calls ? "" : " (only a message making tool calls may leave it null)"));
  }
  return absl::OkStatus();
}

std::vector<ordered_json> ToolCalls(const ordered_json& message) {
  std::vector<ordered_json> out;
  const auto calls = message.find("tool_calls");
  if (calls == message.end() || calls->is_null()) return out;
  for (const ordered_json& call : *calls) {
    const ordered_json& function = *FunctionOf(call);
    out.push_back({{"name", function.at("name")}, {"arguments", function.at("arguments")}});
  }
  return out;
}

absl::StatusOr<std::vector<ordered_json>> ToolSchemas(const ordered_json& tools) {
  if (tools.is_null()) return std::vector<ordered_json>{};
  ordered_json list = tools;
  if (tools.is_string()) {
    list = ordered_json::parse(tools.get<std::string>(), nullptr, /*allow_exceptions=*/false);
    if (list.is_discarded()) return absl::InvalidArgumentError("is a string but not the JSON text of a list of tools");
  }
  if (!list.is_array()) {
    return absl::InvalidArgumentError(absl::StrCat("must be a list of tool schemas, not ", list.type_name()));
  }
  for (size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_object()) {
      return absl::InvalidArgumentError(
          absl::StrCat("tool ", i, " is not a JSON schema object but ", list[i].type_name()));
    }
  }
  return std::vector<ordered_json>(list.begin(), list.end());
}

}  // namespace rollout
