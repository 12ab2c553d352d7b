#include "controller/worker_monitor.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace rollout::controller {
namespace {

constexpr absl::Duration kPollInterval = absl::Milliseconds(100);

std::string DeathReport(const WorkerInfo& info, const WorkerExit& exit) {
  WorkerInfo described = info;
  described.pid = exit.pid;
  std::string report = absl::StrCat(DescribeWorker(described), " ", exit.how);
  if (exit.stderr_tail.empty()) return report + " (it wrote nothing)";
  return absl::StrCat(report, "; its last output lines:\n    ",
                      absl::StrJoin(exit.stderr_tail, "\n    "));
}

}  // namespace

WorkerMonitor::WorkerMonitor(Launcher* launcher, const WorkerRegistry* registry,
                             RunHealth* health, absl::Duration heartbeat_timeout)
    : launcher_(launcher),
      registry_(registry),
      health_(health),
      heartbeat_timeout_(heartbeat_timeout) {}

WorkerMonitor::~WorkerMonitor() { Stop(); }

void WorkerMonitor::Start() { thread_ = std::thread([this] { Run(); }); }

void WorkerMonitor::Stop() {
  if (!thread_.joinable()) return;
  stop_.Notify();
  thread_.join();
}

void WorkerMonitor::Run() {
  while (!stop_.WaitForNotificationWithTimeout(kPollInterval)) CheckOnce();
}

void WorkerMonitor::CheckOnce() {
  for (const WorkerExit& exit : launcher_->PollExited()) {
    health_->Fail(absl::UnavailableError(DeathReport(registry_->Get(exit.worker_id), exit)));
  }
  for (const WorkerInfo& info : registry_->Silent(heartbeat_timeout_)) {
    health_->Fail(absl::UnavailableError(absl::StrCat(
        DescribeWorker(info), " sent no heartbeat for ", absl::FormatDuration(heartbeat_timeout_),
        " (runtime.heartbeat_timeout_s); it is hung or its host is unreachable")));
  }
}

}  // namespace rollout::controller
