// A child process whose stdin is one end of a stream socket (the other end stays here),
// for talking frames (frame_io.h) with it. The child runs in its own process group, so
// a Ctrl-C in the terminal reaches only us, and gets SIGKILL when the thread that
// started it exits — start helpers from a thread that lives as long as they do.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace rollout::rewards {

class HelperProcess {
 public:
  // Starts argv[0] (an executable path) with `argv`. FailedPrecondition when it is not
  // executable; errors of socketpair/fork otherwise.
  static absl::StatusOr<std::unique_ptr<HelperProcess>> Start(const std::vector<std::string>& argv);

  ~HelperProcess();  // kills and reaps the child if still there

  HelperProcess(const HelperProcess&) = delete;
  HelperProcess& operator=(const HelperProcess&) = delete;

  int socket() const { return socket_; }
  pid_t pid() const { return pid_; }

  // SIGKILLs the child (if it is still running), reaps it and says how it ended
  // ("was killed by signal 11 (SIGSEGV)"), as common/wait_status.h words it.
  std::string KillAndReap();

 private:
  HelperProcess(pid_t pid, int socket) : pid_(pid), socket_(socket) {}

  pid_t pid_;
  int socket_;
  bool reaped_ = false;
};

}  // namespace rollout::rewards
