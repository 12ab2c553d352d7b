// The roles a worker process hosts, created on worker.init_roles: the critic alone (its
// own pool) or beside the policy roles (colocated), each registering its methods; and
// an actor and a rollout in two pools that form a weight-sync group there.
#include "workers/role_host.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

#include "tests/workers/gloo_ranks.h"

namespace rollout::workers {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

config::Recipe TinyRecipe() {
  config::Recipe recipe;
  recipe.mutable_actor()->mutable_model()->set_path("tests/data/tiny-qwen2");
  recipe.mutable_actor()->mutable_model()->set_dtype("float32");
  recipe.mutable_critic()->mutable_model()->set_dtype("float32");
  recipe.mutable_actor()->set_ppo_mini_batch_size(2);
  recipe.mutable_critic()->set_ppo_mini_batch_size(2);
  recipe.mutable_rollout()->set_n(2);
  recipe.mutable_rollout()->set_cpu_kv_cache_gib(0.01);
  recipe.mutable_data()->set_max_prompt_length(16);
  recipe.mutable_data()->set_max_response_length(8);
  return recipe;
}

// The registry's method names after worker.init_roles on a host of `roles`.
std::vector<std::string> MethodsAfterInit(const std::vector<std::string>& roles) {
  MethodRegistry registry;
  RoleHostOptions options;
  options.roles = roles;
  RoleHost host(options, &registry);
  EXPECT_TRUE(host.RegisterInitMethod().ok());
  host.SetRecipe(TinyRecipe());
  Batch init;
  init.SetMeta("total_training_steps", "3");
  EXPECT_TRUE(registry.Invoke("worker.init_roles", init).ok());
  EXPECT_THAT(registry.Invoke("worker.init_roles", init).status().message(), HasSubstr("called twice"));
  return registry.Names();
}

TEST(RoleHost, HostsTheCriticAlone) {
  EXPECT_THAT(MethodsAfterInit({"critic"}),
              ElementsAre("critic.compute_values", "critic.load_checkpoint", "critic.save_checkpoint",
                          "critic.update_critic", "critic.wait_checkpoint", "worker.init_roles",
                          "worker.prompt_lengths"));
}

TEST(RoleHost, HostsTheCriticBesideThePolicyRoles) {
  EXPECT_THAT(MethodsAfterInit({"actor", "rollout", "ref", "critic"}),
              ElementsAre("actor.compute_log_prob", "actor.get_weights", "actor.load_checkpoint",
                          "actor.save_checkpoint", "actor.update_actor", "actor.wait_checkpoint",
                          "critic.compute_values", "critic.load_checkpoint", "critic.save_checkpoint",
                          "critic.update_critic", "critic.wait_checkpoint", "diag.policy_parameter_checksums",
                          "ref.compute_ref_log_prob", "rollout.generate_sequences", "worker.init_roles",
                          "worker.prompt_lengths"));
}

// worker.prompt_lengths needs no roles: the controller asks before worker.init_roles.
TEST(RoleHost, CountsPromptTokensBeforeAnyRoleStarts) {
  MethodRegistry registry;
  RoleHostOptions options;
  options.roles = {"actor", "rollout"};
  RoleHost host(options, &registry);
  ASSERT_TRUE(host.RegisterInitMethod().ok());
  host.SetRecipe(TinyRecipe());
  Batch prompts;
  ASSERT_TRUE(prompts.AddStrings("prompt", {"12+35=", R"([{"role": "user", "content": "hi"}])"}).ok());
  ASSERT_TRUE(prompts.AddStrings("prompt_format", {"text", "chat"}).ok());
  const absl::StatusOr<Batch> lengths = registry.Invoke("worker.prompt_lengths", prompts);
  ASSERT_TRUE(lengths.ok()) << lengths.status();
  EXPECT_EQ(lengths->Tensor("prompt_length").value().numel(), 2);
  EXPECT_GT(lengths->Tensor("prompt_length").value().min().item<int64_t>(), 0);
  EXPECT_THAT(registry.Names(), Not(Contains("actor.update_actor")));
}

TEST(RoleHost, ABadStepCountIsAClearError) {
  MethodRegistry registry;
  RoleHostOptions options;
  options.roles = {"critic"};
  RoleHost host(options, &registry);
  ASSERT_TRUE(host.RegisterInitMethod().ok());
  host.SetRecipe(TinyRecipe());
  Batch init;
  init.SetMeta("total_training_steps", "three");
  EXPECT_THAT(registry.Invoke("worker.init_roles", init).status().message(),
              HasSubstr("total_training_steps 'three' is not an integer"));
}

// A worker of `pool` hosting `roles`, ready for worker.init_roles.
struct PoolWorker {
  PoolWorker(const std::string& pool, std::vector<std::string> roles, RendezvousClient* rendezvous,
             const config::Recipe& recipe)
      : host(Options(pool, std::move(roles), rendezvous), &registry) {
    EXPECT_TRUE(host.RegisterInitMethod().ok());
    host.SetRecipe(recipe);
  }
  static RoleHostOptions Options(const std::string& pool, std::vector<std::string> roles,
                                 RendezvousClient* rendezvous) {
    RoleHostOptions options;
    options.roles = std::move(roles);
    options.pool = pool;
    options.rendezvous = rendezvous;
    return options;
  }
  // The policy's LoRA checksums (diag.policy_parameter_checksums).
  std::vector<std::string> LoraChecksums() {
    const Batch rows = registry.Invoke("diag.policy_parameter_checksums", Batch()).value();
    const std::vector<std::string> kinds = rows.Strings("kind").value();
    const std::vector<std::string> crcs = rows.Strings("crc32c").value();
    std::vector<std::string> lora;
    for (size_t i = 0; i < kinds.size(); ++i) {
      if (kinds[i] == "lora") lora.push_back(crcs[i]);
    }
    return lora;
  }

