// PPO-style policy-gradient losses selected by verl's `actor.policy_loss.loss_mode`
// (verl's compute_policy_loss_vanilla / _gspo / _sapo / _dppo_tv / _dppo_kl / _kl_cov /
// _clip_cov / _geo_mean / _cispo / _gpg), with their metrics.
//
// Inputs, all [B, T] on one device:
//   old_log_prob   floating; log-probabilities of the sampled tokens under the policy that
//                  generated them (no gradient expected)
//   log_prob       floating; the same under the policy being trained (gradients flow here)
//   advantages     floating; per-token advantages
//   response_mask  any dtype; 1 for response tokens that count, 0 for padding. Masked
//                  tokens change neither the loss, its gradients, nor the metrics.
//   token_weights  optional (undefined: none), floating: each token's loss term is
//                  multiplied by its weight before aggregation (the rollout-correction
//                  importance weights, rollout_correction.h); no gradient flows to it.
// Every floating input must be finite, masked positions included.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace rollout::algorithms {

// verl's actor keys and defaults.
struct PolicyLossOptions {
  // "vanilla", "gspo", "sapo", "dppo_tv", "dppo_kl", "kl_cov", "clip_cov", "geo_mean",
  // "cispo" or "gpg" (actor.policy_loss.loss_mode).
  std::string loss_mode = "vanilla";
  // PPO's epsilon: the ratio is clipped to [1 - clip_ratio_low, 1 + clip_ratio_high].
  double clip_ratio = 0.2;
  double clip_ratio_low = 0;   // 0: clip_ratio
  double clip_ratio_high = 0;  // 0: clip_ratio (DAPO's clip-higher sets it above low)
  // Dual-clip bound (vanilla): for negative advantages the loss is capped at
  // -advantage * clip_ratio_c; dppo_tv / dppo_kl truncate their ratio weight at it. Must
  // exceed 1.
  double clip_ratio_c = 3.0;
  // sapo: the soft gate's temperatures for tokens with A > 0 and A <= 0 (actor.tau_pos /
  // actor.tau_neg); both > 0.
  double tau_pos = 1.0;
  double tau_neg = 1.05;
  // See loss_aggregation.h. gspo always aggregates with "seq-mean-token-mean", as verl
  // does, and ignores this.
  std::string loss_agg_mode = "token-mean";
  double loss_scale_factor = 0;  // seq-mean-token-sum-norm's horizon; 0: T
  // kl_cov: the fraction of response tokens penalised, in (0, 1], and the penalty's
  // coefficient (actor.policy_loss.kl_cov_ratio / ppo_kl_coef).
  double kl_cov_ratio = 0.0002;
  double ppo_kl_coef = 0.1;
  // clip_cov: the fraction of response tokens it may detach, in (0, 1], and the bounds of
  // the covariance terms eligible, lb < ub (actor.policy_loss.clip_cov_ratio / clip_cov_lb /
  // clip_cov_ub). The tokens are a random choice seeded by selection_seed, which the
  // caller varies by update and micro-batch (PolicyActor derives it from trainer.seed),
  // so that a resumed run chooses the same ones.
  double clip_cov_ratio = 0.0002;
  double clip_cov_lb = 1.0;
  double clip_cov_ub = 5.0;
  uint64_t selection_seed = 0;
};

struct PolicyLossResult {
  // 0-dim, the inputs' promoted dtype, on their device; differentiable w.r.t. log_prob.
  at::Tensor loss;
  // The metrics: 0-dim float64 on the inputs' device, outside the autograd graph. Reading
  // one (item()) waits for the device, so the caller chooses when.
  // Masked fraction of tokens whose clipped term was the larger (the one used).
  at::Tensor pg_clipfrac;
  // Masked fraction of tokens with a negative advantage capped by the dual clip
  // (always 0 for gspo, as in verl).
  at::Tensor pg_clipfrac_lower;
  // Masked mean of old_log_prob - log_prob (unclamped for gspo; the clamped log-ratio for
  // vanilla, as in verl).
  at::Tensor ppo_kl;
};

