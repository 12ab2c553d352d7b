// The roles a worker process hosts, created on worker.init_roles: the critic alone (its
// own pool) or beside the policy roles (colocated), each registering its methods.
#include "workers/role_host.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace rollout::workers {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

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
                          "critic.update_critic", "critic.wait_checkpoint", "worker.init_roles"));
}

TEST(RoleHost, HostsTheCriticBesideThePolicyRoles) {
  EXPECT_THAT(MethodsAfterInit({"actor", "rollout", "ref", "critic"}),
              ElementsAre("actor.compute_log_prob", "actor.get_weights", "actor.load_checkpoint",
                          "actor.save_checkpoint", "actor.update_actor", "actor.wait_checkpoint",
                          "critic.compute_values", "critic.load_checkpoint", "critic.save_checkpoint",
                          "critic.update_critic", "critic.wait_checkpoint", "diag.policy_parameter_checksums",
                          "ref.compute_ref_log_prob", "rollout.generate_sequences", "worker.init_roles"));
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

}  // namespace
}  // namespace rollout::workers
