#include "rewards/reward_runner.h"

#include <exception>
#include <new>

#include "absl/strings/str_cat.h"

namespace rollout::rewards {

RewardFailures CountFailures(const std::vector<ScoredSample>& results) {
  RewardFailures failures;
  for (size_t i = 0; i < results.size(); ++i) {
    const ScoredSample& result = results[i];
    if (result.outcome == SampleOutcome::kOk) continue;
    ++(result.outcome == SampleOutcome::kTimeout ? failures.timeouts : failures.errors);
    if (failures.first.empty()) failures.first = absl::StrCat("sample ", i, ": ", result.error);
  }
  return failures;
}

ScoredSample FailedSample(SampleOutcome outcome, std::string error) {
  ScoredSample result;
  result.outcome = outcome;
  result.error = std::move(error);
  return result;
}

ScoredSample ScoreOrFail(const RewardSelector& selector, const RewardInput& input) {
  try {
    absl::StatusOr<RewardOutput> output = selector.Score(input);
    if (!output.ok()) {
      return FailedSample(SampleOutcome::kError, std::string(output.status().message()));
    }
    ScoredSample result;
    result.output = *std::move(output);
    return result;
  } catch (const std::bad_alloc&) {
    return FailedSample(SampleOutcome::kError, "ran out of memory");
  } catch (const std::exception& e) {
    return FailedSample(SampleOutcome::kError, absl::StrCat("threw: ", e.what()));
  } catch (...) {
    return FailedSample(SampleOutcome::kError, "threw a non-standard exception");
  }
}

}  // namespace rollout::rewards
