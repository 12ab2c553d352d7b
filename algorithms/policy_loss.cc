#include "algorithms/policy_loss.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include <algorithm>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "algorithms/loss_aggregation.h"
#include "algorithms/masked_ops.h"
#include "algorithms/seeded_choice.h"
#include "common/status_macros.h"

namespace rollout::algorithms {
namespace {

struct Inputs {
  const at::Tensor& old_log_prob;
  const at::Tensor& log_prob;
  const at::Tensor& advantages;
  const at::Tensor& mask;
  const at::Tensor& token_weights;  // undefined: none
};

// The per-token losses weighted by the inputs' token weights, if any.
at::Tensor Weighted(const at::Tensor& token_loss, const Inputs& in) {
  return in.token_weights.defined() ? token_loss * in.token_weights.detach() : token_loss;
}

// The ratio interval is [1 - low, 1 + high].
struct ClipRange {
  double low;
  double high;
};

// Masked mean of a metric, 0-dim float64, outside the autograd graph.
at::Tensor MetricMean(const at::Tensor& values, const at::Tensor& mask) {
  return MaskedMean(values.detach().to(at::kDouble), mask.to(at::kDouble));
}

// A metric a loss mode does not have (verl reports 0), like MetricMean's results.
at::Tensor ZeroMetric(const Inputs& in) {
  return at::zeros({}, in.log_prob.options().dtype(at::kDouble));
}

// The ratio exp(clamp(log_prob - old_log_prob, -20, 20)) of vanilla, sapo, dppo and
// cispo, with its log for ppo_kl.
struct ClampedRatio {
  at::Tensor log;
  at::Tensor ratio;
};

ClampedRatio ClampedRatioOf(const Inputs& in) {
  const at::Tensor log_ratio = (in.log_prob - in.old_log_prob).clamp(-20.0, 20.0);
  return {log_ratio, log_ratio.exp()};
}

absl::StatusOr<PolicyLossResult> Vanilla(const Inputs& in, const PolicyLossOptions& options,
                                         ClipRange clip) {
  const ClampedRatio r = ClampedRatioOf(in);
  const at::Tensor unclipped = -in.advantages * r.ratio;
  const at::Tensor clipped = -in.advantages * r.ratio.clamp(1.0 - clip.low, 1.0 + clip.high);
  const at::Tensor clip_loss = at::maximum(unclipped, clipped);
  // Dual clip: a very large ratio on a negative advantage would otherwise give an
  // unbounded loss; cap it at -A * clip_ratio_c.
  const at::Tensor dual_bound = -in.advantages * options.clip_ratio_c;
  const at::Tensor negative = in.advantages < 0;
  const at::Tensor token_loss = at::where(negative, at::minimum(clip_loss, dual_bound), clip_loss);
  PolicyLossResult result;
  ASSIGN_OR_RETURN(result.loss, AggregateLoss(Weighted(token_loss, in), in.mask, options.loss_agg_mode,
                                              options.loss_scale_factor));
  c10::NoGradGuard no_grad;
  result.pg_clipfrac = MetricMean(clipped > unclipped, in.mask);
  result.pg_clipfrac_lower = MetricMean((clip_loss > dual_bound).logical_and(negative), in.mask);
  result.ppo_kl = MetricMean(-r.log, in.mask);
  return result;
}

absl::StatusOr<PolicyLossResult> Gspo(const Inputs& in, const PolicyLossOptions& options,
                                      ClipRange clip) {
  const at::Tensor log_ratio = in.log_prob - in.old_log_prob;
  const at::Tensor mask = in.mask.to(log_ratio.scalar_type());
  // log s_b: the masked mean of the row's log-ratios (an empty row divides by 1).
  const at::Tensor seq_log_ratio = (log_ratio * mask).sum(-1) / mask.sum(-1).clamp_min(1);
  // Value log s_b at every token; gradient that of the token's own log_prob.
  const at::Tensor token_log_ratio =
      (in.log_prob - in.log_prob.detach() + seq_log_ratio.detach().unsqueeze(-1)).clamp_max(10.0);
  const at::Tensor ratio = token_log_ratio.exp();
  const at::Tensor unclipped = -in.advantages * ratio;
  const at::Tensor clipped = -in.advantages * ratio.clamp(1.0 - clip.low, 1.0 + clip.high);
  PolicyLossResult result;
  ASSIGN_OR_RETURN(result.loss,
                   AggregateLoss(Weighted(at::maximum(unclipped, clipped), in), in.mask, "seq-mean-token-mean"));
  c10::NoGradGuard no_grad;
  result.pg_clipfrac = MetricMean(clipped > unclipped, in.mask);
  result.pg_clipfrac_lower = ZeroMetric(in);
  result.ppo_kl = MetricMean(-log_ratio, in.mask);
  return result;
}

absl::StatusOr<PolicyLossResult> Sapo(const Inputs& in, const PolicyLossOptions& options, ClipRange) {
  const ClampedRatio r = ClampedRatioOf(in);
  const at::Tensor positive = in.advantages > 0;
  const at::Tensor tau = at::where(positive, at::full_like(r.ratio, options.tau_pos), at::full_like(r.ratio, options.tau_neg));
  const at::Tensor gate = at::sigmoid(tau * (r.ratio - 1)) * (4.0 / tau);
  PolicyLossResult result;
  ASSIGN_OR_RETURN(result.loss, AggregateLoss(Weighted(-gate * in.advantages, in), in.mask, "seq-mean-token-mean"));
  c10::NoGradGuard no_grad;
  result.pg_clipfrac = ZeroMetric(in);
  result.pg_clipfrac_lower = ZeroMetric(in);
  result.ppo_kl = MetricMean(-r.log, in.mask);
  return result;
}

// [B, T] bool: the tokens inside DPPO's trust region (policy_loss.h).
at::Tensor DppoTrusted(const Inputs& in, ClipRange clip, bool binary_kl) {
  c10::NoGradGuard no_grad;
  const at::Tensor prob = in.log_prob.detach().exp();
  const at::Tensor old_prob = in.old_log_prob.exp();
  const at::Tensor positive = in.advantages > 0;
  if (!binary_kl) {
    const at::Tensor change = prob - old_prob;
    return at::where(positive, change <= clip.high, change >= -clip.low);
  }
  const at::Tensor divergence = old_prob * (in.old_log_prob - in.log_prob.detach()) +
                                (1 - old_prob) * ((1 - old_prob + 1e-8) / (1 - prob + 1e-8)).log();
  return at::where(positive, (divergence <= clip.high).logical_or(prob <= old_prob),
                   (divergence <= clip.low).logical_or(prob >= old_prob));
}

absl::StatusOr<PolicyLossResult> Dppo(const Inputs& in, const PolicyLossOptions& options, ClipRange clip,
                                      bool binary_kl) {
  const ClampedRatio r = ClampedRatioOf(in);
  const at::Tensor weight = r.ratio.detach().clamp_max(options.clip_ratio_c);
  const at::Tensor trusted = DppoTrusted(in, clip, binary_kl);
  const at::Tensor token_loss = -in.advantages * weight * in.log_prob * trusted.to(in.log_prob.scalar_type());
  PolicyLossResult result;
  ASSIGN_OR_RETURN(result.loss, AggregateLoss(Weighted(token_loss, in), in.mask, options.loss_agg_mode,
                                              options.loss_scale_factor));
  c10::NoGradGuard no_grad;
  result.pg_clipfrac = MetricMean(trusted.logical_not(), in.mask);
  result.pg_clipfrac_lower = MetricMean((r.ratio > options.clip_ratio_c).logical_and(trusted), in.mask);
  result.ppo_kl = MetricMean(-r.log, in.mask);
  return result;
}

absl::StatusOr<PolicyLossResult> DppoTv(const Inputs& in, const PolicyLossOptions& options, ClipRange clip) {
  return Dppo(in, options, clip, /*binary_kl=*/false);
}

absl::StatusOr<PolicyLossResult> DppoKl(const Inputs& in, const PolicyLossOptions& options, ClipRange clip) {
  return Dppo(in, options, clip, /*binary_kl=*/true);
}

absl::StatusOr<PolicyLossResult> Gpg(const Inputs& in, const PolicyLossOptions& options, ClipRange) {
  PolicyLossResult result;
  ASSIGN_OR_RETURN(result.loss, AggregateLoss(Weighted(-in.log_prob * in.advantages, in), in.mask,
                                              options.loss_agg_mode, options.loss_scale_factor));
  result.pg_clipfrac = ZeroMetric(in);
  result.pg_clipfrac_lower = ZeroMetric(in);
  result.ppo_kl = ZeroMetric(in);
  return result;
}

absl::StatusOr<PolicyLossResult> GeoMean(const Inputs& in, const PolicyLossOptions&, ClipRange clip) {
  const at::Tensor log_ratio = in.log_prob - in.old_log_prob;
  const at::Tensor mask = in.mask.to(log_ratio.scalar_type());
  // Per token the clipped log-ratio where clipping lowers the objective, sign-aware:
  // sign(A) min(sign(A) x, sign(A) clamp(x, -low, high)).
  const at::Tensor sign = in.advantages.sign();
  const at::Tensor clamped = log_ratio.clamp(-clip.low, clip.high);
  const at::Tensor token_log_ratio = sign * at::minimum(sign * log_ratio, sign * clamped);
  // The sequence's geometric-mean ratio and mean advantage (verl's 1e-8 in the count).
  const at::Tensor count = mask.sum(-1) + 1e-8;
  const at::Tensor ratio = ((token_log_ratio * mask).sum(-1) / count).exp();
  const at::Tensor advantage = (in.advantages * mask).sum(-1) / count;
  at::Tensor sequence_loss = -advantage * ratio;
  if (in.token_weights.defined()) {
    // The tokens' weights as the sequence's geometric mean, as verl does.
    sequence_loss = sequence_loss *
                    (((in.token_weights.detach() + 1e-10).log() * mask).sum(-1) / count).exp();
  }
  PolicyLossResult result;
  result.loss = sequence_loss.mean();
  c10::NoGradGuard no_grad;
  const at::Tensor clipped = log_ratio != clamped;
  result.pg_clipfrac = MetricMean(clipped.logical_and(in.advantages > 0), in.mask);
  result.pg_clipfrac_lower = MetricMean(clipped.logical_and(in.advantages < 0), in.mask);
  result.ppo_kl = MetricMean(-log_ratio, in.mask);
  return result;
}

// [B, T] bool: the response tokens whose covariance term (A - mean A)(log_prob - mean
// log_prob), means over the response tokens, is among the k largest (kl_cov).
at::Tensor LargestCovarianceTokens(const Inputs& in, double ratio) {
  c10::NoGradGuard no_grad;
  const at::Tensor response = in.mask != 0;
  at::Tensor chosen = at::zeros_like(response);
  const at::Tensor advantages = in.advantages.detach().masked_select(response);
  const at::Tensor log_prob = in.log_prob.detach().masked_select(response);
  const int64_t n = advantages.numel();
  if (n == 0) return chosen;
  const at::Tensor covariance = (advantages - advantages.mean()) * (log_prob - log_prob.mean());
  const int64_t k = std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(n) * ratio));
  const at::Tensor top = std::get<1>(covariance.topk(k));
  const at::Tensor response_positions = response.reshape(-1).nonzero().squeeze(-1);
  chosen.view(-1).index_fill_(0, response_positions.index_select(0, top), true);
  return chosen;
}

