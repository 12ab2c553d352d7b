// How the workers of a pool meet before their first collective: a key-value store
// shared by the run (the controller's StoreSet / StoreGet, controller/rendezvous_store.h).
// Keys are written once.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace rollout::workers {

class RendezvousClient {
 public:
  virtual ~RendezvousClient() = default;

  virtual absl::Status Set(const std::string& key, const std::string& value) = 0;
  // Waits until `key` is written, up to `timeout`: DeadlineExceeded naming the key.
  virtual absl::StatusOr<std::string> Get(const std::string& key, absl::Duration timeout) = 0;
};

}  // namespace rollout::workers
