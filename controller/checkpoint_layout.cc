#include "controller/checkpoint_layout.h"

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace rollout::controller {
namespace {

constexpr char kStagingSuffix[] = ".partial";
constexpr char kDeletingSuffix[] = ".deleting";

// A step number: digits only, no leading zero unless it is "0", fits int64.
std::optional<int64_t> ParseStepNumber(absl::string_view text) {
  if (text.empty() || (text.size() > 1 && text[0] == '0')) return std::nullopt;
  for (char c : text) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return std::nullopt;
  }
  int64_t step = 0;
  if (!absl::SimpleAtoi(text, &step)) return std::nullopt;
  return step;
}

}  // namespace

std::string StepDirName(int64_t step) { return absl::StrCat(kStepDirPrefix, step); }

std::optional<int64_t> ParseStepDirName(absl::string_view path) {
  while (absl::EndsWith(path, "/")) path.remove_suffix(1);
  const size_t slash = path.rfind('/');
  absl::string_view name = slash == absl::string_view::npos ? path : path.substr(slash + 1);
  if (!absl::ConsumePrefix(&name, kStepDirPrefix)) return std::nullopt;
  return ParseStepNumber(name);
}

std::string StagingDirName(int64_t step) {
  return absl::StrCat(".", StepDirName(step), kStagingSuffix);
}

std::string DeletingDirName(int64_t step) {
  return absl::StrCat(".", StepDirName(step), kDeletingSuffix);
}

bool IsScratchDirName(absl::string_view name) {
  if (!absl::ConsumePrefix(&name, ".")) return false;
  if (!absl::ConsumeSuffix(&name, kStagingSuffix) && !absl::ConsumeSuffix(&name, kDeletingSuffix)) {
    return false;
  }
  return ParseStepDirName(name).has_value();
}

std::string FormatTracker(int64_t step) { return absl::StrCat(step); }

absl::StatusOr<int64_t> ParseTracker(absl::string_view contents) {
  const std::optional<int64_t> step = ParseStepNumber(absl::StripAsciiWhitespace(contents));
  if (!step.has_value()) {
    constexpr size_t kQuoted = 40;  // enough to recognise what is there
    return absl::DataLossError(absl::StrCat(kTrackerFile, " holds '",
                                            absl::CHexEscape(contents.substr(0, kQuoted)),
                                            "', not a step number"));
  }
  return *step;
}

}  // namespace rollout::controller
