// The shell of a subcommand that writes its results to --output or stdout (`rollout
// score`, `rollout generate`): parse the flags, print usage for --help, open the output,
// run, and turn the outcome into an exit code with a one-line message.
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/flags.h"

namespace rollout {

// Parses `args` with `flags` (whose targets include `*output_path`), then runs
// `body(out)` with `out` the file *output_path or stdout. Exit codes: 0 success or
// --help; 2 bad flags or an InvalidArgument from `body` (bad input); 1 any other
// failure, including an output file that cannot be written. Errors are printed as
// "rollout <name>: <message>" on stderr.
int RunOutputCommand(const std::string& name, const FlagSet& flags,
                     const std::vector<std::string>& args, const std::string* output_path,
                     const std::function<absl::Status(std::ostream& out)>& body);

}  // namespace rollout