  MethodRegistry registry;
  RoleHost host;
};

// Runs `actor_method` and `rollout_method` at the same time; both must succeed.
void OnBoth(PoolWorker& actor, const std::string& actor_method, PoolWorker& rollout,
            const std::string& rollout_method, const Batch& input, Batch* actor_reply, Batch* rollout_reply) {
  std::thread rollout_thread([&] {
    absl::StatusOr<Batch> reply = rollout.registry.Invoke(rollout_method, input);
    ASSERT_TRUE(reply.ok()) << reply.status();
    *rollout_reply = *reply;
  });
  absl::StatusOr<Batch> reply = actor.registry.Invoke(actor_method, input);
  rollout_thread.join();
  ASSERT_TRUE(reply.ok()) << reply.status();
  *actor_reply = *reply;
}

TEST(RoleHost, AnActorAndARolloutInTwoPoolsSyncWeightsByBroadcast) {
  if (!HasCollectivesFor(c10::Device(c10::kCPU))) GTEST_SKIP() << "this build has no Gloo";
  testing::InMemoryRendezvous rendezvous;
  // LoRA adapters drawn from different seeds: the weights differ until they are synced.
  config::Recipe recipe = TinyRecipe();
  recipe.mutable_actor()->mutable_model()->set_lora_rank(4);
  recipe.mutable_actor()->mutable_model()->set_lora_alpha(8);
  recipe.mutable_trainer()->set_seed(1);
  PoolWorker actor("train", {"actor"}, &rendezvous, recipe);
  recipe.mutable_trainer()->set_seed(2);
  PoolWorker rollout("generate", {"rollout"}, &rendezvous, recipe);
  Batch init;
  init.SetMeta("weight_sync_group", "weight_sync.train.generate");
  init.SetMeta("weight_sync_actor_pool", "train");
  init.SetMeta("weight_sync_rollout_pool", "generate");
  init.SetMeta("weight_sync_world_size", "2");
  Batch actor_reply, rollout_reply;
  OnBoth(actor, "worker.init_roles", rollout, "worker.init_roles", init, &actor_reply, &rollout_reply);
  EXPECT_EQ(actor_reply.Meta("weight_sync"), "broadcast");
  EXPECT_EQ(rollout_reply.Meta("weight_sync"), "broadcast");
  EXPECT_THAT(actor.registry.Names(), Contains("actor.broadcast_weights"));
  EXPECT_THAT(rollout.registry.Names(), Contains("rollout.receive_weights"));
  EXPECT_THAT(rollout.registry.Names(), Not(Contains("rollout.update_weights")));  // one way in
  ASSERT_FALSE(actor.LoraChecksums().empty());
  ASSERT_NE(actor.LoraChecksums(), rollout.LoraChecksums());

  OnBoth(actor, "actor.broadcast_weights", rollout, "rollout.receive_weights", Batch(), &actor_reply,
         &rollout_reply);
  EXPECT_EQ(actor.LoraChecksums(), rollout.LoraChecksums());
}

}  // namespace
}  // namespace rollout::workers
