// Helpers for the end-to-end tests: run the rollout binary in a scratch directory (where
// the run's logs and checkpoints go) and read the JSON-lines metrics it writes.
#pragma once

#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/file_util.h"
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

// Whether a step metric differs between runs however they are seeded: wall-clock
// times, the throughput and memory (workers/memory_metrics.h).
inline bool RunDependentMetric(const std::string& name) {
  return absl::StartsWith(name, "timing_s/") || name == "perf/throughput" || absl::StrContains(name, "memory");
}

// 16 prompts (4 steps an epoch at 4 a step) whose ground truths are single
// characters: the tiny random model's responses contain them about half the time, so
// with the misbehaving test plug-in (1 when the response contains the ground truth)
// the scores vary and GRPO has advantages to learn from (exact answers would all
// score 0).
inline std::string LetterRows() {
  std::string rows;
  for (int i = 0; i < 16; ++i) {
    const std::string truth(1, "ea 1"[i % 4]);
    absl::StrAppend(&rows, "{\"prompt\": \"", i, "+", i + 3, "=\", \"ground_truth\": \"", truth,
                    "\", \"data_source\": \"letters\"}\n");
  }
  return rows;
}

// One JSON object per line of `path` (a metrics.jsonl file).
inline std::vector<nlohmann::json> ReadJsonLines(const std::string& path) {
  std::ifstream in(path);
  std::vector<nlohmann::json> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

// The metrics of each step of the run `name`'s JSON-lines log under `dir` (the last
// line of a step wins: a resumed run appends to the log of the run it continues).
inline std::map<int, nlohmann::json> StepMetrics(const std::string& dir, const std::string& name) {
  std::map<int, nlohmann::json> steps;
  const std::string path = absl::StrCat(dir, "/jsonl_log/rollout_demo/", name, "/metrics.jsonl");
  for (const nlohmann::json& line : ReadJsonLines(path)) {
    steps[line["step"].get<int>()] = line;
  }
  return steps;
}

// The bytes of the file at `path`, or "missing: <why>" (for comparing files that may
// be absent in EXPECTs).
inline std::string FileContents(const std::string& path) {
  absl::StatusOr<std::string> contents = ReadFile(path);
  return contents.ok() ? *contents : "missing: " + std::string(contents.status().message());
}

// Writes the addition dataset (`rollout gen-data arithmetic --operators +`) with
// `train` and `val` prompts to data/arith_add under `dir`; the exit status.
inline int MakeAdditionData(const std::string& dir, int train, int val) {
  return RolloutIn(dir, {"gen-data", "arithmetic", "--operators", "+", "--out", "data/arith_add", "--train",
                         std::to_string(train), "--val", std::to_string(val)})
      .exit_code;
}

// `rollout train recipes/RECIPE` in `dir` as the GPU recipes' tests run them on the CPU:
// the data files given, the tiny Qwen2 fixture in float32 on the CPU, no checkpoints,
// console and JSON-lines logs, `total_steps` steps; `overrides` change the sizes.
inline CommandResult RunRecipeOnCpu(const std::string& dir, const std::string& recipe, const std::string& train_file,
                                    const std::string& val_file, int total_steps,
                                    const std::vector<std::string>& overrides) {
  const std::string source = ROLLOUT_SOURCE_DIR;
  std::vector<std::string> args = {"train",
                                   source + "/recipes/" + recipe,
                                   "data.train_files=[" + train_file + "]",
                                   "data.val_files=[" + val_file + "]",
                                   "actor.model.path=" + source + "/tests/data/tiny-qwen2",
                                   "trainer.device=cpu",
                                   "actor.model.dtype=float32",
                                   absl::StrCat("trainer.total_training_steps=", total_steps),
                                   "trainer.save_freq=-1",
                                   "trainer.logger=[console,jsonl]"};
  args.insert(args.end(), overrides.begin(), overrides.end());
  return RolloutIn(dir, args);
}

// The device the end-to-end runs train on: cpu, or what ROLLOUT_E2E_DEVICE names
// (cuda: one GPU per worker).
inline std::string Device() {
  const char* device = std::getenv("ROLLOUT_E2E_DEVICE");
  return device != nullptr ? device : "cpu";
}

}  // namespace rollout::testing
