#include "controller/local_launcher.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/wait_status.h"

extern char** environ;

namespace rollout::controller {
namespace {

constexpr size_t kKeptOutputLines = 30;
constexpr absl::Duration kOutputDrainWait = absl::Milliseconds(300);

// argv/envp arrays built before fork: the child may only make async-signal-safe calls.
struct ExecArgs {
  std::vector<std::string> storage;
  std::vector<char*> argv;
  std::vector<char*> envp;
};

std::unique_ptr<ExecArgs> PrepareExec(const LaunchSpec& spec) {
  auto args = std::make_unique<ExecArgs>();
  std::vector<std::string> env_entries;
  for (char** e = environ; *e != nullptr; ++e) env_entries.emplace_back(*e);
  env_entries.insert(env_entries.end(), spec.env.begin(), spec.env.end());
  args->storage = spec.argv;
  args->storage.insert(args->storage.end(), env_entries.begin(), env_entries.end());
  for (size_t i = 0; i < args->storage.size(); ++i) {
    (i < spec.argv.size() ? args->argv : args->envp).push_back(args->storage[i].data());
  }
  args->argv.push_back(nullptr);
  args->envp.push_back(nullptr);
  return args;
}

// Runs in the forked child: only async-signal-safe calls until exec.
[[noreturn]] void ExecChild(const ExecArgs& args, int output_fd, pid_t parent) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(127);  // the parent died before prctl took effect
  setpgid(0, 0);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);  // the controller blocks SIGINT/SIGTERM
  dup2(output_fd, STDOUT_FILENO);
  dup2(output_fd, STDERR_FILENO);
  execve(args.argv[0], args.argv.data(), args.envp.data());
  static const char kMessage[] = "rollout: exec of the worker binary failed\n";
  ssize_t ignored = write(STDERR_FILENO, kMessage, sizeof(kMessage) - 1);
  (void)ignored;
  _exit(127);
}

}  // namespace

LocalLauncher::~LocalLauncher() { StopAll(absl::ZeroDuration()); }

absl::Status LocalLauncher::Launch(const LaunchSpec& spec) {
  if (spec.argv.empty() || access(spec.argv[0].c_str(), X_OK) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot start ", spec.description, ": '", spec.argv.empty() ? "" : spec.argv[0],
        "' is not an executable file"));
  }
  std::unique_ptr<ExecArgs> args = PrepareExec(spec);
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe for ", spec.description, ": ", strerror(errno)));
  }
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    const int error = errno;
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    return absl::ResourceExhaustedError(
        absl::StrCat("fork for ", spec.description, ": ", strerror(error)));
  }
  if (pid == 0) ExecChild(*args, pipe_fds[1], parent);
  close(pipe_fds[1]);
  Child child;
  child.pid = pid;
  child.output = std::make_unique<OutputPump>(pipe_fds[0], kKeptOutputLines);
  std::lock_guard<std::mutex> lock(mutex_);
  live_[spec.worker_id] = std::move(child);
  return absl::OkStatus();
}

WorkerExit LocalLauncher::Reap(int worker_id, Child& child, int wait_status) {
  child.output->WaitForEnd(kOutputDrainWait);
  WorkerExit exit;
  exit.worker_id = worker_id;
  exit.pid = child.pid;
  exit.how = DescribeWaitStatus(wait_status);
  exit.clean = WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0;
  exit.stderr_tail = child.output->Tail();
  return exit;
}

std::vector<WorkerExit> LocalLauncher::PollExited() {
  std::vector<WorkerExit> exits;
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = live_.begin(); it != live_.end();) {
    int wait_status = 0;
    if (waitpid(static_cast<pid_t>(it->second.pid), &wait_status, WNOHANG) ==
        static_cast<pid_t>(it->second.pid)) {
      exits.push_back(Reap(it->first, it->second, wait_status));
      it = live_.erase(it);
    } else {
      ++it;
    }
  }
  return exits;
}

int64_t LocalLauncher::Pid(int worker_id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = live_.find(worker_id);
  return it == live_.end() ? 0 : it->second.pid;
}

void LocalLauncher::StopAll(absl::Duration grace) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (live_.empty()) return;
  const absl::Time deadline = absl::Now() + grace;
  while (!live_.empty()) {
    for (auto it = live_.begin(); it != live_.end();) {
      int wait_status = 0;
      if (waitpid(static_cast<pid_t>(it->second.pid), &wait_status, WNOHANG) ==
          static_cast<pid_t>(it->second.pid)) {
        it->second.output->WaitForEnd(kOutputDrainWait);
        it = live_.erase(it);
      } else {
        ++it;
      }
    }
    if (live_.empty()) break;
    if (absl::Now() >= deadline) {
      for (auto& [id, child] : live_) kill(static_cast<pid_t>(child.pid), SIGKILL);
      for (auto& [id, child] : live_) waitpid(static_cast<pid_t>(child.pid), nullptr, 0);
      live_.clear();
      break;
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
}

}  // namespace rollout::controller
