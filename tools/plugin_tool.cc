#include "tools/plugin_tool.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/plugin_library.h"
#include "common/status_macros.h"
#include "tools/plugin_api.h"

namespace rollout::tools {
namespace {

using CreateFn = void* (*)(const char*, char*, size_t);
using ExecuteFn = int (*)(void*, const char*, const char*, RolloutToolWrite, void*, double*);
using DestroyFn = void (*)(void*);

class PluginTool final : public Tool {
 public:
  PluginTool(PluginLibrary library, std::string path, void* tool, ExecuteFn execute, DestroyFn destroy)
      : library_(std::move(library)), path_(std::move(path)), tool_(tool), execute_(execute), destroy_(destroy) {}
  ~PluginTool() override { destroy_(tool_); }
  PluginTool(const PluginTool&) = delete;
  PluginTool& operator=(const PluginTool&) = delete;

  absl::StatusOr<ToolResult> Execute(const nlohmann::ordered_json& arguments,
                                     const nlohmann::ordered_json& create_kwargs) const override {
    ToolResult result;
    const int rc = execute_(tool_, arguments.dump().c_str(), create_kwargs.dump().c_str(), &AppendToString,
                            &result.text, &result.reward);
    if (rc != 0) {
      return absl::InternalError(result.text.empty() ? absl::StrCat(path_, " failed (code ", rc, ")") : result.text);
    }
    return result;
  }

 private:
  PluginLibrary library_;  // first: unloaded after the tool is destroyed
  std::string path_;
  void* tool_;
  ExecuteFn execute_;
  DestroyFn destroy_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Tool>> LoadToolPlugin(const std::string& library, const nlohmann::ordered_json& config) {
  ASSIGN_OR_RETURN(
      PluginLibrary plugin,
      PluginLibrary::Open(library, {"tool", "tools/plugin_api.h", "rollout_tool_abi_version", ROLLOUT_TOOL_ABI_VERSION,
                                    {"rollout_tool_create", "rollout_tool_execute", "rollout_tool_destroy"}}));
  char error[512] = {0};
  void* tool = plugin.Get<CreateFn>("rollout_tool_create")(config.dump().c_str(), error, sizeof(error));
  if (tool == nullptr) {
    error[sizeof(error) - 1] = '\0';
    return absl::InvalidArgumentError(absl::StrCat("tool plug-in ", library, " could not create its tool: ", error));
  }
  const auto execute = plugin.Get<ExecuteFn>("rollout_tool_execute");
  const auto destroy = plugin.Get<DestroyFn>("rollout_tool_destroy");
  return std::make_unique<PluginTool>(std::move(plugin), library, tool, execute, destroy);
}

}  // namespace rollout::tools
