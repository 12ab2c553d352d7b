// The worker's side of the Controller service: registration, then heartbeats that
// double as a watchdog. If the controller cannot be reached for `heartbeat_timeout`
// (or the launching parent process is gone), the worker is orphaned: `on_lost` runs
// once on the heartbeat thread and is expected to end the process.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "proto/runtime.grpc.pb.h"

namespace rollout::workers {

struct ControllerLinkOptions {
  std::string controller_address;  // host:port
  std::string run_token;
  int worker_id = 0;
  absl::Duration heartbeat_interval = absl::Milliseconds(500);
  absl::Duration heartbeat_timeout = absl::Seconds(4);
  // The launcher's pid; when our parent changes, the launcher died. 0: do not check.
  int64_t parent_pid = 0;
};

class ControllerLink {
 public:
  explicit ControllerLink(ControllerLinkOptions options);
  ~ControllerLink();  // stops the heartbeat thread
  ControllerLink(const ControllerLink&) = delete;
  ControllerLink& operator=(const ControllerLink&) = delete;

  // Announces this worker's server; retries while the controller is unreachable
  // until `deadline`. Returns the controller's reply (the resolved recipe).
  absl::StatusOr<wire::RegisterReply> Register(const std::string& worker_address,
                                               absl::Time deadline);

  void StartHeartbeats(std::function<void(const std::string& why)> on_lost);

 private:
  void HeartbeatLoop();

  const ControllerLinkOptions options_;
  std::unique_ptr<wire::Controller::Stub> stub_;
  std::function<void(const std::string&)> on_lost_;
  absl::Notification stop_;
  std::thread heartbeat_thread_;
};

}  // namespace rollout::workers
