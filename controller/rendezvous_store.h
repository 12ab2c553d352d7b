// The key-value store behind the Controller service's StoreSet / StoreGet: how the
// workers of a pool find each other for their collectives (Gloo's connection
// addresses, NCCL's unique id; see workers/communicator.h). Keys are written once;
// readers poll until the key they wait for appears. Small by design: at most
// kMaxKeys keys of kMaxKeyBytes, values of kMaxValueBytes.
// Thread-safe.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"

namespace rollout::controller {

class RendezvousStore {
 public:
  static constexpr size_t kMaxKeys = 4096;
  static constexpr size_t kMaxKeyBytes = 256;
  static constexpr size_t kMaxValueBytes = 64 * 1024;

  // AlreadyExists when `key` holds another value (writing the same value again is OK,
  // so a retried RPC succeeds); InvalidArgument for an empty or oversized key or value,
  // ResourceExhausted past kMaxKeys.
  absl::Status Set(const std::string& key, const std::string& value);
  // The value, or nullopt while the key has not been written.
  std::optional<std::string> Get(const std::string& key) const;

 private:
  mutable absl::Mutex mu_;
  std::map<std::string, std::string> values_ ABSL_GUARDED_BY(mu_);
};

}  // namespace rollout::controller
