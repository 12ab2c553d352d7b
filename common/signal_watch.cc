#include "common/signal_watch.h"

#include <signal.h>

namespace rollout {
namespace {

// SIGUSR1 is used only to wake the watching thread when it should end.
sigset_t WatchedSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGUSR1);
  return set;
}

}  // namespace

SignalWatch::SignalWatch(std::function<void(int, int)> on_signal)
    : on_signal_(std::move(on_signal)) {
  const sigset_t set = WatchedSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  thread_ = std::thread([this] { Run(); });
}

SignalWatch::~SignalWatch() {
  pthread_kill(thread_.native_handle(), SIGUSR1);
  thread_.join();
}

void SignalWatch::Run() {
  const sigset_t set = WatchedSignals();
  int count = 0;
  while (true) {
    int signo = 0;
    if (sigwait(&set, &signo) != 0) continue;
    if (signo == SIGUSR1) return;
    on_signal_(signo, ++count);
  }
}

}  // namespace rollout