absl::StatusOr<PolicyLossResult> KlCov(const Inputs& in, const PolicyLossOptions& options, ClipRange) {
  const at::Tensor log_ratio = in.log_prob - in.old_log_prob;
  const at::Tensor abs_kl = log_ratio.abs();
  const at::Tensor plain = -in.advantages * log_ratio.exp();
  const at::Tensor token_loss = at::where(LargestCovarianceTokens(in, options.kl_cov_ratio),
                                          plain + options.ppo_kl_coef * abs_kl, plain);
  PolicyLossResult result;
  ASSIGN_OR_RETURN(result.loss, AggregateLoss(Weighted(token_loss, in), in.mask, options.loss_agg_mode,
                                              options.loss_scale_factor));
  c10::NoGradGuard no_grad;
  result.pg_clipfrac = ZeroMetric(in);
  result.pg_clipfrac_lower = ZeroMetric(in);
  result.ppo_kl = MetricMean(abs_kl, in.mask);
  return result;
}

// [B, T] bool: the tokens clip_cov detaches. Candidates are response tokens that PPO's
// clip left alone (`clipped` false) whose covariance term (A - mean A)(log_prob - mean
// log_prob), means over the response tokens, lies in (clip_cov_lb, clip_cov_ub); of them a
// seeded max(1, floor(n clip_cov_ratio)), n the response tokens.
at::Tensor CovarianceDetachedTokens(const Inputs& in, const PolicyLossOptions& options,
                                    const at::Tensor& clipped) {
  c10::NoGradGuard no_grad;
  const at::Tensor response = in.mask != 0;
  const at::Tensor mask = in.mask.to(in.log_prob.scalar_type());
  const at::Tensor log_prob = in.log_prob.detach();
  const at::Tensor covariance = (in.advantages - MaskedMean(in.advantages, mask)) *
                                (log_prob - MaskedMean(log_prob, mask));
  const at::Tensor candidates = response.logical_and(clipped.logical_not())
                                    .logical_and(covariance > options.clip_cov_lb)
                                    .logical_and(covariance < options.clip_cov_ub);
  const auto responses = static_cast<double>(response.sum().item<int64_t>());
  const int64_t count = std::max<int64_t>(1, static_cast<int64_t>(responses * options.clip_cov_ratio));
  return ChooseSeeded(candidates, count, options.selection_seed);
}

