// Ctrl-C and SIGTERM for a long-running command (the controller, the reward server).
// Construct first thing in main, before any thread exists: it blocks SIGINT and SIGTERM
// in the calling thread (every thread started later inherits that) and receives them on
// its own thread, so a signal never interrupts gRPC or LibTorch code. `on_signal(signo,
// count)` runs on that thread; count is 1 for the first signal, 2 for the second, ...
#pragma once

#include <pthread.h>

#include <functional>
#include <thread>

namespace rollout {

class SignalWatch {
 public:
  explicit SignalWatch(std::function<void(int signo, int count)> on_signal);
  ~SignalWatch();
  SignalWatch(const SignalWatch&) = delete;
  SignalWatch& operator=(const SignalWatch&) = delete;

 private:
  void Run();

  std::function<void(int, int)> on_signal_;
  std::thread thread_;
};

}  // namespace rollout
