#include "controller/ckpt_scenario_runner.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/crash_point.h"
#include "common/file_util.h"
#include "common/recipe_loader.h"
#include "common/status_macros.h"
#include "common/wait_status.h"
#include "controller/ckpt_scenario_checks.h"
#include "controller/ckpt_scenario_child.h"

namespace rollout::controller {
namespace {

constexpr int kLogTailLines = 20;

RunOutcome OutcomeOf(int wait_status) {
  if (WIFSIGNALED(wait_status)) return RunOutcome::kKilled;
  const int code = WEXITSTATUS(wait_status);
  if (code == 0) return RunOutcome::kOk;
  return code == kCrashPointExitCode ? RunOutcome::kCrash : RunOutcome::kFail;
}

std::string LogTail(const std::string& path) {
  const absl::StatusOr<std::string> log = ReadFile(path);
  if (!log.ok()) return std::string(log.status().message());
  std::vector<absl::string_view> lines = absl::StrSplit(*log, '\n');
  const size_t from = lines.size() > kLogTailLines ? lines.size() - kLogTailLines : 0;
  return absl::StrJoin(lines.begin() + from, lines.end(), "\n");
}

// Flips bit `bit` of byte `offset` of `path` in place, and fsyncs the file.
absl::Status FlipBit(const std::string& path, int64_t offset, int bit) {
  const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return ErrnoError(absl::StrCat("opening ", path), errno);
  unsigned char byte = 0;
  absl::Status status;
  const ssize_t read = pread(fd, &byte, 1, offset);
  if (read < 0) {
    status = ErrnoError(absl::StrCat("reading ", path), errno);
  } else if (read == 0) {
    status = absl::OutOfRangeError(absl::StrCat(path, " has no byte ", offset));
  } else {
    byte ^= static_cast<unsigned char>(1u << bit);
    if (pwrite(fd, &byte, 1, offset) != 1 || fsync(fd) != 0) {
      status = ErrnoError(absl::StrCat("writing ", path), errno);
    }
  }
  close(fd);
  return status;
}

class Runner {
 public:
  Runner(const Scenario& scenario, const ScenarioOptions& options, std::ostream& out)
      : scenario_(scenario), options_(options), out_(out) {}

  absl::StatusOr<ScenarioReport> Run();

 private:
  absl::Status PrepareWorkdir();
  // The recipe keys of run `index`: the scenario's, then the run's.
  std::vector<std::string> Keys(size_t index) const;
  // trainer.default_local_dir for `keys`, made absolute against `cwd`.
  absl::StatusOr<std::string> CheckpointRoot(const std::vector<std::string>& keys,
                                             const std::string& cwd) const;
  // Flips run `index`'s bits; false when one could not be flipped (reported).
  bool Corrupt(size_t index);
  // False when the run ended other than expected (already reported).
  absl::StatusOr<bool> RunOne(size_t index);
  // A fresh run of `keys` straight through in workdir/reference_<index>.
  absl::StatusOr<std::string> Reference(size_t index) const;
  void Check(const ScenarioExpectations& expect, size_t index);
  void Report(const CheckResult& result);

