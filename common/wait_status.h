// How a child process ended, in words, for error messages.
#pragma once

#include <string>

namespace rollout {

// "exited with status 3" / "was killed by signal 11 (SIGSEGV)" for a waitpid status.
std::string DescribeWaitStatus(int wait_status);

}  // namespace rollout
