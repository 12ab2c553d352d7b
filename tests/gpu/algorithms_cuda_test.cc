// The algorithms on CUDA tensors give what they give on the CPU (same formulas, device
// kernels): advantages, the group filter, entropy, policy and value losses.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <string>

#include "algorithms/advantages.h"
#include "algorithms/dapo.h"
#include "algorithms/entropy.h"
#include "algorithms/policy_loss.h"
#include "algorithms/value_loss.h"

namespace rollout::algorithms {
namespace {

TEST(AlgorithmsCuda, AdvantagesMatchTheCpu) {
  at::manual_seed(10);
  AdvantageInputs cpu;
  cpu.token_level_rewards = at::randn({12, 6}, at::kDouble);
  cpu.values = at::randn({12, 6}, at::kDouble);
  cpu.response_mask = at::arange(6).unsqueeze(0) < at::randint(2, 7, {12, 1});
  cpu.index = at::arange(12, at::kLong).remainder(4) * 10 + 3;
  cpu.reward_baselines = at::randn({12}, at::kDouble);
  const at::Tensor p = at::rand({12, 6}, at::kDouble) * 0.9 + 0.05;
  cpu.old_log_probs = p.log();
  cpu.sum_pi_squared = p.square() + (1 - p).square() * at::rand({12, 6}, at::kDouble);
  cpu.rollout_is_weights = at::rand({12, 6}, at::kDouble);
  AdvantageInputs gpu = cpu;
  gpu.token_level_rewards = cpu.token_level_rewards.cuda();
  gpu.response_mask = cpu.response_mask.cuda();
  gpu.values = cpu.values.cuda();
  gpu.reward_baselines = cpu.reward_baselines.cuda();  // index stays on the CPU
  gpu.old_log_probs = cpu.old_log_probs.cuda();
  gpu.sum_pi_squared = cpu.sum_pi_squared.cuda();
  gpu.rollout_is_weights = cpu.rollout_is_weights.cuda();
  for (const std::string& name : AdvantageEstimatorNames()) {
    const Advantages want = ComputeAdvantages(name, cpu, AdvantageOptions()).value();
    const Advantages got = ComputeAdvantages(name, gpu, AdvantageOptions()).value();
    EXPECT_TRUE(got.advantages.is_cuda()) << name;
    EXPECT_TRUE(at::allclose(got.advantages.cpu(), want.advantages, 1e-9, 1e-9)) << name;
    EXPECT_TRUE(at::allclose(got.returns.cpu(), want.returns, 1e-9, 1e-9)) << name;
  }
}

TEST(AlgorithmsCuda, GroupFilterMatchesTheCpu) {
  at::manual_seed(11);
  const at::Tensor metric = at::randint(0, 2, {64}, at::kDouble);
  const at::Tensor ids = at::arange(16, at::kLong).repeat_interleave(4);
  const GroupFilter cpu = FilterGroups(metric, ids).value();
  const GroupFilter gpu = FilterGroups(metric.cuda(), ids).value();
  EXPECT_TRUE(gpu.keep.is_cuda());
  EXPECT_TRUE(at::equal(gpu.keep.cpu(), cpu.keep));
  EXPECT_EQ(gpu.num_kept_groups, cpu.num_kept_groups);
}

TEST(AlgorithmsCuda, EntropyMatchesTheCpu) {
  at::manual_seed(13);
  const at::Tensor logits = (at::randn({5, 3, 257}) * 4).to(at::kBFloat16);
  const at::Tensor gpu = EntropyFromLogits(logits.cuda()).value();
  EXPECT_TRUE(gpu.is_cuda());
  EXPECT_EQ(gpu.scalar_type(), at::kFloat);
  EXPECT_TRUE(at::allclose(gpu.cpu(), EntropyFromLogits(logits).value(), 1e-4, 1e-5));
}

TEST(AlgorithmsCuda, PolicyLossAndGradientMatchTheCpu) {
  at::manual_seed(14);
  const at::Tensor old_log_prob = at::randn({4, 9});
  const at::Tensor advantages = at::randn({4, 9});
  const at::Tensor mask = at::rand({4, 9}) > 0.3;
  const at::Tensor log_prob = old_log_prob + at::rand({4, 9}) - 0.5;
  for (const char* loss_mode : {"vanilla", "gspo", "sapo", "dppo_tv", "dppo_kl", "kl_cov", "clip_cov",
                               "geo_mean", "cispo", "gpg"}) {
    PolicyLossOptions options;
    options.loss_mode = loss_mode;
    options.kl_cov_ratio = 0.2;  // kl_cov: 5 of the ~25 response tokens, chosen on each device
    // clip_cov: up to 5 of the tokens with a positive covariance term, the same seeded choice
    // on each device.
    options.clip_cov_ratio = 0.2;
    options.clip_cov_lb = 0;
    options.selection_seed = 7;
    at::Tensor cpu_lp = log_prob.clone().requires_grad_(true);
    at::Tensor gpu_lp = log_prob.cuda().requires_grad_(true);
    const PolicyLossResult cpu =
        ComputePolicyLoss(old_log_prob, cpu_lp, advantages, mask, options).value();
    const PolicyLossResult gpu = ComputePolicyLoss(old_log_prob.cuda(), gpu_lp, advantages.cuda(),
                                                   mask.cuda(), options)
                                     .value();
    cpu.loss.backward();
    gpu.loss.backward();
    EXPECT_TRUE(gpu.loss.is_cuda()) << loss_mode;
    EXPECT_NEAR(gpu.loss.item<double>(), cpu.loss.item<double>(), 1e-5) << loss_mode;
    EXPECT_NEAR(gpu.pg_clipfrac.item<double>(), cpu.pg_clipfrac.item<double>(), 1e-6) << loss_mode;
    EXPECT_NEAR(gpu.pg_clipfrac_lower.item<double>(), cpu.pg_clipfrac_lower.item<double>(), 1e-6) << loss_mode;
    EXPECT_NEAR(gpu.ppo_kl.item<double>(), cpu.ppo_kl.item<double>(), 1e-5) << loss_mode;
    EXPECT_TRUE(at::allclose(gpu_lp.grad().cpu(), cpu_lp.grad(), 1e-4, 1e-6)) << loss_mode;
  }
}

TEST(AlgorithmsCuda, ValueLossAndGradientMatchTheCpu) {
  at::manual_seed(15);
  const at::Tensor vpreds = at::randn({4, 9});
  const at::Tensor returns = at::randn({4, 9});
  const at::Tensor old_values = at::randn({4, 9});
  const at::Tensor mask = at::rand({4, 9}) > 0.3;
  at::Tensor cpu_v = vpreds.clone().requires_grad_(true);
  at::Tensor gpu_v = vpreds.cuda().requires_grad_(true);
  const ValueLossResult cpu =
      ComputeValueLoss(cpu_v, returns, old_values, mask, ValueLossOptions()).value();
  const ValueLossResult gpu = ComputeValueLoss(gpu_v, returns.cuda(), old_values.cuda(),
                                               mask.cuda(), ValueLossOptions())
                                  .value();
  cpu.loss.backward();
  gpu.loss.backward();
  EXPECT_TRUE(gpu.loss.is_cuda());
  EXPECT_NEAR(gpu.loss.item<double>(), cpu.loss.item<double>(), 1e-5);
  EXPECT_NEAR(gpu.vf_clipfrac.item<double>(), cpu.vf_clipfrac.item<double>(), 1e-6);
  EXPECT_TRUE(at::allclose(gpu_v.grad().cpu(), cpu_v.grad(), 1e-4, 1e-6));
}

}  // namespace
}  // namespace rollout::algorithms
