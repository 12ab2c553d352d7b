#include "controller/ckpt_scenario.h"

#include <limits.h>
#include <stdlib.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>

#include <algorithm>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "common/crash_point.h"
#include "common/file_util.h"
#include "common/status_macros.h"

namespace rollout::controller {
namespace {

constexpr char kScenarioDir[] = "{scenario_dir}";

// `path` resolved to an absolute path without symlinks; it must exist.
absl::StatusOr<std::string> Absolute(const std::string& path) {
  char resolved[PATH_MAX];
  if (realpath(path.c_str(), resolved) == nullptr) {
    return ErrnoError(absl::StrCat("resolving ", path), errno);
  }
  return std::string(resolved);
}

// Reads one scenario file; every error names the file and the line.
class ScenarioReader {
 public:
  // `dir` is the scenario file's directory as an absolute path: runs start elsewhere.
  ScenarioReader(std::string path, std::string dir) : path_(std::move(path)), dir_(std::move(dir)) {}

  absl::StatusOr<Scenario> Read(const std::string& text);

 private:
  absl::Status Error(const YAML::Node& node, absl::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat(path_, ":", node.Mark().line + 1, ": ", what));
  }
  absl::Status CheckKeys(const YAML::Node& map, absl::string_view context,
                         const std::set<std::string>& allowed) const;
  absl::StatusOr<std::string> String(const YAML::Node& node, absl::string_view key) const;
  absl::StatusOr<int64_t> Int(const YAML::Node& node, absl::string_view key) const;
  absl::StatusOr<std::vector<std::string>> Strings(const YAML::Node& node,
                                                   absl::string_view key) const;
  absl::StatusOr<ScenarioExpectations> Expectations(const YAML::Node& node,
                                                    absl::string_view context) const;
  absl::StatusOr<BitFlip> Flip(const YAML::Node& node, absl::string_view context) const;
  absl::StatusOr<std::vector<BitFlip>> Flips(const YAML::Node& node, absl::string_view context) const;
  absl::StatusOr<RunOutcome> Outcome(const YAML::Node& node, absl::string_view key) const;
  absl::StatusOr<ScenarioRun> Run(const YAML::Node& node, absl::string_view context) const;
  std::string Expand(const std::string& text) const {
    return absl::StrReplaceAll(text, {{kScenarioDir, dir_}});
  }

