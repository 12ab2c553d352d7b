#include "controller/ckpt_scenario_checks.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/file_system.h"
#include "common/file_util.h"
#include "controller/checkpoint_catalog.h"
#include "controller/checkpoint_layout.h"

namespace rollout::controller {
namespace {

constexpr char kResumingFrom[] = "resuming from ";
constexpr char kActorModel[] = "actor/model.safetensors";

std::string StepOrNone(const std::optional<int64_t>& step, absl::string_view none) {
  return step ? absl::StrCat(*step) : std::string(none);
}

CheckResult CheckResumedFrom(int64_t expected, const std::string& log_path) {
  CheckResult result{"resumed_from_step", false, absl::StrCat(expected), ""};
  const absl::StatusOr<std::string> log = ReadFile(log_path);
  if (!log.ok()) {
    result.observed = std::string(log.status().message());
    return result;
  }
  const std::optional<int64_t> step = ResumedFromStep(*log);
  result.observed = StepOrNone(step, "none (no 'resuming from' line in the log)");
  result.passed = step == expected;
  return result;
}

CheckResult CheckFile(const std::string& root, const std::string& path, bool want) {
  CheckResult result{absl::StrCat(want ? "files_exist " : "files_absent ", path), false,
                     want ? "present" : "absent", ""};
  const absl::StatusOr<FileInfo> info = DefaultFileSystem()->Stat(JoinPath(root, path));
  if (!info.ok()) {
    result.observed = std::string(info.status().message());
    return result;
  }
  result.observed = info->exists ? "present" : "absent";
  result.passed = info->exists == want;
  return result;
}

CheckResult CheckTracker(int64_t expected, const std::string& root) {
  CheckResult result{"tracker", false, absl::StrCat(expected), ""};
  const absl::StatusOr<std::optional<int64_t>> tracker = ReadTracker(*DefaultFileSystem(), root);
  if (!tracker.ok()) {
    result.observed = std::string(tracker.status().message());
    return result;
  }
  result.observed = StepOrNone(*tracker, absl::StrCat("none (no ", kTrackerFile, ")"));
  result.passed = *tracker == expected;
  return result;
}

// The complete checkpoints under `root` (NotFound for a missing root reads as none).
absl::StatusOr<std::vector<CheckpointInfo>> CompleteCheckpoints(const std::string& root) {
  absl::StatusOr<std::vector<CheckpointInfo>> all =
      ListCheckpoints(*DefaultFileSystem(), root, VerifyLevel::kSizes);
  if (absl::IsNotFound(all.status())) return std::vector<CheckpointInfo>{};
  if (!all.ok()) return all.status();
  std::vector<CheckpointInfo> complete;
  for (CheckpointInfo& checkpoint : *all) {
    if (checkpoint.state == CheckpointState::kComplete) complete.push_back(std::move(checkpoint));
  }
  return complete;
}

CheckResult CheckKept(int64_t expected, const std::string& root) {
  CheckResult result{"checkpoints_kept", false, absl::StrCat(expected), ""};
  const absl::StatusOr<std::vector<CheckpointInfo>> complete = CompleteCheckpoints(root);
  if (!complete.ok()) {
    result.observed = std::string(complete.status().message());
    return result;
  }
  std::string steps;
  for (const CheckpointInfo& checkpoint : *complete) {
    absl::StrAppend(&steps, steps.empty() ? "" : ", ", StepDirName(checkpoint.step));
  }
  result.observed = absl::StrCat(complete->size(), complete->empty() ? "" : " (", steps,
                                 complete->empty() ? "" : ")");
  result.passed = static_cast<int64_t>(complete->size()) == expected;
  return result;
}

// The newest complete checkpoint's actor model against the reference run's.
CheckResult CheckSameParams(const RunEvidence& evidence) {
  CheckResult result{"same_params_as_uninterrupted", false, "", ""};
  const absl::StatusOr<std::vector<CheckpointInfo>> complete = CompleteCheckpoints(evidence.root);
  if (!complete.ok() || complete->empty()) {
    result.expected = "a complete checkpoint";
    result.observed = complete.ok() ? "none" : std::string(complete.status().message());
    return result;
  }
  const std::string file = JoinPath(StepDirName(complete->back().step), kActorModel);
  result.expected = absl::StrCat(file, " equal to the uninterrupted run's");
  const absl::StatusOr<std::string> reference_root = evidence.reference_root();
  if (!reference_root.ok()) {
    result.observed = absl::StrCat("reference run: ", reference_root.status().message());
    return result;
  }
  const absl::StatusOr<std::string> ours = ReadFile(JoinPath(evidence.root, file));
  const absl::StatusOr<std::string> theirs = ReadFile(JoinPath(*reference_root, file));
  if (!ours.ok() || !theirs.ok()) {
    result.observed = std::string((ours.ok() ? theirs : ours).status().message());
    return result;
  }
  result.passed = *ours == *theirs;
  result.observed = result.passed ? absl::StrCat("equal (", ours->size(), " bytes)")
                                  : absl::StrCat("different (", ours->size(), " vs ", theirs->size(),
                                                 " bytes)");
  return result;
}

}  // namespace

CheckResult CheckOutputContains(const std::string& text, const std::string& log_path,
                                absl::string_view name) {
  CheckResult result{std::string(name), false, absl::StrCat("a line containing '", text, "'"), ""};
  const absl::StatusOr<std::string> log = ReadFile(log_path);
  if (!log.ok()) {
    result.observed = std::string(log.status().message());
    return result;
  }
  absl::string_view last;
  for (absl::string_view line : absl::StrSplit(*log, '\n', absl::SkipWhitespace())) {
    last = line;
    if (absl::StrContains(line, text)) {
      result.passed = true;
      result.observed = absl::StrCat("'", line, "'");
      return result;
    }
  }
  result.observed = absl::StrCat("no such line; the last is '", last, "'");
  return result;
}

std::optional<int64_t> ResumedFromStep(absl::string_view log) {
  const size_t at = log.rfind(kResumingFrom);
  if (at == absl::string_view::npos) return std::nullopt;
  absl::string_view path = log.substr(at + sizeof(kResumingFrom) - 1);
  const size_t end = path.find_first_of(" \t\n:,");
  if (end != absl::string_view::npos) path = path.substr(0, end);
  return ParseStepDirName(path);
}

std::vector<CheckResult> CheckExpectations(const ScenarioExpectations& expect,
                                           const RunEvidence& evidence) {
  std::vector<CheckResult> results;
  if (expect.resumed_from_step) results.push_back(CheckResumedFrom(*expect.resumed_from_step, evidence.log_path));
  for (const std::string& path : expect.files_exist) results.push_back(CheckFile(evidence.root, path, true));
  for (const std::string& path : expect.files_absent) results.push_back(CheckFile(evidence.root, path, false));
  if (expect.tracker) results.push_back(CheckTracker(*expect.tracker, evidence.root));
  if (expect.checkpoints_kept) results.push_back(CheckKept(*expect.checkpoints_kept, evidence.root));
  if (expect.same_params_as_uninterrupted) results.push_back(CheckSameParams(evidence));
  return results;
}

}  // namespace rollout::controller
