#include "controller/placement.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"

namespace rollout::controller {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

absl::StatusOr<Placement> Resolve(const std::string& yaml) {
  absl::StatusOr<config::LoadedRecipe> recipe = config::ParseRecipeYaml(yaml, "test.yaml");
  EXPECT_TRUE(recipe.ok()) << recipe.status();
  return ResolvePlacement(*recipe);
}

TEST(Placement, NoPoolsMakesVerlsGlobalPoolFromTrainerKeys) {
  absl::StatusOr<Placement> p =
      Resolve("trainer: {n_gpus_per_node: 2, device: cuda}\nalgorithm: {adv_estimator: grpo}\n");
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->pools.size(), 1u);
  EXPECT_EQ(p->pools[0].name, "global_pool");
  EXPECT_THAT(p->pools[0].roles, ElementsAre("actor", "ref", "rollout"));
  ASSERT_EQ(p->workers.size(), 2u);
  EXPECT_EQ(p->workers[0].device, "cuda:0");
  EXPECT_EQ(p->workers[1].device, "cuda:1");
  EXPECT_EQ(p->workers[1].rank, 1);
  EXPECT_EQ(p->workers[1].world, 2);
}

TEST(Placement, CriticOnlyForGae) {
  absl::StatusOr<Placement> gae = Resolve("trainer: {device: cpu}\n");
  ASSERT_TRUE(gae.ok());
  EXPECT_EQ(gae->role_to_pool.count("critic"), 1u);
  absl::StatusOr<Placement> grpo =
      Resolve("trainer: {device: cpu}\nalgorithm: {adv_estimator: grpo}\n");
  ASSERT_TRUE(grpo.ok());
  EXPECT_EQ(grpo->role_to_pool.count("critic"), 0u);
  // SFT and DPO train the actor alone, whatever the estimator's default says.
  for (const char* mode : {"sft", "dpo"}) {
    absl::StatusOr<Placement> offline =
        Resolve(absl::StrCat("trainer: {device: cpu, mode: ", mode, "}\nreward_model: {enable: true}\n"));
    ASSERT_TRUE(offline.ok()) << offline.status();
    EXPECT_THAT(offline->workers[0].roles, ElementsAre("actor")) << mode;
  }
}

// trainer.val_only validates the loaded weights: the actor and the rollout, nothing a
// training step alone uses, and no pool left without roles.
TEST(Placement, ValidationAloneStartsTheActorAndTheRolloutOnly) {
  absl::StatusOr<Placement> single = Resolve("trainer: {device: cpu, val_only: true}\nreward_model: {enable: true}\n");
  ASSERT_TRUE(single.ok()) << single.status();
  ASSERT_EQ(single->workers.size(), 1u);
  EXPECT_THAT(single->workers[0].roles, ElementsAre("actor", "rollout"));  // gae, the default: no critic either
  absl::StatusOr<Placement> pools = Resolve(R"(
resource_pools:
  policy: {device: cpu}
  values: {device: cpu}
placement: {actor: policy, rollout: policy, ref: policy, critic: values}
trainer: {val_only: true}
)");
  ASSERT_TRUE(pools.ok()) << pools.status();
  ASSERT_EQ(pools->pools.size(), 1u);
  EXPECT_EQ(pools->pools[0].name, "policy");
  EXPECT_THAT(pools->idle_pools, ElementsAre("values"));
  EXPECT_THAT(pools->Describe(), HasSubstr("pool values: not started (trainer.val_only"));
  EXPECT_EQ(pools->workers.size(), 1u);
}