absl::StatusOr<PolicyLossResult> ClipCov(const Inputs& in, const PolicyLossOptions& options, ClipRange clip) {
  const at::Tensor log_ratio = in.log_prob - in.old_log_prob;
  const at::Tensor ratio = log_ratio.exp();
  const at::Tensor unclipped = -in.advantages * ratio;
  const at::Tensor clipped = -in.advantages * ratio.clamp(1.0 - clip.low, 1.0 + clip.high);
  const at::Tensor detached = CovarianceDetachedTokens(in, options, clipped > unclipped);
  const at::Tensor token_loss =
      at::maximum(unclipped, clipped) * detached.logical_not().to(unclipped.scalar_type());
  PolicyLossResult result;
  ASSIGN_OR_RETURN(result.loss, AggregateLoss(Weighted(token_loss, in), in.mask, options.loss_agg_mode,
                                              options.loss_scale_factor));
  c10::NoGradGuard no_grad;
  result.pg_clipfrac = MetricMean(detached, in.mask);
  result.pg_clipfrac_lower = ZeroMetric(in);
  result.ppo_kl = MetricMean(-log_ratio, in.mask);
  return result;
}

absl::StatusOr<PolicyLossResult> Cispo(const Inputs& in, const PolicyLossOptions& options, ClipRange clip) {
  const ClampedRatio r = ClampedRatioOf(in);
  const at::Tensor ratio = r.ratio.detach();
  const at::Tensor weight = ratio.clamp(1.0 - clip.low, 1.0 + clip.high);
  PolicyLossResult result;
  ASSIGN_OR_RETURN(result.loss, AggregateLoss(Weighted(-weight * in.advantages * in.log_prob, in), in.mask,
                                              options.loss_agg_mode, options.loss_scale_factor));
  c10::NoGradGuard no_grad;
  result.pg_clipfrac = MetricMean(ratio != weight, in.mask);
  result.pg_clipfrac_lower = ZeroMetric(in);
  result.ppo_kl = MetricMean(-r.log, in.mask);
  return result;
}

