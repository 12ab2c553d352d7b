#include "algorithms/kl.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "algorithms/masked_ops.h"
#include "common/status_macros.h"

namespace rollout::algorithms {
namespace {

enum class Estimator { kK1, kAbs, kK2, kK3, kFull };

struct EstimatorName {
  const char* name;
  Estimator estimator;
};

// verl's names and aliases, in the order KlPenaltyNames lists them.
constexpr EstimatorName kEstimators[] = {
    {"kl", Estimator::kK1},  {"k1", Estimator::kK1},     {"abs", Estimator::kAbs},
    {"mse", Estimator::kK2}, {"k2", Estimator::kK2},     {"low_var_kl", Estimator::kK3},
    {"k3", Estimator::kK3},  {"full", Estimator::kFull},
};

struct ParsedName {
  Estimator estimator;
  bool straight_through;
};

absl::StatusOr<ParsedName> ParseKlPenalty(absl::string_view name) {
  const bool plus = !name.empty() && name.back() == '+';
  const absl::string_view base = plus ? name.substr(0, name.size() - 1) : name;
  for (const EstimatorName& entry : kEstimators) {
    if (base != entry.name) continue;
    if (plus && entry.estimator == Estimator::kFull) break;
    return ParsedName{entry.estimator, plus};
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown KL estimator '", std::string(name),
                   "'; valid names: ", absl::StrJoin(KlPenaltyNames(), ", ")));
}

std::string Shape(const at::Tensor& t) {
  return absl::StrCat("[", absl::StrJoin(t.sizes(), ", "), "]");
}

// Both defined, floating, finite, and of one shape, dtype and device.
absl::Status CheckLogProbPair(const at::Tensor& a, const char* a_name, const at::Tensor& b,
                              const char* b_name) {
  for (const auto& [t, name] : {std::pair{&a, a_name}, std::pair{&b, b_name}}) {
    if (!t->defined()) return absl::InvalidArgumentError(absl::StrCat(name, ": undefined tensor"));
    if (!at::isFloatingType(t->scalar_type())) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": needs a floating dtype; got ", c10::toString(t->scalar_type())));
    }
  }
  if (a.sizes() != b.sizes() || a.scalar_type() != b.scalar_type() || a.device() != b.device()) {
    return absl::InvalidArgumentError(absl::StrCat(
        a_name, " and ", b_name, " must match in shape, dtype and device; got ", Shape(a), " ",
        c10::toString(a.scalar_type()), " on ", a.device().str(), " and ", Shape(b), " ",
        c10::toString(b.scalar_type()), " on ", b.device().str()));
  }
  RETURN_IF_ERROR(CheckFinite(a, a_name));
  return CheckFinite(b, b_name);
}

// A mask of `like`'s shape and device, finite if floating.
absl::Status CheckMask(const at::Tensor& mask, const char* name, const at::Tensor& like) {
  if (!mask.defined()) return absl::InvalidArgumentError(absl::StrCat(name, ": undefined tensor"));
  if (mask.sizes() != like.sizes() || mask.device() != like.device()) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": must be ", Shape(like), " on ",
                                                   like.device().str(), "; got ", Shape(mask),
                                                   " on ", mask.device().str()));
  }
  return CheckFinite(mask, name);
}

at::Tensor ForwardEstimate(Estimator estimator, const at::Tensor& logprob,
                           const at::Tensor& ref_logprob) {
  switch (estimator) {
    case Estimator::kK1:
      return logprob - ref_logprob;
    case Estimator::kAbs:
      return (logprob - ref_logprob).abs();
    case Estimator::kK2:
      return 0.5 * (logprob - ref_logprob).square();
    case Estimator::kK3: {
      // The clamps are verl's: exp() cannot overflow, and one outlier token cannot
      // dominate the penalty.
      const at::Tensor log_ratio = (ref_logprob - logprob).clamp(-20, 20);
      return (log_ratio.exp() - log_ratio - 1).clamp(-10, 10);
    }
    case Estimator::kFull: {
      const at::Tensor log_p = logprob.log_softmax(-1);
      return (log_p.exp() * (log_p - ref_logprob.log_softmax(-1))).sum(-1);
    }
  }
  return at::Tensor();
}

}  // namespace

