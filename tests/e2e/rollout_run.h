// Helpers for the end-to-end tests: run the rollout binary in a scratch directory (where
// the run's logs and checkpoints go) and read the JSON-lines metrics it writes.
#pragma once

#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tests/support/subprocess.h"

namespace rollout::testing {

// Runs `rollout ARGS` with `dir` as the working directory; `env` is prepended as
// shell variable assignments ("ROLLOUT_CRASH_AT=ckpt.save.after_manifest").
inline CommandResult RolloutIn(const std::string& dir, const std::vector<std::string>& args,
                               const std::string& env = "") {
  const std::string command =
      absl::StrCat("cd '", dir, "' && ", env, " '", ROLLOUT_BINARY_PATH, "' ", absl::StrJoin(args, " "));
  return RunCommand({"/bin/sh", "-c", command}, 600);
}

// One JSON object per line of `path` (a metrics.jsonl file).
inline std::vector<nlohmann::json> ReadJsonLines(const std::string& path) {
  std::ifstream in(path);
  std::vector<nlohmann::json> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

}  // namespace rollout::testing
