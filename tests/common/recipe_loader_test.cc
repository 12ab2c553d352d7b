#include "common/recipe_loader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/file_util.h"
#include "tests/support/temp_dir.h"

namespace rollout::config {
namespace {

using ::rollout::testing::TempDir;
using ::testing::ElementsAre;

LoadedRecipe LoadOk(const std::string& path, const std::vector<std::string>& overrides = {}) {
  absl::StatusOr<LoadedRecipe> loaded = LoadRecipe(path, overrides);
  EXPECT_TRUE(loaded.ok()) << loaded.status();
  return loaded.ok() ? *std::move(loaded) : LoadedRecipe{};
}

// Tests that load one recipe, x.yaml, and look at the error.
class RecipeLoader : public ::testing::Test {
 protected:
  // The error message of loading `text` (written to path_) with `overrides`.
  std::string LoadError(const std::string& text, const std::vector<std::string>& overrides = {},
                        absl::StatusCode code = absl::StatusCode::kInvalidArgument) {
    files_.Write("x.yaml", text);
    absl::StatusOr<LoadedRecipe> loaded = LoadRecipe(path_, overrides);
    EXPECT_EQ(loaded.status().code(), code) << loaded.status();
    return std::string(loaded.status().message());
  }

  TempDir files_{"recipe"};
  const std::string path_ = files_.Path("x.yaml");
};

TEST_F(RecipeLoader, FileValuesWinAndUnsetKeysReadAsDefaults) {
  const LoadedRecipe loaded = LoadOk(files_.Write("r.yaml",
                                                  "algorithm:\n"
                                                  "  adv_estimator: grpo\n"
                                                  "rollout:\n"
                                                  "  n: 8\n"
                                                  "  do_sample: no\n"
                                                  "actor:\n"
                                                  "  optim: {lr: 1e-6, weight_decay: 0}\n"));
  EXPECT_EQ(loaded.recipe.algorithm().adv_estimator(), "grpo");
  EXPECT_EQ(loaded.recipe.rollout().n(), 8);
  EXPECT_FALSE(loaded.recipe.rollout().do_sample());
  EXPECT_DOUBLE_EQ(loaded.recipe.actor().optim().lr(), 1e-6);
  EXPECT_EQ(loaded.recipe.actor().optim().weight_decay(), 0);
  EXPECT_EQ(loaded.recipe.data().train_batch_size(), 1024);
  // Unset keys stay unset (has_ is false) and read as their defaults.
  EXPECT_FALSE(loaded.recipe.data().has_train_batch_size());
  EXPECT_TRUE(loaded.recipe.rollout().has_n());
}

TEST_F(RecipeLoader, UnknownKeySuggestsClosestValidKey) {
  const std::string message = LoadError("actor:\n  optim:\n    learning_rate: 1e-5\n");
  EXPECT_EQ(message, "unknown key 'actor.optim.learning_rate' at " + path_ +
                         ":3 — did you mean 'actor.optim.lr'?");
  EXPECT_EQ(
      LoadError("rollout:\n  temprature: 0.7\n"),
      "unknown key 'rollout.temprature' at " + path_ + ":2 — did you mean 'rollout.temperature'?");
}

TEST_F(RecipeLoader, UnknownKeySuggestsWhereAMovedKeyLives) {
  EXPECT_EQ(LoadError("actor:\n  lr: 1e-5\n"),
            "unknown key 'actor.lr' at " + path_ + ":2 — did you mean 'actor.optim.lr'?");
  EXPECT_EQ(LoadError("n: 8\n"), "unknown key 'n' at " + path_ +
                                     ":1 — did you mean 'rollout.n' or 'rollout.val_kwargs.n'?");
}

TEST_F(RecipeLoader, UnknownKeyWithoutSuggestionListsValidKeys) {
  EXPECT_EQ(LoadError("resource_pools:\n  gpu:\n    zzz: 1\n"),
            "unknown key 'resource_pools.gpu.zzz' at " + path_ +
                ":3; valid keys under 'resource_pools.gpu': device, devices_per_node, nodes");
}

TEST_F(RecipeLoader, WrongTypeNamesExpectedAndGivenValue) {
  EXPECT_EQ(LoadError("rollout:\n  n: eight\n"),
            "wrong type for 'rollout.n' at " + path_ + ":2: expected an integer, got 'eight'");
  EXPECT_EQ(LoadError("rollout:\n  n: 1.5\n"),
            "wrong type for 'rollout.n' at " + path_ + ":2: expected an integer, got '1.5'");
  EXPECT_EQ(LoadError("data:\n  shuffle: maybe\n"), "wrong type for 'data.shuffle' at " + path_ +
                                                        ":2: expected true or false, got 'maybe'");
  EXPECT_EQ(LoadError("actor:\n  optim:\n    lr: fast\n"),
            "wrong type for 'actor.optim.lr' at " + path_ + ":3: expected a number, got 'fast'");
  EXPECT_EQ(LoadError("rollout:\n  n: [1, 2]\n"),
            "wrong type for 'rollout.n' at " + path_ + ":2: expected an integer, got a list");
  EXPECT_EQ(
      LoadError("trainer:\n  project_name: {a: 1}\n"),
      "wrong type for 'trainer.project_name' at " + path_ + ":2: expected a string, got a map");
  EXPECT_EQ(LoadError("actor: 3\n"),
            "wrong type for 'actor' at " + path_ + ":1: expected a map of keys, got '3'");
  EXPECT_EQ(LoadError("trainer:\n  logger: [[a]]\n"),
            "wrong type for 'trainer.logger' at " + path_ + ":2: expected a string, got a list");
}

TEST_F(RecipeLoader, IntegerOutsideItsTypeIsAnError) {
  EXPECT_EQ(LoadError("data:\n  seed: 3000000000\n"),
            "'data.seed' at " + path_ + ":2 must be <= 2147483647, got 3000000000");
}

TEST_F(RecipeLoader, OutOfBoundsValueNamesTheBound) {
  EXPECT_EQ(LoadError("rollout:\n  n: 0\n"), "'rollout.n' at " + path_ + ":2 must be >= 1, got 0");
  EXPECT_EQ(LoadError("actor:\n  optim:\n    lr: 0\n"),
            "'actor.optim.lr' at " + path_ + ":3 must be > 0, got 0");
  EXPECT_EQ(LoadError("rollout:\n  top_p: 1.5\n"),
            "'rollout.top_p' at " + path_ + ":2 must be <= 1, got 1.5");
}

TEST_F(RecipeLoader, ValueOutsideChoicesSuggestsClosestChoice) {
  EXPECT_EQ(LoadError("", {"algorithm.adv_estimator=grop"}),
            "'algorithm.adv_estimator' at command line 'algorithm.adv_estimator=grop' must be one "
            "of gae|grpo|rloo|reinforce_plus_plus|reinforce_plus_plus_baseline|remax|gpg|opo|grpo_passk|"
            "grpo_vectorized|rloo_vectorized|optimal_token_baseline|tir_optimal_token_baseline; "
            "got 'grop' "
            "— did you mean 'grpo'?");
  // An empty string is a choice only where the default is empty.
  EXPECT_EQ(LoadError("trainer:\n  device: ''\n"),
            "'trainer.device' at " + path_ + ":2 must be one of cuda|cpu; got ''");
}

TEST_F(RecipeLoader, YamlSyntaxErrorNamesLineAndColumn) {
  EXPECT_EQ(LoadError("trainer:\n  nnodes: 1\n    bad: 2\n"),
            path_ + ":3:8: YAML syntax error: illegal map value");
}

TEST_F(RecipeLoader, TopLevelMustBeAMap) {
  EXPECT_EQ(LoadError("- rollout\n- actor\n"),
            path_ + ":1: expected a map of recipe keys at the top level, got a list");
}

TEST_F(RecipeLoader, DuplicateKeyIsAnError) {
  EXPECT_EQ(LoadError("rollout:\n  n: 2\n  n: 3\n"),
            "duplicate key 'rollout.n' at " + path_ + ":3 (first at line 2)");
}

TEST_F(RecipeLoader, MissingRecipeFileIsNotFound) {
  const absl::StatusOr<LoadedRecipe> loaded = LoadRecipe("no/such/recipe.yaml", {});
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(loaded.status().message(), "recipe file 'no/such/recipe.yaml' not found");
}

TEST_F(RecipeLoader, OverridesParseNumbersBoolsListsAndMaps) {
  const LoadedRecipe loaded =
      LoadOk(files_.Write("r.yaml", "actor:\n  optim:\n    lr: 1e-6\n"),
             {"actor.optim.lr=2e-5", "data.shuffle=false", "trainer.logger=[console, wandb]",
              "rollout.val_kwargs={n: 4, top_p: 0.9}", "data.train_files=/data/train.parquet"});
  EXPECT_DOUBLE_EQ(loaded.recipe.actor().optim().lr(), 2e-5);
  EXPECT_FALSE(loaded.recipe.data().shuffle());
  EXPECT_THAT(loaded.recipe.trainer().logger(), ::testing::ElementsAre("console", "wandb"));
  EXPECT_EQ(loaded.recipe.rollout().val_kwargs().n(), 4);
  EXPECT_DOUBLE_EQ(loaded.recipe.rollout().val_kwargs().top_p(), 0.9);
  // A single scalar for a list is a list of one.
  EXPECT_THAT(loaded.recipe.data().train_files(), ::testing::ElementsAre("/data/train.parquet"));
}

TEST_F(RecipeLoader, NullOrEmptyOverrideResetsToDefault) {
  const std::string path = files_.Write("r.yaml",
                                        "rollout:\n  n: 8\n  top_k: 5\n"
                                        "trainer:\n  logger: [wandb]\n"
                                        "actor:\n  optim: {lr: 1e-5, eps: 1e-6}\n");
  const LoadedRecipe loaded =
      LoadOk(path, {"rollout.n=null", "rollout.top_k=", "trainer.logger=~", "actor.optim=null"});
  EXPECT_FALSE(loaded.recipe.rollout().has_n());
  EXPECT_EQ(loaded.recipe.rollout().n(), 1);
  EXPECT_EQ(loaded.recipe.rollout().top_k(), -1);
  EXPECT_THAT(loaded.recipe.trainer().logger(), ::testing::ElementsAre("console"));
  EXPECT_DOUBLE_EQ(loaded.recipe.actor().optim().lr(), 1e-6);
  EXPECT_EQ(SourceOf(loaded, "rollout.n"), "default");
  EXPECT_EQ(SourceOf(loaded, "actor.optim.eps"), "default");
}

TEST_F(RecipeLoader, MapEntriesMergePerKey) {
  const std::string path =
      files_.Write("r.yaml", "resource_pools:\n  gpu: {nodes: 1, device: cpu}\n  old: {}\n");
  const LoadedRecipe loaded =
      LoadOk(path, {"resource_pools.gpu.nodes=2", "resource_pools.extra={devices_per_node: 4}",
                    "resource_pools.old=null"});
  const auto& pools = loaded.recipe.resource_pools();
  ASSERT_EQ(pools.size(), 2u);
  EXPECT_EQ(pools.at("gpu").nodes(), 2);
  EXPECT_EQ(pools.at("gpu").device(), "cpu");
  EXPECT_EQ(pools.at("extra").devices_per_node(), 4);
  EXPECT_EQ(SourceOf(loaded, "resource_pools.gpu.nodes"),
            "command line 'resource_pools.gpu.nodes=2'");
  EXPECT_EQ(SourceOf(loaded, "resource_pools.gpu.device"), path + ":2");
}

TEST_F(RecipeLoader, UnknownKeyInOverrideNamesTheCommandLine) {
  EXPECT_EQ(LoadError("", {"actor.optim.learning_rate=1e-5"}),
            "unknown key 'actor.optim.learning_rate' at command line "
            "'actor.optim.learning_rate=1e-5' — did you mean 'actor.optim.lr'?");
}

TEST_F(RecipeLoader, HydraAddPrefixesSetTheKey) {
  const LoadedRecipe loaded = LoadOk(files_.Write("h.yaml", ""),
                                     {"+actor_rollout_ref.rollout.n=4", "++trainer.total_epochs=3"});
  EXPECT_EQ(loaded.recipe.rollout().n(), 4);
  EXPECT_EQ(loaded.recipe.trainer().total_epochs(), 3);
  EXPECT_THAT(LoadError("", {"+++rollout.n=4"}), ::testing::HasSubstr("unknown key '+rollout'"));
}

TEST_F(RecipeLoader, OverrideWithoutEqualsIsAnError) {
  EXPECT_EQ(LoadError("", {"actor.optim.lr"}),
            "command line 'actor.optim.lr': expected key=value, e.g. actor.optim.lr=1e-5");
  EXPECT_EQ(LoadError("", {"actor..lr=1"}),
            "command line 'actor..lr=1': 'actor..lr' is not a dotted key");
}

TEST_F(RecipeLoader, FileOverridesTheBaseItExtends) {
  files_.Write("recipes/defaults.yaml", "trainer:\n  project_name: shared\nrollout:\n  n: 2\n");
  const std::string base = files_.Write("recipes/base/grpo.yaml",
                                        "extends: ../defaults.yaml\n"
                                        "actor:\n  optim:\n    lr: 3e-6\n"
                                        "rollout:\n  n: 4\n");
  const std::string child = files_.Write("recipes/child.yaml",
                                         "extends: base/grpo.yaml\n"
                                         "rollout:\n  n: 16\n");
  const LoadedRecipe loaded = LoadOk(child);
  EXPECT_EQ(loaded.recipe.rollout().n(), 16);
  EXPECT_DOUBLE_EQ(loaded.recipe.actor().optim().lr(), 3e-6);
  EXPECT_EQ(loaded.recipe.trainer().project_name(), "shared");
  EXPECT_EQ(SourceOf(loaded, "rollout.n"), child + ":3");
  EXPECT_EQ(SourceOf(loaded, "actor.optim.lr"), base + ":4");
  EXPECT_EQ(SourceOf(loaded, "trainer.project_name"), files_.Path("recipes/defaults.yaml") + ":2");
}

TEST_F(RecipeLoader, ExtendsCycleNamesTheChain) {
  const std::string a = files_.Write("a.yaml", "extends: b.yaml\n");
  const std::string b = files_.Write("b.yaml", "rollout: {n: 2}\nextends: a.yaml\n");
  const absl::StatusOr<LoadedRecipe> loaded = LoadRecipe(a, {});
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(loaded.status().message(),
            "extends cycle at " + b + ":2: " + a + " -> " + b + " -> " + a);
}

TEST_F(RecipeLoader, MissingBaseIsNotFoundAndNamesTheExtendingFile) {
  const std::string path = files_.Write("r.yaml", "# a comment\nextends: nope.yaml\n");
  const absl::StatusOr<LoadedRecipe> loaded = LoadRecipe(path, {});
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(loaded.status().message(), "recipe file '" + files_.Path("nope.yaml") +
                                           "' not found (extended from " + path + ":2)");
}

TEST_F(RecipeLoader, ExtendsIsOnlyAllowedInRecipeFiles) {
  const absl::StatusOr<LoadedRecipe> parsed = ParseRecipeYaml("extends: base.yaml\n", "text");
  EXPECT_EQ(parsed.status().message(),
            "'extends' at text:1 is only allowed at the top of a recipe file");
}

TEST_F(RecipeLoader, VerlSpellingsMapToCanonicalKeys) {
  const std::string path = files_.Write("r.yaml",
                                        "actor_rollout_ref:\n"
                                        "  model:\n"
                                        "    path: /models/qwen\n"
                                        "  rollout:\n"
                                        "    n: 4\n"
                                        "  ref:\n"
                                        "    log_prob_micro_batch_size_per_gpu: 2\n");
  const LoadedRecipe loaded = LoadOk(
      path, {"actor_rollout_ref.actor.optim.lr=3e-6", "actor_rollout_ref.model.lora_rank=8"});
  EXPECT_EQ(loaded.recipe.actor().model().path(), "/models/qwen");
  EXPECT_EQ(loaded.recipe.actor().model().lora_rank(), 8);
  EXPECT_EQ(loaded.recipe.rollout().n(), 4);
  EXPECT_EQ(loaded.recipe.ref().log_prob_micro_batch_size_per_gpu(), 2);
  EXPECT_DOUBLE_EQ(loaded.recipe.actor().optim().lr(), 3e-6);
  EXPECT_EQ(SourceOf(loaded, "actor.model.path"), path + ":3");
  EXPECT_EQ(SourceOf(loaded, "actor_rollout_ref.rollout.n"), path + ":5");
  EXPECT_EQ(SourceOf(loaded, "actor.optim.lr"),
            "command line 'actor_rollout_ref.actor.optim.lr=3e-6'");
}

TEST_F(RecipeLoader, UnknownVerlChildListsTheKnownOnes) {
  EXPECT_EQ(LoadError("actor_rollout_ref:\n  nope: true\n"),
            "unknown key 'actor_rollout_ref.nope' at " + path_ +
                ":2; valid keys under 'actor_rollout_ref': actor, model, ref, rollout");
  EXPECT_EQ(LoadError("", {"actor_rollout_ref.actor.optim.lrr=1"}),
            "unknown key 'actor.optim.lrr' at command line 'actor_rollout_ref.actor.optim.lrr=1' "
            "— did you mean 'actor.optim.lr'?");
}

TEST_F(RecipeLoader, ReferencesResolveDefaultsAndSetValues) {
  EXPECT_EQ(LoadOk(files_.Write("a.yaml", "")).recipe.trainer().default_local_dir(),
            "checkpoints/rollout_infra/default");
  const LoadedRecipe loaded = LoadOk(
      files_.Write(
          "b.yaml",
          "trainer:\n"
          "  project_name: math\n"
          "  save_freq: 10\n"
          "  resume_from_path: ${trainer.default_local_dir}/global_step_${trainer.save_freq}\n"
          "  experiment_name: lr${actor_rollout_ref.actor.optim.lr}_${resource_pools.gpu.nodes}\n"
          "resource_pools:\n  gpu: {nodes: 2}\n"),
      {"actor.optim.lr=1e-5"});
  EXPECT_EQ(loaded.recipe.trainer().experiment_name(), "lr1e-05_2");
  EXPECT_EQ(loaded.recipe.trainer().default_local_dir(), "checkpoints/math/lr1e-05_2");
  EXPECT_EQ(loaded.recipe.trainer().resume_from_path(),
            "checkpoints/math/lr1e-05_2/global_step_10");
}

TEST_F(RecipeLoader, UnknownReferenceNamesKeyAndLocation) {
  EXPECT_EQ(LoadError("trainer:\n  experiment_name: run_${trainer.projct_name}\n"),
            "unknown key 'trainer.projct_name' in reference '${trainer.projct_name}' of "
            "'trainer.experiment_name' at " +
                path_ + ":2 — did you mean 'trainer.project_name'?");
  EXPECT_EQ(LoadError("trainer:\n  experiment_name: ${actor.optim}\n"),
            "reference '${actor.optim}' of 'trainer.experiment_name' at " + path_ +
                ":2 must name a single value; 'actor.optim' is not one");
}

// verl's printed configs copy settings by reference (`${...}`, `${oc.select:key,default}`,
// `${.sibling}`) into keys of any type; the references resolve after every layer, so
// an override of the referenced key reaches its copies.
TEST_F(RecipeLoader, WholeReferencesSetNumbersBooleansAndListsAfterEveryLayer) {
  const LoadedRecipe loaded = LoadOk(
      files_.Write("a.yaml",
                   "actor:\n"
                   "  ppo_epochs: 2\n"
                   "  use_dynamic_bsz: true\n"
                   "  ppo_max_token_len_per_gpu: 1000\n"
                   "ref:\n"
                   "  log_prob_use_dynamic_bsz: ${actor_rollout_ref.actor.use_dynamic_bsz}\n"
                   "  log_prob_max_token_len_per_gpu: ${oc.select:actor.ppo_max_token_len_per_gpu,16384}\n"
                   "critic:\n"
                   "  ppo_epochs: ${actor.ppo_epochs}\n"
                   "  ppo_mini_batch_size: ${oc.select:critic.not_a_key_here,4}\n"
                   "  grad_clip: ${oc.select:trainer.not_a_key_here}\n"
                   "  ppo_max_token_len_per_gpu: 500\n"
                   "  forward_max_token_len_per_gpu: ${.ppo_max_token_len_per_gpu}\n"
                   "  checkpoint:\n"
                   "    save_contents: [model, optimizer]\n"
                   "    load_contents: ${.save_contents}\n"),
      {"actor.ppo_max_token_len_per_gpu=2000", "critic.ppo_epochs=3"});
  const Recipe& recipe = loaded.recipe;
  EXPECT_TRUE(recipe.ref().log_prob_use_dynamic_bsz());
  EXPECT_EQ(recipe.ref().log_prob_max_token_len_per_gpu(), 2000);
  EXPECT_EQ(recipe.critic().ppo_epochs(), 3);  // the override replaced the reference
  EXPECT_EQ(recipe.critic().ppo_mini_batch_size(), 4);
  EXPECT_FALSE(recipe.critic().has_grad_clip());  // oc.select's null: the default
  EXPECT_EQ(recipe.critic().forward_max_token_len_per_gpu(), 500);
  EXPECT_THAT(recipe.critic().checkpoint().load_contents(), ElementsAre("model", "optimizer"));
  EXPECT_EQ(SourceOf(loaded, "critic.forward_max_token_len_per_gpu"), files_.Path("a.yaml") + ":13");
}

TEST_F(RecipeLoader, AReferencedValueIsCheckedAsIfWrittenOut) {
  EXPECT_EQ(LoadError("actor:\n  ppo_epochs: ${data.prompt_key}\n"),
            "wrong type for 'actor.ppo_epochs' at " + path_ + ":2: expected an integer, got 'prompt'");
  EXPECT_EQ(LoadError("rollout:\n  n: ${data.seed}\ndata:\n  seed: 0\n"),
            "'rollout.n' at " + path_ + ":2 must be >= 1, got 0");
  EXPECT_EQ(LoadError("actor:\n  ppo_epochs: ${actor.ppo_epoch}\n"),
            "unknown key 'actor.ppo_epoch' in reference '${actor.ppo_epoch}' of 'actor.ppo_epochs' at " +
                path_ + ":2 — did you mean 'actor.ppo_epochs'?");
  EXPECT_EQ(LoadError("actor:\n  ppo_epochs: ${critic.ppo_epochs}\ncritic:\n  ppo_epochs: ${actor.ppo_epochs}\n"),
            "reference cycle in 'actor.ppo_epochs' at " + path_ +
                ":2: actor.ppo_epochs -> critic.ppo_epochs -> actor.ppo_epochs");
}

TEST_F(RecipeLoader, ReferenceCycleIsAnError) {
  EXPECT_EQ(LoadError("trainer:\n  project_name: ${trainer.experiment_name}\n"
                      "  experiment_name: x${trainer.project_name}\n",
                      {}),
            "reference cycle in 'trainer.project_name' at " + path_ +
                ":2: trainer.project_name -> trainer.experiment_name -> trainer.project_name");
}

TEST_F(RecipeLoader, ResolvedReferenceIsCheckedAgainstChoices) {
  EXPECT_EQ(LoadError("trainer:\n  project_name: gpu\n  device: ${trainer.project_name}\n"),
            "'trainer.device' at " + path_ +
                ":3 must be one of cuda|cpu; got 'gpu' — did you mean 'cpu'?");
}

TEST_F(RecipeLoader, DefaultListAppliesUntilALayerSetsTheList) {
  const LoadedRecipe defaults = LoadOk(files_.Write("a.yaml", ""));
  EXPECT_THAT(defaults.recipe.trainer().logger(), ::testing::ElementsAre("console"));
  EXPECT_THAT(defaults.recipe.actor().model().target_modules(),
              ::testing::ElementsAre("all-linear"));
  EXPECT_THAT(defaults.recipe.critic().checkpoint().save_contents(),
              ::testing::ElementsAre("model", "optimizer", "extra"));
  const LoadedRecipe set = LoadOk(files_.Write("b.yaml", "trainer:\n  logger: [wandb]\n"));
  EXPECT_THAT(set.recipe.trainer().logger(), ::testing::ElementsAre("wandb"));
  EXPECT_EQ(LoadError("trainer:\n  logger: []\n"),
            "'trainer.logger' at " + path_ +
                ":2 must not be empty; leave it out or write null for the default [console]");
}

TEST_F(RecipeLoader, AdamBetasAreVerlsListOfTwo) {
  const LoadedRecipe defaults = LoadOk(files_.Write("a.yaml", ""));
  EXPECT_THAT(defaults.recipe.actor().optim().betas(), ::testing::ElementsAre(0.9, 0.999));
  EXPECT_THAT(defaults.recipe.critic().optim().betas(), ::testing::ElementsAre(0.9, 0.999));
  const LoadedRecipe set =
      LoadOk(files_.Write("b.yaml", ""), {"actor_rollout_ref.actor.optim.betas=[0.9,0.95]"});
  EXPECT_THAT(set.recipe.actor().optim().betas(), ::testing::ElementsAre(0.9, 0.95));
  EXPECT_EQ(LoadError("actor:\n  optim:\n    betas: [0.9]\n"),
            "'actor.optim.betas' at " + path_ + ":3 must be a list of 2 values, got 1");
  EXPECT_EQ(LoadError("actor:\n  optim:\n    betas: [0.9, 1.5]\n"),
            "'actor.optim.betas' at " + path_ + ":3 must be <= 1, got 1.5");
}

// verl's `+data.apply_chat_template_kwargs.enable_thinking=False` for Qwen3 recipes, and
// date_string for Llama 3.1+ templates.
TEST_F(RecipeLoader, ChatTemplateKwargsTakeEnableThinkingAndDateString) {
  EXPECT_TRUE(LoadOk(files_.Write("a.yaml", "data:\n  apply_chat_template_kwargs: {}\n"))
                  .recipe.data().apply_chat_template_kwargs().enable_thinking());
  EXPECT_FALSE(LoadOk(files_.Write("b.yaml", ""), {"+data.apply_chat_template_kwargs.enable_thinking=False"})
                   .recipe.data().apply_chat_template_kwargs().enable_thinking());
  EXPECT_FALSE(LoadOk(files_.Write("c.yaml", "data:\n  apply_chat_template_kwargs: {enable_thinking: false}\n"))
                   .recipe.data().apply_chat_template_kwargs().enable_thinking());
  EXPECT_EQ(LoadOk(files_.Write("d.yaml", ""), {"data.apply_chat_template_kwargs.date_string='26 Jul 2024'"})
                .recipe.data().apply_chat_template_kwargs().date_string(),
            "26 Jul 2024");
  EXPECT_THAT(LoadError("data:\n  apply_chat_template_kwargs: {tools: []}\n"),
              ::testing::HasSubstr("data.apply_chat_template_kwargs.tools"));
}

TEST_F(RecipeLoader, SourcesNameTheLayerThatSetEachKey) {
  const std::string path = files_.Write("r.yaml", "rollout:\n  n: 8\n  top_k: 5\n");
  const LoadedRecipe loaded = LoadOk(path, {"rollout.top_k=7"});
  EXPECT_EQ(SourceOf(loaded, "rollout.n"), path + ":2");
  EXPECT_EQ(SourceOf(loaded, "rollout.top_k"), "command line 'rollout.top_k=7'");
  EXPECT_EQ(SourceOf(loaded, "rollout.top_p"), "default");
  EXPECT_EQ(loaded.sources.count("rollout.top_p"), 0u);
}

TEST_F(RecipeLoader, EveryCheckedInRecipeLoads) {
  // Tests run from the repository root (tests/CMakeLists.txt sets the directory).
  const absl::StatusOr<std::vector<std::string>> names = ListDirectory("recipes");
  ASSERT_TRUE(names.ok()) << names.status();
  std::vector<std::string> recipes;
  for (const std::string& name : *names) {
    if (name.size() > 5 && name.compare(name.size() - 5, 5, ".yaml") == 0) {
      recipes.push_back(JoinPath("recipes", name));
    }
  }
  ASSERT_FALSE(recipes.empty()) << "no recipes/*.yaml";
  for (const std::string& recipe : recipes) {
    const absl::StatusOr<LoadedRecipe> loaded = LoadRecipe(recipe, {});
    EXPECT_TRUE(loaded.ok()) << recipe << ": " << loaded.status();
  }
}

}  // namespace
}  // namespace rollout::config