TEST(Placement, RewardModelOnlyWhenEnabled) {
  absl::StatusOr<Placement> off = Resolve("trainer: {device: cpu}\nalgorithm: {adv_estimator: grpo}\n");
  ASSERT_TRUE(off.ok()) << off.status();
  EXPECT_EQ(off->role_to_pool.count("reward_model"), 0u);
  absl::StatusOr<Placement> colocated =
      Resolve("trainer: {device: cpu}\nalgorithm: {adv_estimator: grpo}\nreward_model: {enable: true}\n");
  ASSERT_TRUE(colocated.ok()) << colocated.status();
  ASSERT_EQ(colocated->workers.size(), 1u);
  EXPECT_THAT(colocated->workers[0].roles, ElementsAre("actor", "ref", "reward_model", "rollout"));
  absl::StatusOr<Placement> own_pool = Resolve(R"(
resource_pools:
  policy: {device: cpu}
  rm: {device: cpu}
placement: {actor: policy, rollout: policy, ref: policy, reward_model: rm}
algorithm: {adv_estimator: grpo}
reward_model: {enable: true}
)");
  ASSERT_TRUE(own_pool.ok()) << own_pool.status();
  EXPECT_THAT(own_pool->Describe(), HasSubstr("pool rm: 1 node(s) x 1 cpu, roles reward_model"));
  absl::StatusOr<Placement> unplaced = Resolve(R"(
resource_pools:
  policy: {device: cpu}
  rm: {device: cpu}
placement: {actor: policy, rollout: policy, ref: policy}
algorithm: {adv_estimator: grpo}
reward_model: {enable: true}
)");
  EXPECT_THAT(unplaced.status().message(), HasSubstr("placement.reward_model is not set"));
}

TEST(Placement, SeparatePoolsGetDistinctGpus) {
  absl::StatusOr<Placement> p = Resolve(R"(
resource_pools:
  actor_pool: {devices_per_node: 2}
  critic_pool: {devices_per_node: 1}
placement: {actor: actor_pool, rollout: actor_pool, ref: actor_pool, critic: critic_pool}
)");
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->workers.size(), 3u);
  EXPECT_EQ(p->workers[0].pool, "actor_pool");
  EXPECT_EQ(p->workers[0].device, "cuda:0");
  EXPECT_EQ(p->workers[1].device, "cuda:1");
  EXPECT_EQ(p->workers[2].pool, "critic_pool");
  EXPECT_EQ(p->workers[2].device, "cuda:2");
  EXPECT_THAT(p->workers[2].roles, ElementsAre("critic"));
  EXPECT_THAT(p->Describe(), HasSubstr("pool critic_pool: 1 node(s) x 1 cuda, roles critic"));
}

TEST(Placement, UnknownPoolNamesKeyAndLocation) {
  absl::StatusOr<Placement> p = Resolve(R"(
resource_pools:
  gpu: {devices_per_node: 1}
placement:
  actor: gpu
  rollout: gpu
  ref: gpu2
algorithm: {adv_estimator: grpo}
)");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(std::string(p.status().message()),
            "'placement.ref' at test.yaml:7 names pool 'gpu2', which is not in resource_pools "
            "(gpu)");
}

TEST(Placement, UnplacedRoleWithSeveralPoolsIsAnError) {
  absl::StatusOr<Placement> p = Resolve(R"(
resource_pools:
  a: {device: cpu}
  b: {device: cpu}
placement: {actor: a, rollout: a}
algorithm: {adv_estimator: grpo}
)");
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(std::string(p.status().message()),
              HasSubstr("placement.ref is not set and the recipe has 2 resource pools (a, b)"));
}

TEST(Placement, PoolWithoutRolesIsAnError) {
  absl::StatusOr<Placement> p = Resolve(R"(
resource_pools:
  a: {device: cpu}
  spare: {device: cpu}
placement: {actor: a, rollout: a, ref: a}
algorithm: {adv_estimator: grpo}
)");
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(std::string(p.status().message()),
              HasSubstr("resource pool 'spare' at test.yaml:4 has no roles"));
}

TEST(Placement, SeveralNodesNeedMoreThanTheLocalLauncher) {
  absl::StatusOr<Placement> p =
      Resolve("trainer: {nnodes: 2, device: cpu}\nalgorithm: {adv_estimator: grpo}\n");
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(std::string(p.status().message()), HasSubstr("spans 2 nodes"));
}

}  // namespace
}  // namespace rollout::controller
