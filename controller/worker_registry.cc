#include "controller/worker_registry.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace rollout::controller {

std::string DescribeWorker(const WorkerInfo& info) {
  const WorkerSlot& s = info.slot;
  std::string text = absl::StrCat("worker ", s.worker_id, " (pool ", s.pool, ", rank ", s.rank,
                                  "/", s.world, ", ", absl::StrJoin(s.roles, "+"));
  if (info.pid != 0) absl::StrAppend(&text, ", pid ", info.pid);
  return text + ")";
}

WorkerRegistry::WorkerRegistry(std::vector<WorkerSlot> slots) {
  for (WorkerSlot& slot : slots) {
    WorkerInfo info;
    info.slot = std::move(slot);
    workers_.push_back(std::move(info));
  }
}

absl::Status WorkerRegistry::Register(const wire::RegisterRequest& request) {
  absl::MutexLock lock(&mutex_);
  const int id = request.worker_id();
  if (id < 0 || id >= static_cast<int>(workers_.size())) {
    return absl::InvalidArgumentError(
        absl::StrCat("worker id ", id, " is not in this run's placement"));
  }
  WorkerInfo& info = workers_[id];
  if (info.registered) {
    return absl::AlreadyExistsError(absl::StrCat(DescribeWorker(info), " registered twice"));
  }
  info.registered = true;
  info.address = request.address();
  info.pid = request.pid();
  info.hostname = request.hostname();
  info.last_heartbeat = absl::Now();
  return absl::OkStatus();
}

absl::Status WorkerRegistry::Heartbeat(int worker_id) {
  absl::MutexLock lock(&mutex_);
  if (worker_id < 0 || worker_id >= static_cast<int>(workers_.size()) ||
      !workers_[worker_id].registered) {
    return absl::NotFoundError(absl::StrCat("worker ", worker_id, " is not registered"));
  }
  workers_[worker_id].last_heartbeat = absl::Now();
  return absl::OkStatus();
}

absl::Status WorkerRegistry::WaitForAll(absl::Time deadline,
                                        const std::function<absl::Status()>& failure) {
  auto all_registered = [this]() ABSL_SHARED_LOCKS_REQUIRED(mutex_) {
    for (const WorkerInfo& info : workers_) {
      if (!info.registered) return false;
    }
    return true;
  };
  while (true) {
    if (absl::Status failed = failure(); !failed.ok()) return failed;
    absl::MutexLock lock(&mutex_);
    if (all_registered()) return absl::OkStatus();
    if (absl::Now() >= deadline) {
      std::vector<std::string> missing;
      for (const WorkerInfo& info : workers_) {
        if (!info.registered) missing.push_back(DescribeWorker(info));
      }
      return absl::DeadlineExceededError(absl::StrCat(
          "these workers did not register in time (runtime.register_timeout_s): ",
          absl::StrJoin(missing, "; ")));
    }
    mutex_.AwaitWithTimeout(absl::Condition(&all_registered), absl::Milliseconds(50));
  }
}

std::vector<WorkerInfo> WorkerRegistry::Silent(absl::Duration timeout) const {
  absl::MutexLock lock(&mutex_);
  std::vector<WorkerInfo> silent;
  const absl::Time now = absl::Now();
  for (const WorkerInfo& info : workers_) {
    if (info.registered && now - info.last_heartbeat > timeout) silent.push_back(info);
  }
  return silent;
}

std::vector<WorkerInfo> WorkerRegistry::Snapshot() const {
  absl::MutexLock lock(&mutex_);
  return workers_;
}

WorkerInfo WorkerRegistry::Get(int worker_id) const {
  absl::MutexLock lock(&mutex_);
  return workers_.at(worker_id);
}

}  // namespace rollout::controller
