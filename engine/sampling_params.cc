#include "engine/sampling_params.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace rollout::engine {

absl::Status ValidateSamplingParams(const SamplingParams& params) {
  if (params.n < 1) return absl::InvalidArgumentError(absl::StrCat("n must be >= 1, got ", params.n));
  if (!(params.temperature >= 0) || !std::isfinite(params.temperature)) {
    return absl::InvalidArgumentError(
        absl::StrCat("temperature must be a finite number >= 0, got ", params.temperature));
  }
  if (!(params.top_p > 0 && params.top_p <= 1)) {
    return absl::InvalidArgumentError(absl::StrCat("top_p must be in (0, 1], got ", params.top_p));
  }
  if (!(params.min_p >= 0 && params.min_p <= 1)) {
    return absl::InvalidArgumentError(absl::StrCat("min_p must be in [0, 1], got ", params.min_p));
  }
  if (params.max_tokens < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_tokens must be >= 1, got ", params.max_tokens));
  }
  for (const std::string& stop : params.stop) {
    if (stop.empty()) return absl::InvalidArgumentError("stop strings must not be empty");
  }
  return absl::OkStatus();
}

const char* FinishReasonName(FinishReason reason) {
  switch (reason) {
    case FinishReason::kNone: return "none";
    case FinishReason::kEos: return "eos";
    case FinishReason::kStop: return "stop";
    case FinishReason::kLength: return "length";
    case FinishReason::kAbort: return "abort";
  }
  return "unknown";
}

}  // namespace rollout::engine