  std::string path_;
  std::string dir_;
};

absl::Status ScenarioReader::CheckKeys(const YAML::Node& map, absl::string_view context,
                                       const std::set<std::string>& allowed) const {
  if (!map.IsMap()) return Error(map, absl::StrCat(context, " must be a map"));
  for (const auto& entry : map) {
    const std::string key = entry.first.as<std::string>();
    if (allowed.count(key) == 0) {
      return Error(entry.first, absl::StrCat("unknown key '", key, "' in ", context,
                                             " (expected one of: ", absl::StrJoin(allowed, ", "), ")"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ScenarioReader::String(const YAML::Node& node,
                                                   absl::string_view key) const {
  if (!node.IsScalar()) return Error(node, absl::StrCat(key, " must be a string"));
  return Expand(node.as<std::string>());
}

absl::StatusOr<int64_t> ScenarioReader::Int(const YAML::Node& node, absl::string_view key) const {
  int64_t value = 0;
  if (!node.IsScalar() || !absl::SimpleAtoi(node.as<std::string>(), &value)) {
    return Error(node, absl::StrCat(key, " must be an integer"));
  }
  return value;
}

absl::StatusOr<std::vector<std::string>> ScenarioReader::Strings(const YAML::Node& node,
                                                                 absl::string_view key) const {
  if (!node.IsSequence()) return Error(node, absl::StrCat(key, " must be a list"));
  std::vector<std::string> values;
  for (const YAML::Node& item : node) {
    ASSIGN_OR_RETURN(std::string value, String(item, key));
    values.push_back(std::move(value));
  }
  return values;
}

absl::StatusOr<ScenarioExpectations> ScenarioReader::Expectations(const YAML::Node& node,
                                                                  absl::string_view context) const {
  RETURN_IF_ERROR(CheckKeys(node, context,
                            {"resumed_from_step", "files_exist", "files_absent", "tracker",
                             "checkpoints_kept", "same_params_as_uninterrupted"}));
  ScenarioExpectations expect;
  expect.where = absl::StrCat(path_, ":", node.Mark().line + 1);
  for (const auto& entry : node) {
    const std::string key = absl::StrCat(context, ".", entry.first.as<std::string>());
    const std::string name = entry.first.as<std::string>();
    const YAML::Node& value = entry.second;
    if (name == "resumed_from_step") {
      ASSIGN_OR_RETURN(expect.resumed_from_step, Int(value, key));
    } else if (name == "tracker") {
      ASSIGN_OR_RETURN(expect.tracker, Int(value, key));
    } else if (name == "checkpoints_kept") {
      ASSIGN_OR_RETURN(expect.checkpoints_kept, Int(value, key));
    } else if (name == "files_exist") {
      ASSIGN_OR_RETURN(expect.files_exist, Strings(value, key));
    } else if (name == "files_absent") {
      ASSIGN_OR_RETURN(expect.files_absent, Strings(value, key));
    } else {
      ASSIGN_OR_RETURN(const std::string flag, String(value, key));
      if (flag != "true") return Error(value, absl::StrCat(key, " must be true (or left out)"));
      expect.same_params_as_uninterrupted = true;
    }
  }
  return expect;
}

absl::StatusOr<BitFlip> ScenarioReader::Flip(const YAML::Node& node, absl::string_view context) const {
  RETURN_IF_ERROR(CheckKeys(node, context, {"file", "offset", "bit"}));
  for (const char* required : {"file", "offset"}) {
    if (!node[required]) return Error(node, absl::StrCat(context, ": missing key '", required, "'"));
  }
  BitFlip flip;
  ASSIGN_OR_RETURN(flip.file, String(node["file"], absl::StrCat(context, ".file")));
  ASSIGN_OR_RETURN(flip.offset, Int(node["offset"], absl::StrCat(context, ".offset")));
  if (flip.offset < 0) return Error(node["offset"], absl::StrCat(context, ".offset must be >= 0"));
  if (node["bit"]) {
    ASSIGN_OR_RETURN(const int64_t bit, Int(node["bit"], absl::StrCat(context, ".bit")));
    if (bit < 0 || bit > 7) return Error(node["bit"], absl::StrCat(context, ".bit must be 0 to 7"));
    flip.bit = static_cast<int>(bit);
  }
  return flip;
}

absl::StatusOr<std::vector<BitFlip>> ScenarioReader::Flips(const YAML::Node& node,
                                                           absl::string_view context) const {
  if (!node.IsSequence()) {
    ASSIGN_OR_RETURN(BitFlip flip, Flip(node, context));
    return std::vector<BitFlip>{std::move(flip)};
  }
  std::vector<BitFlip> flips;
  for (size_t i = 0; i < node.size(); ++i) {
    ASSIGN_OR_RETURN(BitFlip flip, Flip(node[i], absl::StrCat(context, "[", i, "]")));
    flips.push_back(std::move(flip));
  }
  return flips;
}

absl::StatusOr<RunOutcome> ScenarioReader::Outcome(const YAML::Node& node, absl::string_view key) const {
  ASSIGN_OR_RETURN(const std::string outcome, String(node, key));
  for (RunOutcome candidate : {RunOutcome::kOk, RunOutcome::kCrash, RunOutcome::kKilled, RunOutcome::kFail}) {
    if (RunOutcomeName(candidate) == outcome) return candidate;
  }
  return Error(node, absl::StrCat(key, " must be ok, crash, killed or fail"));
}

absl::StatusOr<ScenarioRun> ScenarioReader::Run(const YAML::Node& node,
                                                absl::string_view context) const {
  RETURN_IF_ERROR(CheckKeys(node, context,
                            {"corrupt", "overrides", "crash_at", "kill_after_s", "expect_exit",
                             "expect_error_contains", "expect"}));
  ScenarioRun run;
  if (node["corrupt"]) {
    ASSIGN_OR_RETURN(run.corrupt, Flips(node["corrupt"], absl::StrCat(context, ".corrupt")));
  }
  if (node["overrides"]) {
    ASSIGN_OR_RETURN(run.overrides, Strings(node["overrides"], absl::StrCat(context, ".overrides")));
  }
  if (node["crash_at"]) {
    ASSIGN_OR_RETURN(run.crash_at, String(node["crash_at"], absl::StrCat(context, ".crash_at")));
    const std::vector<std::string>& known = KnownCrashPoints();
    if (std::find(known.begin(), known.end(), run.crash_at) == known.end()) {
      return Error(node["crash_at"], absl::StrCat("unknown crash point '", run.crash_at,
                                                  "' (known: ", absl::StrJoin(known, ", "), ")"));
    }
    run.expect_exit = RunOutcome::kCrash;
  }
  if (node["kill_after_s"]) {
    const YAML::Node& value = node["kill_after_s"];
    double seconds = 0;
    if (!value.IsScalar() || !absl::SimpleAtod(value.as<std::string>(), &seconds) || seconds < 0) {
      return Error(value, absl::StrCat(context, ".kill_after_s must be a number of seconds >= 0"));
    }
    if (!run.crash_at.empty()) {
      return Error(value, absl::StrCat(context, ": crash_at and kill_after_s exclude each other"));
    }
    run.kill_after_s = seconds;
    run.expect_exit = RunOutcome::kKilled;
  }
  if (node["expect_exit"]) {
    ASSIGN_OR_RETURN(run.expect_exit, Outcome(node["expect_exit"], absl::StrCat(context, ".expect_exit")));
  }
  if (node["expect_error_contains"]) {
    const std::string key = absl::StrCat(context, ".expect_error_contains");
    ASSIGN_OR_RETURN(run.expect_error_contains, String(node["expect_error_contains"], key));
    if (run.expect_error_contains.empty()) {
      return Error(node["expect_error_contains"], absl::StrCat(key, " is empty"));
    }
  }
  if (node["expect"]) {
    ASSIGN_OR_RETURN(run.expect, Expectations(node["expect"], absl::StrCat(context, ".expect")));
  }
  return run;
}

absl::StatusOr<Scenario> ScenarioReader::Read(const std::string& text) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& error) {
    return absl::InvalidArgumentError(absl::StrCat(path_, ":", error.mark.line + 1, ": ", error.msg));
  }
  RETURN_IF_ERROR(CheckKeys(root, "the scenario", {"recipe", "overrides", "workdir", "runs", "expect"}));
  for (const char* required : {"recipe", "runs"}) {
    if (!root[required]) return Error(root, absl::StrCat("missing key '", required, "'"));
  }
  Scenario scenario;
  scenario.path = path_;
  ASSIGN_OR_RETURN(scenario.recipe, String(root["recipe"], "recipe"));
  if (!scenario.recipe.empty() && scenario.recipe[0] != '/') {
    // Next to the scenario file first, else relative to where the runner started.
    const std::string beside = NormalizePath(JoinPath(dir_, scenario.recipe));
    ASSIGN_OR_RETURN(const std::string cwd, Absolute("."));
    scenario.recipe = access(beside.c_str(), F_OK) == 0
                          ? beside
                          : NormalizePath(JoinPath(cwd, scenario.recipe));
  }
  if (root["overrides"]) {
    ASSIGN_OR_RETURN(scenario.overrides, Strings(root["overrides"], "overrides"));
  }
  if (root["workdir"]) {
    ASSIGN_OR_RETURN(scenario.workdir, String(root["workdir"], "workdir"));
  }
  const YAML::Node& runs = root["runs"];
  if (!runs.IsSequence() || runs.size() == 0) return Error(runs, "runs must be a non-empty list");
  for (size_t i = 0; i < runs.size(); ++i) {
    ASSIGN_OR_RETURN(ScenarioRun run, Run(runs[i], absl::StrCat("runs[", i, "]")));
    scenario.runs.push_back(std::move(run));
  }
  if (root["expect"]) {
    ASSIGN_OR_RETURN(scenario.expect, Expectations(root["expect"], "expect"));
  }
  return scenario;
}

}  // namespace

absl::string_view RunOutcomeName(RunOutcome outcome) {
  switch (outcome) {
    case RunOutcome::kOk:
      return "ok";
    case RunOutcome::kCrash:
      return "crash";
    case RunOutcome::kKilled:
      return "killed";
    case RunOutcome::kFail:
      return "fail";
  }
  return "?";
}

bool ScenarioExpectations::empty() const {
  return !resumed_from_step && files_exist.empty() && files_absent.empty() && !tracker &&
         !checkpoints_kept && !same_params_as_uninterrupted;
}

absl::StatusOr<Scenario> LoadScenario(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) {
    return absl::NotFoundError(absl::StrCat("reading scenario ", path, ": ", text.status().message()));
  }
  ASSIGN_OR_RETURN(const std::string dir, Absolute(Dirname(path)));
  return ScenarioReader(path, dir).Read(*text);
}

}  // namespace rollout::controller
