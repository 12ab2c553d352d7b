#include "rewards/helper_process.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/wait_status.h"

extern char** environ;

namespace rollout::rewards {
namespace {

// Runs in the forked child: only async-signal-safe calls until exec.
[[noreturn]] void ExecHelper(char* const* argv, int socket, pid_t parent) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(127);  // the parent died before prctl took effect
  setpgid(0, 0);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  dup2(socket, STDIN_FILENO);  // clears close-on-exec on the copy
  execve(argv[0], argv, environ);
  static const char kMessage[] = "rollout: exec of the reward helper failed\n";
  ssize_t ignored = write(STDERR_FILENO, kMessage, sizeof(kMessage) - 1);
  (void)ignored;
  _exit(127);
}

}  // namespace

absl::StatusOr<std::unique_ptr<HelperProcess>> HelperProcess::Start(
    const std::vector<std::string>& argv) {
  if (argv.empty() || access(argv[0].c_str(), X_OK) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot start a reward helper: '", argv.empty() ? "" : argv[0], "' is not an executable file"));
  }
  std::vector<std::string> storage = argv;
  std::vector<char*> exec_argv;
  for (std::string& arg : storage) exec_argv.push_back(arg.data());
  exec_argv.push_back(nullptr);

  int sockets[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0) {
    return absl::InternalError(absl::StrCat("socketpair for a reward helper: ", strerror(errno)));
  }
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    const int error = errno;
    close(sockets[0]);
    close(sockets[1]);
    return absl::ResourceExhaustedError(absl::StrCat("fork for a reward helper: ", strerror(error)));
  }
  if (pid == 0) ExecHelper(exec_argv.data(), sockets[1], parent);
  close(sockets[1]);
  return std::unique_ptr<HelperProcess>(new HelperProcess(pid, sockets[0]));
}

HelperProcess::~HelperProcess() {
  close(socket_);
  KillAndReap();
}

std::string HelperProcess::KillAndReap() {
  if (reaped_) return "had already ended";
  kill(pid_, SIGKILL);
  int wait_status = 0;
  while (waitpid(pid_, &wait_status, 0) < 0 && errno == EINTR) {
  }
  reaped_ = true;
  return DescribeWaitStatus(wait_status);
}

}  // namespace rollout::rewards
