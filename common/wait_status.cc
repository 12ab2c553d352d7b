#include "common/wait_status.h"

#include <sys/wait.h>

#include <cstring>

#include "absl/strings/str_cat.h"

namespace rollout {

std::string DescribeWaitStatus(int wait_status) {
  if (WIFEXITED(wait_status)) return absl::StrCat("exited with status ", WEXITSTATUS(wait_status));
  if (WIFSIGNALED(wait_status)) {
    const int signo = WTERMSIG(wait_status);
    const char* abbrev = sigabbrev_np(signo);
    return absl::StrCat("was killed by signal ", signo, abbrev ? absl::StrCat(" (SIG", abbrev, ")") : "");
  }
  return absl::StrCat("ended with wait status ", wait_status);
}

}  // namespace rollout
