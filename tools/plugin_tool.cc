#include "tools/plugin_tool.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/shared_library.h"
#include "tools/plugin_api.h"

namespace rollout::tools {
namespace {

using AbiVersionFn = int (*)();
using CreateFn = void* (*)(const char*, char*, size_t);
using ExecuteFn = int (*)(void*, const char*, const char*, RolloutToolWrite, void*, double*);
using DestroyFn = void (*)(void*);

class PluginTool final : public Tool {
 public:
  PluginTool(SharedLibrary library, std::string path, void* tool, ExecuteFn execute, DestroyFn destroy)
      : library_(std::move(library)), path_(std::move(path)), tool_(tool), execute_(execute), destroy_(destroy) {}
  ~PluginTool() override { destroy_(tool_); }
  PluginTool(const PluginTool&) = delete;
  PluginTool& operator=(const PluginTool&) = delete;

  absl::StatusOr<ToolResult> Execute(const nlohmann::ordered_json& arguments,
                                     const nlohmann::ordered_json& create_kwargs) const override {
    ToolResult result;
    const int rc = execute_(tool_, arguments.dump().c_str(), create_kwargs.dump().c_str(), &Append, &result.text,
                            &result.reward);
    if (rc != 0) {
      return absl::InternalError(result.text.empty() ? absl::StrCat(path_, " failed (code ", rc, ")") : result.text);
    }
    return result;
  }

 private:
  static void Append(void* context, const char* text, size_t size) {
    if (text != nullptr) static_cast<std::string*>(context)->append(text, size);
  }

  SharedLibrary library_;  // first: unloaded after the tool is destroyed
  std::string path_;
  void* tool_;
  ExecuteFn execute_;
  DestroyFn destroy_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Tool>> LoadToolPlugin(const std::string& library, const nlohmann::ordered_json& config) {
  SharedLibrary handle(dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL));
  if (handle == nullptr) return absl::NotFoundError(absl::StrCat("cannot load tool plug-in ", library, ": ", dlerror()));
  auto symbol = [&](const char* name) { return dlsym(handle.get(), name); };
  const auto abi_version = reinterpret_cast<AbiVersionFn>(symbol("rollout_tool_abi_version"));
  const auto create = reinterpret_cast<CreateFn>(symbol("rollout_tool_create"));
  const auto execute = reinterpret_cast<ExecuteFn>(symbol("rollout_tool_execute"));
  const auto destroy = reinterpret_cast<DestroyFn>(symbol("rollout_tool_destroy"));
  for (const auto& [found, name] : {std::pair<bool, const char*>{abi_version != nullptr, "rollout_tool_abi_version"},
                                    {create != nullptr, "rollout_tool_create"},
                                    {execute != nullptr, "rollout_tool_execute"},
                                    {destroy != nullptr, "rollout_tool_destroy"}}) {
    if (!found) {
      return absl::InvalidArgumentError(
          absl::StrCat("tool plug-in ", library, " does not export ", name, " (see tools/plugin_api.h)"));
    }
  }
  if (const int version = abi_version(); version != ROLLOUT_TOOL_ABI_VERSION) {
    return absl::InvalidArgumentError(absl::StrCat("tool plug-in ", library, " was built for tool ABI version ", version,
                                                   "; this rollout supports version ", ROLLOUT_TOOL_ABI_VERSION,
                                                   " — rebuild it against this rollout's tools/plugin_api.h"));
  }
  char error[512] = {0};
  void* tool = create(config.dump().c_str(), error, sizeof(error));
  if (tool == nullptr) {
    error[sizeof(error) - 1] = '\0';
    return absl::InvalidArgumentError(absl::StrCat("tool plug-in ", library, " could not create its tool: ", error));
  }
  return std::make_unique<PluginTool>(std::move(handle), library, tool, execute, destroy);
}

}  // namespace rollout::tools
