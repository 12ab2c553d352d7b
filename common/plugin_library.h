// A plug-in's shared library opened with its C ABI's functions looked up and its version
// checked, and the write callback of the ABIs that return text: what the reward, tool
// and interaction plug-in loaders share (rewards/plugin_api.h, tools/plugin_api.h,
// tools/interaction_plugin_api.h).
#pragma once

#include <dlfcn.h>

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace rollout {

// What a kind of plug-in exports.
struct PluginAbi {
  std::string kind;              // how messages name it: "reward", "tool", "interaction"
  std::string header;            // where the ABI is declared, e.g. "tools/plugin_api.h"
  std::string version_function;  // int (*)(void), returning the version it was built for
  int version = 0;               // the version this build supports
  std::vector<std::string> functions;  // the others it must export
};

// Closed (dlclose) when it goes: a loader keeps it for as long as it calls into it.
class PluginLibrary {
 public:
  // The library at `path`, loaded (RTLD_NOW | RTLD_LOCAL). NotFound when it cannot be
  // loaded ("cannot load tool plug-in PATH: <dlerror>"); InvalidArgument when it does
  // not export one of abi's functions ("... does not export NAME (see HEADER)") or was
  // built for another version (saying to rebuild it against HEADER).
  static absl::StatusOr<PluginLibrary> Open(const std::string& path, const PluginAbi& abi);

  // The address of `name`, one of abi.functions, cast to its type by the caller.
  template <typename Function>
  Function Get(const std::string& name) const {
    return reinterpret_cast<Function>(functions_.at(name));
  }

 private:
  struct Closer {
    void operator()(void* handle) const { dlclose(handle); }
  };
  using Handle = std::unique_ptr<void, Closer>;

  PluginLibrary(Handle library, std::map<std::string, void*> functions)
      : library_(std::move(library)), functions_(std::move(functions)) {}

  Handle library_;
  std::map<std::string, void*> functions_;
};

// A plug-in's write callback (the tool and interaction ABIs' RolloutToolWrite,
// RolloutInteractionWrite): appends `size` bytes of `text` to the std::string `string`
// points at.
void AppendToString(void* string, const char* text, size_t size);

}  // namespace rollout
