#include "common/plugin_library.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace rollout {

absl::StatusOr<PluginLibrary> PluginLibrary::Open(const std::string& path, const PluginAbi& abi) {
  Handle library(dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL));
  if (library == nullptr) {
    return absl::NotFoundError(absl::StrCat("cannot load ", abi.kind, " plug-in ", path, ": ", dlerror()));
  }
  std::map<std::string, void*> functions;
  std::vector<std::string> names = {abi.version_function};
  names.insert(names.end(), abi.functions.begin(), abi.functions.end());
  for (const std::string& name : names) {
    void* function = dlsym(library.get(), name.c_str());
    if (function == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(abi.kind, " plug-in ", path, " does not export ", name, " (see ", abi.header, ")"));
    }
    functions[name] = function;
  }
  if (const int version = reinterpret_cast<int (*)()>(functions.at(abi.version_function))(); version != abi.version) {
    return absl::InvalidArgumentError(absl::StrCat(abi.kind, " plug-in ", path, " was built for ", abi.kind,
                                                   " ABI version ", version, "; this rollout supports version ",
                                                   abi.version, " — rebuild it against this rollout's ", abi.header));
  }
  return PluginLibrary(std::move(library), std::move(functions));
}

void AppendToString(void* string, const char* text, size_t size) {
  if (text != nullptr) static_cast<std::string*>(string)->append(text, size);
}

}  // namespace rollout
