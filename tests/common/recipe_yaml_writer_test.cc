#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include <string>

#include "common/recipe_loader.h"
#include "tests/support/temp_dir.h"

namespace rollout::config {
namespace {

using ::rollout::testing::TempDir;
using google::protobuf::util::MessageDifferencer;

LoadedRecipe ParseOk(const std::string& yaml) {
  absl::StatusOr<LoadedRecipe> parsed = ParseRecipeYaml(yaml, "printed");
  EXPECT_TRUE(parsed.ok()) << parsed.status() << "\n" << yaml;
  return parsed.ok() ? *std::move(parsed) : LoadedRecipe{};
}

// The loader leaves keys no layer set unset, while the printed text sets every key,
// so the round trip is compared with Equivalent (unset == default), and the printed
// text must be a fixed point.
void ExpectRoundTrip(const Recipe& recipe) {
  const std::string yaml = RecipeToYaml(recipe);
  const LoadedRecipe reparsed = ParseOk(yaml);
  std::string difference;
  MessageDifferencer differencer;
  differencer.set_message_field_comparison(MessageDifferencer::EQUIVALENT);
  differencer.ReportDifferencesToString(&difference);
  EXPECT_TRUE(differencer.Compare(recipe, reparsed.recipe)) << difference << "\n" << yaml;
  EXPECT_EQ(RecipeToYaml(reparsed.recipe), yaml);
}

TEST(RecipeYamlWriter, PrintsEveryKeyWithItsDefault) {
  const std::string yaml = RecipeToYaml(Recipe());
  EXPECT_NE(yaml.find("rollout:\n  name: native\n  temperature: 1\n"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("    lr: 1e-06\n"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("  logger: [console]\n"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("target_modules: [all-linear]\n"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("resource_pools: {}\n"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("  actor: null\n"), std::string::npos) << yaml;  // no default: unset prints null
  EXPECT_NE(yaml.find("default_local_dir: checkpoints/${trainer.project_name}/"
                      "${trainer.experiment_name}\n"),
            std::string::npos)
      << yaml;
}

TEST(RecipeYamlWriter, LoadedRecipeRoundTrips) {
  TempDir dir("recipe_writer");
  dir.Write("base.yaml", "actor_rollout_ref:\n"
                                      "  model: {path: /models/qwen, lora_rank: 8}\n"
                                      "  actor:\n"
                                      "    optim: {lr: 3e-7, weight_decay: 0.1}\n"
                                      "    checkpoint: {save_contents: [model]}\n");
  dir.Write("run.yaml", "extends: base.yaml\n"
                                     "resource_pools:\n"
                                     "  trainer_pool: {nodes: 2, devices_per_node: 8}\n"
                                     "  a_pool: {device: cpu}\n"
                                     "placement: {actor: trainer_pool, rollout: trainer_pool}\n"
                                     "data:\n"
                                     "  train_files: [a.parquet, 'b c.parquet']\n"
                                     "  prompt_key: 'null'\n"
                                     "rollout: {n: 8, temperature: 0.7, top_p: 0.95}\n"
                                     "trainer:\n"
                                     "  project_name: 'math: hard'\n"
                                     "  experiment_name: ' #1'\n"
                                     "  logger: [console, wandb]\n");
  const absl::StatusOr<LoadedRecipe> loaded =
      LoadRecipe(dir.Path("run.yaml"),
                 {"algorithm.adv_estimator=grpo", "algorithm.kl_ctrl.kl_coef=0.3333333333333333",
                  "reward.name=", "placement.ref=''"});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->recipe.trainer().default_local_dir(), "checkpoints/math: hard/ #1");
  ExpectRoundTrip(loaded->recipe);
}

TEST(RecipeYamlWriter, DoublesRoundTripExactly) {
  Recipe recipe;
  recipe.mutable_actor()->mutable_optim()->set_lr(0.1 + 0.2);
  recipe.mutable_actor()->mutable_optim()->set_eps(5e-324);
  recipe.mutable_rollout()->set_temperature(1e300);
  recipe.mutable_algorithm()->set_gamma(1.0 / 3.0);
  const LoadedRecipe reparsed = ParseOk(RecipeToYaml(recipe));
  EXPECT_EQ(reparsed.recipe.actor().optim().lr(), 0.1 + 0.2);
  EXPECT_EQ(reparsed.recipe.actor().optim().eps(), 5e-324);
  EXPECT_EQ(reparsed.recipe.rollout().temperature(), 1e300);
  EXPECT_EQ(reparsed.recipe.algorithm().gamma(), 1.0 / 3.0);
}

TEST(RecipeYamlWriter, StringsThatLookLikeOtherYamlSurvive) {
  Recipe recipe;
  recipe.mutable_trainer()->set_project_name("");
  recipe.mutable_trainer()->set_experiment_name("~");
  recipe.mutable_reward()->set_name("true");
  recipe.mutable_reward()->set_remote("localhost:50051");
  recipe.mutable_actor()->mutable_model()->set_path("[x]");
  recipe.mutable_data()->add_train_files("a, b");
  recipe.mutable_data()->add_train_files("{c}");
  recipe.mutable_data()->add_val_files("1e-5");
  const LoadedRecipe reparsed = ParseOk(RecipeToYaml(recipe));
  EXPECT_EQ(reparsed.recipe.trainer().project_name(), "");
  EXPECT_EQ(reparsed.recipe.trainer().experiment_name(), "~");
  EXPECT_EQ(reparsed.recipe.reward().name(), "true");
  EXPECT_EQ(reparsed.recipe.reward().remote(), "localhost:50051");
  EXPECT_EQ(reparsed.recipe.actor().model().path(), "[x]");
  ASSERT_EQ(reparsed.recipe.data().train_files_size(), 2);
  EXPECT_EQ(reparsed.recipe.data().train_files(0), "a, b");
  EXPECT_EQ(reparsed.recipe.data().train_files(1), "{c}");
  EXPECT_EQ(reparsed.recipe.data().val_files(0), "1e-5");
}

TEST(RecipeYamlWriter, MapEntriesAreSortedByName) {
  Recipe recipe;
  (*recipe.mutable_resource_pools())["zeta"].set_nodes(2);
  (*recipe.mutable_resource_pools())["alpha"].set_device("cpu");
  const std::string yaml = RecipeToYaml(recipe);
  const size_t alpha = yaml.find("  alpha:\n");
  const size_t zeta = yaml.find("  zeta:\n");
  ASSERT_NE(alpha, std::string::npos) << yaml;
  ASSERT_NE(zeta, std::string::npos) << yaml;
  EXPECT_LT(alpha, zeta);
  EXPECT_EQ(ParseOk(yaml).recipe.resource_pools().at("zeta").nodes(), 2);
}

}  // namespace
}  // namespace rollout::config
