// Reads a child's output pipe on its own thread: forwards every line to our stderr
// (worker log lines already carry their worker tag) and keeps the last lines so a
// failure report can quote them.
#pragma once

#include <atomic>
#include <cstddef>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

namespace rollout::controller {

class OutputPump {
 public:
  // Takes ownership of `fd` (closed at end of file).
  OutputPump(int fd, size_t keep_lines);
  // Stops reading (output not read by then is dropped) and joins the thread; call
  // WaitForEnd() first to keep everything the child wrote.
  ~OutputPump();
  OutputPump(const OutputPump&) = delete;
  OutputPump& operator=(const OutputPump&) = delete;

  // Waits until the pipe closed (the child and anything holding its output ended) or
  // `timeout` passed; true when closed.
  bool WaitForEnd(absl::Duration timeout);
  std::vector<std::string> Tail() const;

 private:
  void Run();
  void AddLine(std::string line);

  const int fd_;
  const size_t keep_lines_;
  mutable std::mutex mutex_;
  std::deque<std::string> tail_;
  absl::Notification ended_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace rollout::controller