using LossFn = absl::StatusOr<PolicyLossResult> (*)(const Inputs&, const PolicyLossOptions&,
                                                    ClipRange);

struct LossMode {
  absl::string_view name;
  LossFn fn;
};

constexpr LossMode kLossModes[] = {
    {"vanilla", Vanilla},
    {"gspo", Gspo},
    {"sapo", Sapo},
    {"dppo_tv", DppoTv},
    {"dppo_kl", DppoKl},
    {"kl_cov", KlCov},
    {"clip_cov", ClipCov},
    {"geo_mean", GeoMean},
    {"cispo", Cispo},
    {"gpg", Gpg},
};

absl::StatusOr<LossFn> FindLossMode(absl::string_view name) {
  for (const LossMode& mode : kLossModes) {
    if (mode.name == name) return mode.fn;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("loss_mode: unknown policy loss mode \"", name, "\"; valid modes are ",
                   absl::StrJoin(kLossModes, ", ", [](std::string* out, const LossMode& mode) {
                     absl::StrAppend(out, mode.name);
                   })));
}

absl::Status CheckOptions(const PolicyLossOptions& options) {
  const std::pair<const char*, double> ranges[] = {{"clip_ratio", options.clip_ratio},
                                                   {"clip_ratio_low", options.clip_ratio_low},
                                                   {"clip_ratio_high", options.clip_ratio_high}};
  for (const auto& [name, value] : ranges) {
    // Written so that NaN fails too.
    if (!(value >= 0)) {
      return absl::InvalidArgumentError(absl::StrCat(name, ": must be >= 0; got ", value));
    }
  }
  if (!(options.clip_ratio_c > 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("clip_ratio_c: the dual-clip bound must be > 1; got ", options.clip_ratio_c));
  }
  if (options.loss_mode == "sapo" && !(options.tau_pos > 0 && options.tau_neg > 0)) {
    return absl::InvalidArgumentError(absl::StrCat("tau_pos and tau_neg: the gate's temperatures must be > 0; got ",
                                                   options.tau_pos, " and ", options.tau_neg));
  }
  if (options.loss_mode == "kl_cov") {
    if (!(options.kl_cov_ratio > 0 && options.kl_cov_ratio <= 1)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "kl_cov_ratio: the fraction of tokens penalised must be in (0, 1]; got ", options.kl_cov_ratio));
    }
    if (!(options.ppo_kl_coef >= 0)) {
      return absl::InvalidArgumentError(absl::StrCat("ppo_kl_coef: must be >= 0; got ", options.ppo_kl_coef));
    }
  }
  if (options.loss_mode == "clip_cov") {
    if (!(options.clip_cov_ratio > 0 && options.clip_cov_ratio <= 1)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "clip_cov_ratio: the fraction of tokens detached must be in (0, 1]; got ", options.clip_cov_ratio));
    }
    if (!(options.clip_cov_lb < options.clip_cov_ub)) {
      return absl::InvalidArgumentError(absl::StrCat("clip_cov_lb (", options.clip_cov_lb,
                                                     ") must be below clip_cov_ub (", options.clip_cov_ub,
                                                     "): no token could be chosen"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<PolicyLossResult> ComputePolicyLoss(const at::Tensor& old_log_prob,
                                                   const at::Tensor& log_prob,
                                                   const at::Tensor& advantages,
                                                   const at::Tensor& response_mask,
                                                   const PolicyLossOptions& options,
                                                   const at::Tensor& token_weights) {
  constexpr absl::string_view kContext = "policy loss";
  absl::StatusOr<LossFn> fn = FindLossMode(options.loss_mode);
  if (!fn.ok()) return WithContext(fn.status(), kContext);
  RETURN_IF_ERROR(WithContext(CheckOptions(options), kContext));
  RETURN_IF_ERROR(WithContext(
      CheckTokenLossInputs(
          response_mask, "response_mask",
          {{"old_log_prob", old_log_prob}, {"log_prob", log_prob}, {"advantages", advantages}}),
      kContext));
  if (token_weights.defined()) {
    RETURN_IF_ERROR(WithContext(
        CheckTokenLossInputs(response_mask, "response_mask", {{"token_weights", token_weights}}), kContext));
  }
  const ClipRange clip{options.clip_ratio_low > 0 ? options.clip_ratio_low : options.clip_ratio,
                       options.clip_ratio_high > 0 ? options.clip_ratio_high : options.clip_ratio};
  return WithContext((*fn)({old_log_prob, log_prob, advantages, response_mask, token_weights}, options, clip),
                     absl::StrCat(kContext, " (", options.loss_mode, ")"));
}

}  // namespace rollout::algorithms
