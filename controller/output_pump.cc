#include "controller/output_pump.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

namespace rollout::controller {

OutputPump::OutputPump(int fd, size_t keep_lines)
    : fd_(fd), keep_lines_(keep_lines), thread_([this] { Run(); }) {}

OutputPump::~OutputPump() {
  stop_ = true;
  thread_.join();
}

bool OutputPump::WaitForEnd(absl::Duration timeout) {
  return ended_.WaitForNotificationWithTimeout(timeout);
}

std::vector<std::string> OutputPump::Tail() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return std::vector<std::string>(tail_.begin(), tail_.end());
}

void OutputPump::AddLine(std::string line) {
  std::fprintf(stderr, "%s\n", line.c_str());
  std::lock_guard<std::mutex> lock(mutex_);
  tail_.push_back(std::move(line));
  if (tail_.size() > keep_lines_) tail_.pop_front();
}

void OutputPump::Run() {
  std::string partial;
  char buffer[4096];
  while (!stop_) {
    // Poll with a timeout so the destructor can stop a pump whose pipe a grandchild
    // still holds open.
    pollfd readable{fd_, POLLIN, 0};
    const int ready = poll(&readable, 1, /*timeout_ms=*/100);
    if (ready == 0 || (ready < 0 && errno == EINTR)) continue;
    if (ready < 0) break;
    const ssize_t n = read(fd_, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    partial.append(buffer, n);
    size_t start = 0;
    for (size_t newline; (newline = partial.find('\n', start)) != std::string::npos;
         start = newline + 1) {
      AddLine(partial.substr(start, newline - start));
    }
    partial.erase(0, start);
  }
  if (!partial.empty()) AddLine(partial);
  close(fd_);
  ended_.Notify();
}

}  // namespace rollout::controller