std::vector<std::string> KlPenaltyNames() {
  std::vector<std::string> names;
  for (const EstimatorName& entry : kEstimators) names.emplace_back(entry.name);
  for (const EstimatorName& entry : kEstimators) {
    if (entry.estimator != Estimator::kFull) names.push_back(absl::StrCat(entry.name, "+"));
  }
  return names;
}

absl::StatusOr<at::Tensor> KlPenalty(const at::Tensor& logprob, const at::Tensor& ref_logprob,
                                     absl::string_view kl_penalty) {
  ASSIGN_OR_RETURN(const ParsedName parsed, ParseKlPenalty(kl_penalty));
  RETURN_IF_ERROR(CheckLogProbPair(logprob, "logprob", ref_logprob, "ref_logprob"));
  if (parsed.estimator == Estimator::kFull && logprob.dim() != 3) {
    return absl::InvalidArgumentError(absl::StrCat(
        "KL estimator 'full' needs the whole distributions, [B, T, V] logits or log-probs; got ",
        Shape(logprob)));
  }
  const at::Tensor forward = ForwardEstimate(parsed.estimator, logprob, ref_logprob);
  if (!parsed.straight_through || parsed.estimator == Estimator::kK2) return forward;
  // k2 - k2.detach() is exactly 0 in value and carries k2's gradient.
  const at::Tensor k2 = ForwardEstimate(Estimator::kK2, logprob, ref_logprob);
  return (k2 - k2.detach()) + forward.detach();
}

absl::StatusOr<at::Tensor> KlLoss(const at::Tensor& logprob, const at::Tensor& ref_logprob,
                                  const at::Tensor& response_mask, absl::string_view kl_loss_type,
                                  const TokenLossAggregator& aggregate) {
  ASSIGN_OR_RETURN(const at::Tensor kld, KlPenalty(logprob, ref_logprob, kl_loss_type));
  RETURN_IF_ERROR(CheckMask(response_mask, "response_mask", kld));
  if (aggregate) return aggregate(kld, response_mask);
  return MaskedMean(kld, response_mask);
}

// ---- KL in reward ------------------------------------------------------------------

std::map<std::string, double> KlInRewardResult::Metrics() const {
  return {{"actor/reward_kl_penalty", current_kl}, {"actor/reward_kl_penalty_coeff", kl_coef}};
}

absl::StatusOr<KlInRewardResult> ApplyKlPenalty(const at::Tensor& token_level_scores,
                                                const at::Tensor& old_log_prob,
                                                const at::Tensor& ref_log_prob,
                                                const at::Tensor& response_mask,
                                                absl::string_view kl_penalty,
                                                KlController& controller) {
  ASSIGN_OR_RETURN(const ParsedName parsed, ParseKlPenalty(kl_penalty));
  if (parsed.estimator == Estimator::kFull) {
    return absl::InvalidArgumentError(
        "KL in reward: estimator 'full' needs [B, T, V] distributions, which a rollout batch "
        "does not carry; use kl, abs, mse or low_var_kl");
  }
  RETURN_IF_ERROR(CheckLogProbPair(old_log_prob, "old_log_prob", ref_log_prob, "ref_log_prob"));
  RETURN_IF_ERROR(
      CheckLogProbPair(token_level_scores, "token_level_scores", old_log_prob, "old_log_prob"));
  if (old_log_prob.dim() != 2 || old_log_prob.size(0) == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "KL in reward needs a non-empty batch of [B, T] log-probs; got ", Shape(old_log_prob)));
  }
  RETURN_IF_ERROR(CheckMask(response_mask, "response_mask", old_log_prob));

  ASSIGN_OR_RETURN(at::Tensor kld,
                   KlPenalty(old_log_prob.detach(), ref_log_prob.detach(), kl_penalty));
  kld = kld * response_mask.to(kld.scalar_type());
  KlInRewardResult result;
  result.kl_coef = controller.value();
  result.token_level_rewards = token_level_scores - result.kl_coef * kld;
  // The metric in float64 whatever the log-probs' dtype; the per-row masked mean is
  // verl's masked_mean(axis=-1), so an all-masked row contributes 0.
  result.current_kl = MaskedMean(kld.to(at::kDouble), response_mask, -1).mean().item<double>();
  RETURN_IF_ERROR(controller.Update(result.current_kl, old_log_prob.size(0)));
  return result;
}

}  // namespace rollout::algorithms
