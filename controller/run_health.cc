#include "controller/run_health.h"

namespace rollout::controller {

void RunHealth::Fail(absl::Status status) {
  absl::MutexLock lock(&mutex_);
  if (!failure_.ok() || status.ok()) return;
  failure_ = std::move(status);
  for (grpc::ClientContext* context : in_flight_) context->TryCancel();
}

absl::Status RunHealth::status() const {
  absl::MutexLock lock(&mutex_);
  return failure_;
}

bool RunHealth::WaitForFailure(absl::Duration timeout) const {
  absl::MutexLock lock(&mutex_);
  auto failed = [this]() ABSL_SHARED_LOCKS_REQUIRED(mutex_) { return !failure_.ok(); };
  return mutex_.AwaitWithTimeout(absl::Condition(&failed), timeout);
}

absl::Status RunHealth::Track(grpc::ClientContext* context) {
  absl::MutexLock lock(&mutex_);
  if (!failure_.ok()) return failure_;
  in_flight_.insert(context);
  return absl::OkStatus();
}

void RunHealth::Untrack(grpc::ClientContext* context) {
  absl::MutexLock lock(&mutex_);
  in_flight_.erase(context);
}

}  // namespace rollout::controller
