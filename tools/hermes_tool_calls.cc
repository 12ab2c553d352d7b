#include "tools/hermes_tool_calls.h"

#include <utility>

namespace rollout::tools {
namespace {

constexpr absl::string_view kOpen = "<tool_call>";
constexpr absl::string_view kClose = "</tool_call>";

// The call a block's text holds, or false.
bool ParseCall(absl::string_view block, models::ChatToolCall* call) {
  const nlohmann::ordered_json value = nlohmann::ordered_json::parse(block, nullptr, /*allow_exceptions=*/false);
  if (!value.is_object()) return false;
  const auto name = value.find("name");
  const auto arguments = value.find("arguments");
  if (name == value.end() || !name->is_string() || arguments == value.end()) return false;
  nlohmann::ordered_json object = *arguments;
  if (object.is_string()) {
    object = nlohmann::ordered_json::parse(arguments->get<std::string>(), nullptr, /*allow_exceptions=*/false);
  }
  if (!object.is_object()) return false;
  call->name = name->get<std::string>();
  call->arguments = std::move(object);
  return true;
}

}  // namespace

HermesToolCalls ParseHermesToolCalls(absl::string_view reply) {
  HermesToolCalls parsed;
  size_t from = 0;
  while (true) {
    const size_t open = reply.find(kOpen, from);
    if (open == absl::string_view::npos) break;
    const size_t body = open + kOpen.size();
    const size_t close = reply.find(kClose, body);
    if (close == absl::string_view::npos) break;
    models::ChatToolCall call;
    if (ParseCall(reply.substr(body, close - body), &call)) {
      parsed.calls.push_back(std::move(call));
    } else {
      ++parsed.malformed;
    }
    from = close + kClose.size();
  }
  return parsed;
}

}  // namespace rollout::tools
