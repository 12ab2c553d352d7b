// A shared library opened with dlopen(), closed (dlclose) when its handle goes: what
// the reward and tool plug-in loaders hold for as long as they call into a plug-in.
#pragma once

#include <dlfcn.h>

#include <memory>

namespace rollout {

struct SharedLibraryCloser {
  void operator()(void* handle) const { dlclose(handle); }
};
using SharedLibrary = std::unique_ptr<void, SharedLibraryCloser>;

}  // namespace rollout