  const Scenario& scenario_;
  const ScenarioOptions& options_;
  std::ostream& out_;
  std::string workdir_;
  bool temporary_ = false;
  ScenarioReport report_;
};

absl::Status Runner::PrepareWorkdir() {
  if (!scenario_.workdir.empty()) {
    workdir_ = scenario_.workdir;
    return MakeDirectories(JoinPath(workdir_, "scenario_logs"));
  }
  std::string pattern = JoinPath(options_.temp_root, "rollout_scenario_XXXXXX");
  if (mkdtemp(pattern.data()) == nullptr) {
    return ErrnoError(absl::StrCat("creating a working directory ", pattern), errno);
  }
  workdir_ = pattern;
  temporary_ = true;
  return MakeDirectories(JoinPath(workdir_, "scenario_logs"));
}

std::vector<std::string> Runner::Keys(size_t index) const {
  std::vector<std::string> keys = scenario_.overrides;
  const std::vector<std::string>& own = scenario_.runs[index].overrides;
  keys.insert(keys.end(), own.begin(), own.end());
  return keys;
}

absl::StatusOr<std::string> Runner::CheckpointRoot(const std::vector<std::string>& keys,
                                                   const std::string& cwd) const {
  absl::StatusOr<config::LoadedRecipe> loaded = config::LoadRecipe(scenario_.recipe, keys);
  if (!loaded.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(scenario_.path, ": loading the recipe with the run's keys: ",
                     loaded.status().message()));
  }
  const std::string root = loaded->recipe.trainer().default_local_dir();
  return !root.empty() && root[0] == '/' ? root : JoinPath(cwd, root);
}

bool Runner::Corrupt(size_t index) {
  const std::vector<BitFlip>& flips = scenario_.runs[index].corrupt;
  if (flips.empty()) return true;
  const absl::StatusOr<std::string> root = CheckpointRoot(Keys(index), workdir_);
  for (const BitFlip& flip : flips) {
    const std::string what = absl::StrCat("bit ", flip.bit, " of byte ", flip.offset, " of ", flip.file);
    const absl::Status status =
        root.ok() ? FlipBit(JoinPath(*root, flip.file), flip.offset, flip.bit) : root.status();
    if (!status.ok()) {
      Report({"corrupt " + flip.file, false, what + " flipped", std::string(status.message())});
      return false;
    }
    out_ << "corrupt: flipped " << what << std::endl;
  }
  return true;
}

absl::StatusOr<bool> Runner::RunOne(size_t index) {
  const ScenarioRun& run = scenario_.runs[index];
  ChildCommand command;
  command.binary = options_.binary;
  command.args = {"train", scenario_.recipe};
  const std::vector<std::string> keys = Keys(index);
  command.args.insert(command.args.end(), keys.begin(), keys.end());
  command.workdir = workdir_;
  command.log_path = JoinPath(workdir_, absl::StrCat("scenario_logs/run_", index + 1, ".log"));
  command.crash_at = run.crash_at;
  command.kill_after_s = run.kill_after_s;
  std::string how;
  if (!run.crash_at.empty()) how = absl::StrCat(" (crash_at ", run.crash_at, ")");
  if (run.kill_after_s) how = absl::StrCat(" (kill_after_s ", *run.kill_after_s, ")");
  out_ << "run " << index + 1 << "/" << scenario_.runs.size() << ": train "
       << (run.overrides.empty() ? "(the scenario's keys)" : absl::StrJoin(run.overrides, " ")) << how
       << std::endl;
  if (!Corrupt(index)) return false;

  ASSIGN_OR_RETURN(const int status, RunChild(command));
  const RunOutcome outcome = OutcomeOf(status);
  const bool as_expected = outcome == run.expect_exit;
  Report({absl::StrCat("run ", index + 1, " exit"), as_expected,
          std::string(RunOutcomeName(run.expect_exit)),
          absl::StrCat(RunOutcomeName(outcome), " (", DescribeWaitStatus(status), ")")});
  if (!run.expect_error_contains.empty()) {
    Report(CheckOutputContains(run.expect_error_contains, command.log_path,
                               absl::StrCat("run ", index + 1, " output")));
  }
  if (!as_expected) {
    out_ << "--- last lines of " << command.log_path << ":\n" << LogTail(command.log_path) << "\n---\n";
  }
  return as_expected;
}

absl::StatusOr<std::string> Runner::Reference(size_t index) const {
  const std::string cwd = JoinPath(workdir_, absl::StrCat("reference_", index + 1));
  RETURN_IF_ERROR(MakeDirectories(cwd));
  ChildCommand command;
  command.binary = options_.binary;
  command.args = {"train", scenario_.recipe};
  const std::vector<std::string> keys = Keys(index);
  command.args.insert(command.args.end(), keys.begin(), keys.end());
  // Its own root even when the scenario names an absolute one.
  command.args.push_back(absl::StrCat("trainer.default_local_dir=", JoinPath(cwd, "ckpt")));
  command.workdir = cwd;
  command.log_path = JoinPath(workdir_, absl::StrCat("scenario_logs/reference_", index + 1, ".log"));
  out_ << "reference run for run " << index + 1 << ": train " << absl::StrJoin(keys, " ") << std::endl;
  ASSIGN_OR_RETURN(const int status, RunChild(command));
  if (OutcomeOf(status) != RunOutcome::kOk) {
    return absl::InternalError(absl::StrCat(DescribeWaitStatus(status), "; see ", command.log_path));
  }
  return JoinPath(cwd, "ckpt");
}

void Runner::Check(const ScenarioExpectations& expect, size_t index) {
  if (expect.empty()) return;
  out_ << "checks at " << expect.where << " (after run " << index + 1 << "):" << std::endl;
  const absl::StatusOr<std::string> root = CheckpointRoot(Keys(index), workdir_);
  if (!root.ok()) {
    Report({"checkpoint root", false, "trainer.default_local_dir", std::string(root.status().message())});
    return;
  }
  RunEvidence evidence;
  evidence.root = *root;
  evidence.log_path = JoinPath(workdir_, absl::StrCat("scenario_logs/run_", index + 1, ".log"));
  evidence.reference_root = [this, index] { return Reference(index); };
  for (const CheckResult& result : CheckExpectations(expect, evidence)) Report(result);
}

void Runner::Report(const CheckResult& result) {
  ++(result.passed ? report_.passed : report_.failed);
  out_ << (result.passed ? "PASS  " : "FAIL  ") << result.name << ": expected " << result.expected
       << ", observed " << result.observed << std::endl;
}

absl::StatusOr<ScenarioReport> Runner::Run() {
  RETURN_IF_ERROR(PrepareWorkdir());
  out_ << "scenario " << scenario_.path << " in " << workdir_ << std::endl;
  for (size_t i = 0; i < scenario_.runs.size(); ++i) {
    ASSIGN_OR_RETURN(const bool as_expected, RunOne(i));
    if (!as_expected) break;
    Check(scenario_.runs[i].expect, i);
    if (i + 1 == scenario_.runs.size()) Check(scenario_.expect, i);
  }
  out_ << (report_.failed == 0 ? "PASSED" : "FAILED") << " " << scenario_.path << ": "
       << report_.passed << " passed, " << report_.failed << " failed" << std::endl;
  if (temporary_ && report_.failed == 0) {
    RETURN_IF_ERROR(RemoveTree(workdir_));
  } else if (report_.failed > 0) {
    out_ << "kept " << workdir_ << " (logs in scenario_logs/)" << std::endl;
  }
  return report_;
}

}  // namespace

absl::StatusOr<ScenarioReport> RunScenario(const Scenario& scenario, const ScenarioOptions& options,
                                           std::ostream& out) {
  return Runner(scenario, options, out).Run();
}

}  // namespace rollout::controller
