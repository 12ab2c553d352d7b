// Named crash points for fault-injection tests of the checkpoint protocol.
//
// Code with durable steps calls CrashPoint("ckpt.save.after_rename") between two of
// them. Nothing happens unless that name was armed; an armed point writes
//   rollout: crash point <name> reached
// to stderr and ends the process at once with _exit(kCrashPointExitCode): no
// destructors, no atexit handlers, no stdio flush, like a crash. (The page cache
// keeps what was written, as after a real process crash; power loss is not
// simulated.) A distinct exit code lets a test tell "died at the point" from any
// other death.
//
// Libraries never read the environment (STYLE rule 9): the `rollout` binary arms
// the point named by ROLLOUT_CRASH_AT at start-up. Thread-safe.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace rollout {

inline constexpr int kCrashPointExitCode = 86;

// Every point the code calls, in protocol order. Calling CrashPoint() with a name
// that is not listed is a programmer error (CHECK).
const std::vector<std::string>& KnownCrashPoints();

// Arms `name` (replacing a point armed earlier). InvalidArgument for a name that is
// not in KnownCrashPoints(); the message lists them.
absl::Status ArmCrashPoint(absl::string_view name);

// Dies as described above when `name` is armed; otherwise returns.
void CrashPoint(absl::string_view name);

}  // namespace rollout
