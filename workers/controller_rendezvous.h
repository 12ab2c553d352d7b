// The RendezvousClient (rendezvous_client.h) of worker processes: the controller's
// StoreSet / StoreGet RPCs, with the run token. Get polls until the key appears.
// Thread-safe.
#pragma once

#include <memory>
#include <string>

#include "proto/runtime.grpc.pb.h"
#include "workers/rendezvous_client.h"

namespace rollout::workers {

class ControllerRendezvous final : public RendezvousClient {
 public:
  ControllerRendezvous(const std::string& controller_address, std::string run_token);

  absl::Status Set(const std::string& key, const std::string& value) override;
  absl::StatusOr<std::string> Get(const std::string& key, absl::Duration timeout) override;

 private:
  const std::string controller_address_;
  const std::string run_token_;
  std::unique_ptr<wire::Controller::Stub> stub_;
};

}  // namespace rollout::workers
