// The exact_match reward: the response, trimmed of ASCII whitespace, equals the
// trimmed ground truth.
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "rewards/builtin_rewards.h"

namespace rollout::rewards {
namespace {

class ExactMatchReward final : public RewardFunction {
 public:
  const std::string& name() const override { return name_; }

  absl::StatusOr<RewardOutput> Score(const RewardInput& input) const override {
    RewardOutput output;
    output.score = absl::StripAsciiWhitespace(input.response) ==
                           absl::StripAsciiWhitespace(input.ground_truth)
                       ? 1
                       : 0;
    return output;
  }

 private:
  const std::string name_ = "exact_match";
};

}  // namespace

std::unique_ptr<RewardFunction> MakeExactMatchReward() {
  return std::make_unique<ExactMatchReward>();
}

}  // namespace rollout::rewards
