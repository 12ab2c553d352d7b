#include "tests/support/subprocess.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace rollout::testing {
namespace {

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

Subprocess::Subprocess(const std::vector<std::string>& argv) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return;
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  pid_ = fork();
  if (pid_ == 0) {
    dup2(fds[1], STDOUT_FILENO);
    dup2(fds[1], STDERR_FILENO);
    execv(args[0], args.data());
    _exit(127);
  }
  close(fds[1]);
  fd_ = fds[0];
}

Subprocess::~Subprocess() {
  if (pid_ > 0 && !reaped_) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (fd_ >= 0) close(fd_);
}

void Subprocess::ReadAvailable(int timeout_ms) {
  pollfd readable{fd_, POLLIN, 0};
  while (poll(&readable, 1, timeout_ms) > 0) {
    char buffer[4096];
    const ssize_t n = read(fd_, buffer, sizeof(buffer));
    if (n <= 0) return;
    output_.append(buffer, n);
    timeout_ms = 0;
  }
}

std::string Subprocess::WaitForLine(const std::string& prefix, double timeout_s) {
  const double deadline = Now() + timeout_s;
  while (true) {
    size_t line_start = scanned_;
    for (size_t newline; (newline = output_.find('\n', line_start)) != std::string::npos;
         line_start = newline + 1) {
      std::string line = output_.substr(line_start, newline - line_start);
      if (line.compare(0, prefix.size(), prefix) == 0) {
        scanned_ = newline + 1;
        return line;
      }
    }
    scanned_ = line_start;
    if (Now() >= deadline) return "";
    ReadAvailable(50);
  }
}

int Subprocess::Wait(double timeout_s) {
  const double deadline = Now() + timeout_s;
  while (true) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      reaped_ = true;
      ReadAvailable(100);
      return status;
    }
    if (Now() >= deadline) return -1;
    ReadAvailable(20);
  }
}

std::string Subprocess::Output() {
  ReadAvailable(0);
  return output_;
}

namespace {

// The state letter and parent pid from /proc/PID/stat; false when there is no such process.
bool ReadProcStat(pid_t pid, char* state, pid_t* parent) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return false;
  std::string content((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  // Format: pid (comm) state ppid ...; comm may contain spaces, so find the last ')'.
  const size_t close = content.rfind(')');
  if (close == std::string::npos || close + 2 >= content.size()) return false;
  *state = content[close + 2];
  *parent = static_cast<pid_t>(std::atol(content.c_str() + close + 3));
  return true;
}

}  // namespace

bool ProcessRunning(pid_t pid) {
  char state = 0;
  pid_t parent = 0;
  return ReadProcStat(pid, &state, &parent) && state != 'Z' && state != 'X';
}

std::vector<pid_t> ChildPids() {
  std::vector<pid_t> children;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return children;
  while (const dirent* entry = readdir(proc)) {
    const pid_t pid = static_cast<pid_t>(std::atol(entry->d_name));
    char state = 0;
    pid_t parent = 0;
    if (pid > 0 && ReadProcStat(pid, &state, &parent) && parent == getpid() && state != 'Z' &&
        state != 'X') {
      children.push_back(pid);
    }
  }
  closedir(proc);
  return children;
}

void BecomeSubreaper() { prctl(PR_SET_CHILD_SUBREAPER, 1); }

void ReapZombies() {
  while (waitpid(-1, nullptr, WNOHANG) > 0) {
  }
}

CommandResult RunCommand(const std::vector<std::string>& argv, double timeout_s) {
  Subprocess process(argv);
  const int status = process.Wait(timeout_s);
  CommandResult result;
  result.output = process.Output();
  if (status != -1 && WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  return result;
}

}  // namespace rollout::testing
