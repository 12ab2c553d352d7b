// The format reward: `score` when the whole response matches an RE2 pattern.
#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "re2/re2.h"
#include "rewards/builtin_rewards.h"

namespace rollout::rewards {
namespace {

class FormatReward final : public RewardFunction {
 public:
  // `pattern` must have compiled (ok()).
  FormatReward(std::unique_ptr<RE2> pattern, double score)
      : pattern_(std::move(pattern)), score_(score) {}

  const std::string& name() const override { return name_; }

  // RE2 matching is thread-safe on a shared const RE2.
  absl::StatusOr<RewardOutput> Score(const RewardInput& input) const override {
    RewardOutput output;
    output.score = RE2::FullMatch(input.response, *pattern_) ? score_ : 0;
    return output;
  }

 private:
  const std::string name_ = "format";
  const std::unique_ptr<RE2> pattern_;
  const double score_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<RewardFunction>> MakeFormatReward(const FormatOptions& options) {
  RE2::Options re_options;
  re_options.set_log_errors(false);  // the error travels in the Status instead
  auto pattern = std::make_unique<RE2>(options.pattern, re_options);
  if (!pattern->ok()) {
    return absl::InvalidArgumentError(absl::StrCat("format reward: pattern '", options.pattern,
                                                   "' does not compile: ", pattern->error()));
  }
  return std::make_unique<FormatReward>(std::move(pattern), options.score);
}

}  // namespace rollout::rewards
