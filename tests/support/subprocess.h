// Test support: run a program as a child with its output captured, and look at
// processes through /proc.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace rollout::testing {

class Subprocess {
 public:
  // Starts argv[0] with stdout and stderr going to one captured pipe.
  explicit Subprocess(const std::vector<std::string>& argv);
  ~Subprocess();  // SIGKILLs and reaps the child if it is still running

  pid_t pid() const { return pid_; }
  // Reads output until a line starting with `prefix` arrives (returned whole) or
  // `timeout_s` passes (empty string).
  std::string WaitForLine(const std::string& prefix, double timeout_s);
  // Waits for the exit; returns the waitpid status, or -1 after `timeout_s`.
  int Wait(double timeout_s);
  // Everything the child wrote so far (reads what is pending first).
  std::string Output();

 private:
  void ReadAvailable(int timeout_ms);

  pid_t pid_ = -1;
  int fd_ = -1;
  bool reaped_ = false;
  std::string output_;
  size_t scanned_ = 0;  // output_ bytes already matched against by WaitForLine
};

// How a program run to completion ended.
struct CommandResult {
  int exit_code = -1;  // -1: killed by a signal or still running at the timeout
  std::string output;  // stdout and stderr
};

// Runs `argv` to its exit (or `timeout_s`, then kills it) with its output captured.
CommandResult RunCommand(const std::vector<std::string>& argv, double timeout_s = 120);

// True while `pid` exists and is not a zombie.
bool ProcessRunning(pid_t pid);

// The live (not zombie) child processes of this process.
std::vector<pid_t> ChildPids();

// Makes this process adopt orphaned descendants (PR_SET_CHILD_SUBREAPER) so a test
// can reap workers whose controller it killed.
void BecomeSubreaper();

// Reaps any exited children of this process without blocking.
void ReapZombies();

}  // namespace rollout::testing
