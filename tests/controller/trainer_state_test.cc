// trainer_state.json (controller/trainer_state.h) and when a trainer saves
// (TrainerCheckpoints::SaveDue, verl's rule).
#include "controller/trainer_state.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "controller/trainer_checkpoints.h"

namespace rollout::controller {
namespace {

using ::testing::HasSubstr;

TEST(TrainerState, RoundTripsThroughJson) {
  config::Recipe recipe;
  recipe.mutable_trainer()->set_seed(5);
  recipe.mutable_data()->set_seed(6);
  recipe.mutable_rollout()->set_seed(7);
  const TrainerState state = TrainerStateOf(recipe, 40, {2, 3}, 0.0125);
  const TrainerState read = TrainerState::FromJson(state.ToJson(), "trainer_state.json").value();
  EXPECT_EQ(read.global_step, 40);
  EXPECT_EQ(read.data_position.epoch, 2);
  EXPECT_EQ(read.data_position.batch_in_epoch, 3);
  EXPECT_EQ(read.kl_coef, 0.0125);
  EXPECT_EQ(read.recipe_fingerprint, RecipeFingerprint(recipe));
  EXPECT_EQ(read.trainer_seed, 5);
  EXPECT_EQ(read.data_seed, 6);
  EXPECT_EQ(read.rollout_seed, 7);
  const TrainerState without_kl = TrainerStateOf(recipe, 1, {0, 1}, std::nullopt);
  EXPECT_THAT(without_kl.ToJson(), ::testing::Not(HasSubstr("kl_coef")));
  EXPECT_FALSE(TrainerState::FromJson(without_kl.ToJson(), "t").value().kl_coef.has_value());
}

TEST(TrainerState, MalformedFilesAreDataLossNamingThem) {
  const TrainerState valid = TrainerStateOf(config::Recipe(), 4, {0, 4}, std::nullopt);
  std::string negative = valid.ToJson();
  negative.replace(negative.find("\"global_step\": 4"), 16, "\"global_step\": -4");
  for (const std::string& text : {std::string("{\"global_step\": 4"), std::string("[]"), negative,
                                  std::string("{\"global_step\": 4, \"data_position\": {\"epoch\": -1}}")}) {
    const absl::Status status = TrainerState::FromJson(text, "ckpt/global_step_4/trainer_state.json").status();
    EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << text;
    EXPECT_THAT(status.message(), HasSubstr("ckpt/global_step_4/trainer_state.json")) << text;
  }
}

TEST(TrainerState, TheFingerprintFollowsWhatIsTrainedNotHowTheRunIsDriven) {
  config::Recipe recipe;
  const std::string base = RecipeFingerprint(recipe);
  EXPECT_EQ(base.size(), 8u);
  config::Recipe driven = recipe;
  driven.mutable_trainer()->set_total_training_steps(99);
  driven.mutable_trainer()->set_del_local_ckpt_after_load(true);
  driven.mutable_actor()->mutable_checkpoint()->add_load_contents("model");
  driven.mutable_runtime()->set_register_timeout_s(5);
  EXPECT_EQ(RecipeFingerprint(driven), base);
  config::Recipe trained = recipe;
  trained.mutable_actor()->mutable_optim()->set_lr(3e-4);
  EXPECT_NE(RecipeFingerprint(trained), base);
  config::Recipe data = recipe;
  data.mutable_data()->set_seed(9);
  EXPECT_NE(RecipeFingerprint(data), base);
}

TEST(TrainerCheckpoints, SaveEverySaveFreqStepsAndAfterTheLast) {
  struct Case {
    int save_freq;
    std::vector<int64_t> saved;  // of steps 1..7
  };
  for (const Case& c : {Case{-1, {}}, Case{0, {}}, Case{3, {3, 6, 7}}, Case{1, {1, 2, 3, 4, 5, 6, 7}},
                        Case{10, {7}}}) {
    config::Recipe recipe;
    recipe.mutable_trainer()->set_save_freq(c.save_freq);
    const auto checkpoints = TrainerCheckpoints::Create(recipe, {}).value();
    std::vector<int64_t> saved;
    for (int64_t step = 1; step <= 7; ++step) {
      if (checkpoints->SaveDue(step, 7)) saved.push_back(step);
    }
    EXPECT_EQ(saved, c.saved) << "save_freq " << c.save_freq;
  }
}

TEST(TrainerCheckpoints, ABadResumeModeIsInvalidArgument) {
  config::Recipe recipe;
  recipe.mutable_trainer()->set_resume_mode("sometimes");
  EXPECT_EQ(TrainerCheckpoints::Create(recipe, {}).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace rollout::controller