// vanilla: per token r = exp(clamp(log_prob - old_log_prob, -20, 20)) and
//   l = max(-A r, -A clip(r, 1 - low, 1 + high)); where A < 0, l = min(l, -A clip_ratio_c).
//   The per-token losses are aggregated by loss_agg_mode.
// gspo (arXiv 2507.18071): the sequence ratio s_b = exp(masked mean over the row of
//   (log_prob - old_log_prob)) is applied per token as s_b * exp(log_prob - sg[log_prob])
//   (sg: stop-gradient), so its value is s_b while each token's gradient is its own; the
//   log of that ratio is clamped at 10 from above. l = max(-A s, -A clip(s, 1 - low,
//   1 + high)), aggregated with seq-mean-token-mean. No dual clip.
// sapo (SAPO, arXiv 2511.20347): a soft gate in place of the clip, per token
//   l = -A (4 / tau) sigmoid(tau (r - 1)), r = exp(clamp(log_prob - old_log_prob, -20, 20)),
//   tau = tau_pos where A > 0 else tau_neg (its gradient is PPO's at r = 1 and fades away
//   from it); aggregated with seq-mean-token-mean, as in verl (loss_agg_mode ignored).
//   pg_clipfrac and pg_clipfrac_lower 0; ppo_kl as vanilla's.
// dppo_tv / dppo_kl (DPPO): l = -A w log_prob where the token is trusted, else 0 (no
//   gradient), with the weight w = sg(min(r, clip_ratio_c)) (r as sapo's). The trust
//   region bounds the change of the sampled token's probability p from its old p0, with
//   clip_ratio_low / clip_ratio_high as the divergence bounds: dppo_tv trusts
//   p - p0 <= high where A > 0 and p - p0 >= -low elsewhere; dppo_kl the binary KL
//   p0 log(p0 / p) + (1 - p0) log((1 - p0 + 1e-8) / (1 - p + 1e-8)) <= high (A > 0; or p
//   <= p0) and <= low (A <= 0; or p >= p0). Aggregated by loss_agg_mode. pg_clipfrac: the
//   masked fraction of untrusted tokens; pg_clipfrac_lower: of trusted ones whose ratio
//   exceeds clip_ratio_c; ppo_kl as vanilla's.
// kl_cov (arXiv 2505.22617): no clipping; per token l = -A r with r = exp(log_prob -
//   old_log_prob), except on the k = max(1, floor(n kl_cov_ratio)) of the n response
//   tokens with the largest covariance term (A - mean A)(log_prob - mean log_prob)
//   (means over the response tokens), where l = -A r + ppo_kl_coef |log_prob -
//   old_log_prob|; aggregated by loss_agg_mode. pg_clipfrac and pg_clipfrac_lower are 0,
//   ppo_kl is the masked mean of |old_log_prob - log_prob|, as in verl. Choosing the
//   tokens synchronises with the device.
// geo_mean (GMPO, arXiv 2507.20673): per token x = log_prob - old_log_prob, clipped where
//   that lowers the objective: x' = sign(A) min(sign(A) x, sign(A) clamp(x, -low, high));
//   per sequence the geometric-mean ratio r_b = exp(sum x' / (n_b + 1e-8)) and the mean
//   advantage A_b = sum A / (n_b + 1e-8) over its n_b response tokens; the loss is the
//   batch mean of -A_b r_b (loss_agg_mode ignored, as in verl), token weights entering as
//   their geometric mean over the sequence. pg_clipfrac / pg_clipfrac_lower: masked
//   fractions of tokens whose x was clamped with A > 0 / A < 0; ppo_kl as vanilla's,
//   unclamped.
// clip_cov (arXiv 2505.22617): PPO's clipped term max(-A r, -A clip(r, 1 - low, 1 + high)),
//   r = exp(log_prob - old_log_prob) unclamped and no dual clip, except that it is 0 (no
//   gradient) on k tokens: among the response tokens where the clip did not take the
//   larger term and whose covariance term (A - mean A)(log_prob - mean log_prob) (means
//   over the response tokens) lies in (clip_cov_lb, clip_cov_ub), a random
//   min(k', candidates) of them, k' = max(1, floor(n clip_cov_ratio)) for n response
//   tokens, chosen by selection_seed (seeded_choice.h); aggregated by loss_agg_mode.
//   pg_clipfrac is the masked fraction of those tokens, pg_clipfrac_lower 0, ppo_kl as
//   vanilla's, unclamped, as in verl (whose choice is an unseeded torch.randperm).
//   Choosing the tokens synchronises with the device.
// cispo (CISPO, arXiv 2506.13585): the clipped ratio as a constant weight, l = -sg(clip(r,
//   1 - low, 1 + high)) A log_prob with r = exp(clamp(log_prob - old_log_prob, -20, 20)),
//   so every token keeps a gradient; aggregated by loss_agg_mode. pg_clipfrac: masked
//   fraction of tokens whose ratio was clipped; pg_clipfrac_lower 0; ppo_kl as vanilla's.
// gpg (GPG, arXiv 2504.02546): plain policy gradient, l = -A log_prob per token (no ratio,
//   no clipping; old_log_prob unused), aggregated by loss_agg_mode; every metric 0, as in
//   verl.
//
// InvalidArgument naming the problem for: an unknown loss_mode (listing the valid ones),
// an unknown loss_agg_mode, clip ratios that are negative or non-finite, clip_ratio_c <= 1,
// tau_pos or tau_neg not above 0 (sapo),
// kl_cov_ratio outside (0, 1] or a negative ppo_kl_coef (kl_cov), clip_cov_ratio outside
// (0, 1] or clip_cov_lb >= clip_cov_ub (clip_cov),
// or inputs that fail CheckTokenLossInputs (shape, dtype, device, NaN / Inf).
// Checking the inputs' finiteness synchronises with the device (see CheckFinite).
absl::StatusOr<PolicyLossResult> ComputePolicyLoss(const at::Tensor& old_log_prob,
                                                   const at::Tensor& log_prob,
                                                   const at::Tensor& advantages,
                                                   const at::Tensor& response_mask,
                                                   const PolicyLossOptions& options,
                                                   const at::Tensor& token_weights = at::Tensor());

}  // namespace rollout::algorithms
