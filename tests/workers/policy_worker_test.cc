// The actor/rollout/ref roles of a worker on the tiny Qwen2 fixture (CPU, float32):
// the rollout's log-probs agree with the actor's, an update changes the actor but not
// the reference, and with LoRA only the adapters train; prompt and response must fit the
// model's positions.
#include "workers/policy_worker.h"

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "common/batch_metrics.h"
#include "common/file_util.h"
#include "models/lora.h"
#include "tests/support/temp_dir.h"

namespace rollout::workers {
namespace {

using ::testing::HasSubstr;

constexpr char kFixture[] = "tests/data/tiny-qwen2";
constexpr int64_t kPromptLength = 24;
constexpr int64_t kResponseLength = 6;

PolicyWorkerSetup TinySetup(int lora_rank = 0) {
  PolicyWorkerSetup setup;
  config::Recipe& recipe = setup.recipe;
  recipe.mutable_actor()->mutable_model()->set_path(kFixture);
  recipe.mutable_actor()->mutable_model()->set_dtype("float32");
  recipe.mutable_actor()->mutable_model()->set_lora_rank(lora_rank);
  recipe.mutable_actor()->set_ppo_mini_batch_size(2);
  recipe.mutable_actor()->set_ppo_micro_batch_size_per_gpu(2);
  recipe.mutable_actor()->set_use_kl_loss(true);
  recipe.mutable_actor()->mutable_optim()->set_lr(1e-2);
  recipe.mutable_data()->set_max_prompt_length(kPromptLength);
  recipe.mutable_data()->set_max_response_length(kResponseLength);
  recipe.mutable_rollout()->set_n(2);
  recipe.mutable_rollout()->set_cpu_kv_cache_gib(0.01);
  recipe.mutable_rollout()->set_seed(3);
  setup.roles = {"actor", "rollout", "ref"};
  setup.total_training_steps = 10;
  return setup;
}

// Two prompts, two samples each (rows repeated per sample, as the controller sends them).
Batch Prompts() {
  const std::string chat = "[{\"role\": \"user\", \"content\": \"hi\"}]";
  Batch prompts;
  EXPECT_TRUE(prompts.AddStrings("prompt", {"12+35=", "12+35=", chat, chat}).ok());
  EXPECT_TRUE(prompts.AddStrings("prompt_format", {"text", "text", "chat", "chat"}).ok());
  EXPECT_TRUE(prompts.AddStrings("uid", {"a", "a", "b", "b"}).ok());
  EXPECT_TRUE(prompts.AddStrings("seed", {"5", "5", "6", "6"}).ok());
  return prompts;
}

// The generated batch with the columns update_actor needs; the rows' advantages run
// from -1 to 1, plus `advantage_shift`.
Batch UpdateBatch(PolicyWorker& worker, const Batch& rollout, double advantage_shift = 0) {
  Batch batch = rollout;
  Batch old = worker.ComputeLogProb(rollout).value();
  Batch ref = worker.ComputeRefLogProb(rollout).value();
  EXPECT_TRUE(batch.AddTensor("old_log_probs", old.Tensor("old_log_probs").value()).ok());
  EXPECT_TRUE(batch.AddTensor("ref_log_prob", ref.Tensor("ref_log_prob").value()).ok());
  const int64_t rows = batch.size();
  const at::Tensor advantages = at::linspace(-1, 1, rows) + advantage_shift;
  EXPECT_TRUE(batch.AddTensor("advantages", advantages.unsqueeze(1).expand({rows, kResponseLength}).contiguous()).ok());
  return batch;
}

// verl's rollout asserts the same: a response could otherwise stop short of
// max_response_length at the model's context, with nothing said.
TEST(PolicyWorker, PromptAndResponseBeyondTheModelsPositionsAreAnError) {
  PolicyWorkerSetup setup = TinySetup();
  setup.recipe.mutable_data()->set_max_prompt_length(500);
  setup.recipe.mutable_data()->set_max_response_length(13);
  EXPECT_THAT(PolicyWorker::Create(setup).status().message(),
              HasSubstr("data.max_prompt_length (500) + data.max_response_length (13) = 513 exceeds "
                        "the 512 positions of the model in actor.model.path"));
  setup.recipe.mutable_data()->set_max_response_length(12);
  EXPECT_TRUE(PolicyWorker::Create(setup).ok());
}

TEST(PolicyWorker, RolloutLogProbsMatchTheActors) {
  auto worker = PolicyWorker::Create(TinySetup()).value();
  const Batch rollout = worker->GenerateSequences(Prompts()).value();
  ASSERT_EQ(rollout.size(), 4);  // 2 prompts x 2 samples
  // The two samples of a prompt share it and differ (their own random streams).
  const at::Tensor responses = rollout.Tensor("responses").value();
  EXPECT_TRUE(at::equal(rollout.Tensor("prompts").value()[0], rollout.Tensor("prompts").value()[1]));
  EXPECT_FALSE(at::equal(responses[0], responses[1]));
  EXPECT_EQ(rollout.Tensor("input_ids").value().size(1), kPromptLength + kResponseLength);
  EXPECT_EQ(rollout.Strings("response_text").value().size(), 4u);
  const at::Tensor mask = rollout.Tensor("response_mask").value().to(at::kFloat);
  ASSERT_GT(mask.sum().item<double>(), 0);
  const at::Tensor actor = worker->ComputeLogProb(rollout).value().Tensor("old_log_probs").value();
  const at::Tensor engine = rollout.Tensor("rollout_log_probs").value();
  EXPECT_LT(((actor - engine).abs() * mask).max().item<double>(), 1e-3);
}

TEST(PolicyWorker, UpdateChangesTheActorButNotTheReference) {
  auto worker = PolicyWorker::Create(TinySetup()).value();
  const Batch rollout = worker->GenerateSequences(Prompts()).value();
  const Batch batch = UpdateBatch(*worker, rollout);
  const Batch update = worker->UpdateActor(batch).value();
  const auto metrics = GetBatchMetrics(update).value();
  EXPECT_TRUE(metrics.count("actor/pg_loss"));
  EXPECT_NEAR(metrics.at("actor/kl_loss"), 0, 1e-6);  // first step: actor == reference
  const at::Tensor mask = rollout.Tensor("response_mask").value().to(at::kFloat);
  const at::Tensor before = batch.Tensor("old_log_probs").value();
  const at::Tensor after = worker->ComputeLogProb(rollout).value().Tensor("old_log_probs").value();
  EXPECT_GT(((after - before).abs() * mask).max().item<double>(), 1e-4);
  const at::Tensor ref = worker->ComputeRefLogProb(rollout).value().Tensor("ref_log_prob").value();
  EXPECT_TRUE(at::allclose(ref, batch.Tensor("ref_log_prob").value()));
}

// actor.loss_scale_factor is seq-mean-token-sum-norm's divisor (unset: the response
// width, 6 here): twice the width halves the first update's policy loss (-A summed over
// the tokens, advantages shifted off zero so that it is not).
TEST(PolicyWorker, TheLossScaleFactorDividesTheSumNormLoss) {
  PolicyWorkerSetup setup = TinySetup();
  setup.recipe.mutable_actor()->set_loss_agg_mode("seq-mean-token-sum-norm");
  auto by_width = PolicyWorker::Create(setup).value();
  setup.recipe.mutable_actor()->set_loss_scale_factor(2 * kResponseLength);
  auto by_factor = PolicyWorker::Create(setup).value();
  const Batch batch = UpdateBatch(*by_width, by_width->GenerateSequences(Prompts()).value(), /*advantage_shift=*/1);
  const double width_loss = GetBatchMetrics(by_width->UpdateActor(batch).value()).value().at("actor/pg_loss");
  const double factor_loss = GetBatchMetrics(by_factor->UpdateActor(batch).value()).value().at("actor/pg_loss");
  EXPECT_GT(std::abs(width_loss), 1e-4);
  EXPECT_NEAR(factor_loss, width_loss / 2, 1e-6 * std::abs(width_loss));
}

TEST(PolicyWorker, LoraTrainsOnlyTheAdaptersAndItsReferenceIsTheBaseModel) {
  auto worker = PolicyWorker::Create(TinySetup(/*lora_rank=*/4)).value();
  std::vector<at::Tensor> base;
  for (const auto& [name, tensor] : worker->model().NamedParameters()) base.push_back(tensor->clone());
  const Batch rollout = worker->GenerateSequences(Prompts()).value();
  const Batch batch = UpdateBatch(*worker, rollout);
  ASSERT_TRUE(worker->UpdateActor(batch).ok());
  const auto after = worker->model().NamedParameters();
  for (size_t i = 0; i < base.size(); ++i) {
    EXPECT_TRUE(at::equal(base[i], *after[i].second)) << after[i].first;
  }
  // The adapters moved the policy; the reference (adapters off) did not move.
  const at::Tensor ref = worker->ComputeRefLogProb(rollout).value().Tensor("ref_log_prob").value();
  EXPECT_TRUE(at::allclose(ref, batch.Tensor("ref_log_prob").value()));
  const at::Tensor now = worker->ComputeLogProb(rollout).value().Tensor("old_log_probs").value();
  const at::Tensor mask = rollout.Tensor("response_mask").value().to(at::kFloat);
  EXPECT_GT(((now - ref).abs() * mask).max().item<double>(), 1e-5);
}

// The text of row `row`'s prompt (its left padding dropped by the attention mask).
std::string PromptText(const Batch& rollout, int64_t row) {
  const at::Tensor prompt = rollout.Tensor("prompts").value()[row];
  const at::Tensor kept = rollout.Tensor("attention_mask").value()[row].narrow(0, 0, prompt.size(0)) != 0;
  const at::Tensor ids = prompt.masked_select(kept).to(at::kInt).contiguous();
  return models::Tokenizer::Load(kFixture).value()->Decode({ids.data_ptr<int32_t>(), static_cast<size_t>(ids.numel())});
}

// actor.model.custom_chat_template formats the chat prompts instead of the model's
// template (ChatML here): a Jinja template or a format's name. One that is not recognised
// stops the worker at creation.
TEST(PolicyWorker, ACustomChatTemplateFormatsTheChatPrompts) {
  PolicyWorkerSetup setup = TinySetup();
  setup.recipe.mutable_data()->set_max_prompt_length(160);
  EXPECT_EQ(PromptText(PolicyWorker::Create(setup).value()->GenerateSequences(Prompts()).value(), 2),
            "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n");
  setup.recipe.mutable_actor()->mutable_model()->set_custom_chat_template(
      ReadFile("tests/data/deepseek_r1_distill_chat_template.jinja").value());
  const Batch deepseek = PolicyWorker::Create(setup).value()->GenerateSequences(Prompts()).value();
  EXPECT_EQ(PromptText(deepseek, 2), "<｜begin▁of▁sentence｜><｜User｜>hi<｜Assistant｜><think>\n");
  EXPECT_EQ(PromptText(deepseek, 0), "12+35=");  // text prompts are not chats
  setup.recipe.mutable_actor()->mutable_model()->set_custom_chat_template("llama3");
  EXPECT_EQ(PromptText(PolicyWorker::Create(setup).value()->GenerateSequences(Prompts()).value(), 3),
            "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
  setup.recipe.mutable_actor()->mutable_model()->set_custom_chat_template("{{ messages | tojson }}");
  EXPECT_THAT(PolicyWorker::Create(setup).status().message(), HasSubstr("custom chat template: unknown chat template"));
}

TEST(PolicyWorker, GradientCheckpointingIsTheActorModelsSetting) {
  EXPECT_FALSE(PolicyWorker::Create(TinySetup()).value()->model().activation_checkpointing());
  PolicyWorkerSetup setup = TinySetup();
  setup.recipe.mutable_actor()->mutable_model()->set_enable_gradient_checkpointing(true);
  EXPECT_TRUE(PolicyWorker::Create(setup).value()->model().activation_checkpointing());
}

TEST(PolicyWorker, MethodsFollowTheHostedRoles) {
  PolicyWorkerSetup setup = TinySetup();
  setup.roles = {"actor"};
  auto worker = PolicyWorker::Create(setup).value();
  MethodRegistry registry;
  ASSERT_TRUE(worker->RegisterMethods(&registry).ok());
  EXPECT_THAT(registry.Names(), ::testing::ElementsAre("actor.compute_log_prob", "actor.get_weights",
                                                       "actor.load_checkpoint", "actor.save_checkpoint",
                                                       "actor.update_actor", "actor.wait_checkpoint"));
  setup.roles = {"rollout", "ref"};
  auto rollout = PolicyWorker::Create(setup).value();
  MethodRegistry rollout_registry;
  ASSERT_TRUE(rollout->RegisterMethods(&rollout_registry).ok());
  EXPECT_THAT(rollout_registry.Names(), ::testing::ElementsAre("ref.compute_ref_log_prob", "rollout.generate_sequences",
                                                               "rollout.update_weights"));
}

TEST(PolicyWorker, ARolloutOfItsOwnGeneratesWithTheWeightsItIsSent) {
  auto actor = PolicyWorker::Create(TinySetup()).value();
  PolicyWorkerSetup setup = TinySetup();
  setup.roles = {"rollout", "ref"};
  auto rollout = PolicyWorker::Create(setup).value();
  ASSERT_TRUE(actor->UpdateActor(UpdateBatch(*actor, actor->GenerateSequences(Prompts()).value())).ok());
  const at::Tensor trained = actor->GenerateSequences(Prompts()).value().Tensor("responses").value();
  const at::Tensor stale = rollout->GenerateSequences(Prompts()).value().Tensor("responses").value();
  ASSERT_FALSE(at::equal(trained, stale)) << "the update should change the samples";
  ASSERT_TRUE(rollout->UpdateWeights(actor->GetWeights().value()).ok());
  EXPECT_TRUE(at::equal(rollout->GenerateSequences(Prompts()).value().Tensor("responses").value(), trained));
}

TEST(PolicyWorker, WeightsThatDoNotFitTheRolloutAreClearErrors) {
  auto actor = PolicyWorker::Create(TinySetup()).value();
  PolicyWorkerSetup setup = TinySetup();
  setup.roles = {"rollout"};
  auto rollout = PolicyWorker::Create(setup).value();
  const Batch weights = actor->GetWeights().value();
  const std::string first = weights.tensors().begin()->first;

  Batch missing;
  for (const auto& [name, tensor] : weights.tensors()) {
    if (name != first) {
      ASSERT_TRUE(missing.AddTensor(name, tensor).ok());
    }
  }
  EXPECT_THAT(rollout->UpdateWeights(missing).status().message(), HasSubstr("no tensor '" + first + "'"));
  Batch extra = weights;
  ASSERT_TRUE(extra.AddTensor("value_head.weight", at::zeros({1, 3})).ok());
  EXPECT_THAT(rollout->UpdateWeights(extra).status().message(),
              HasSubstr("'value_head.weight' is not a tensor the actor trains"));
  Batch misshapen = weights;
  ASSERT_TRUE(misshapen.AddTensor(first, at::zeros({1, 3})).ok());
  EXPECT_THAT(rollout->UpdateWeights(misshapen).status().message(), HasSubstr("'" + first + "' has 3 elements"));
}

TEST(PolicyWorker, BadInputsAreClearErrors) {
  PolicyWorkerSetup setup = TinySetup();
  setup.recipe.mutable_actor()->mutable_model()->set_path("/nonexistent/model");
  EXPECT_FALSE(PolicyWorker::Create(setup).ok());
  setup = TinySetup();
  setup.world = 3;
  EXPECT_THAT(PolicyWorker::Create(setup).status().message(),
              HasSubstr("4 rows do not split over 3 actor workers"));
  auto worker = PolicyWorker::Create(TinySetup()).value();
  Batch bad;
  ASSERT_TRUE(bad.AddStrings("prompt", {std::string(200, 'x')}).ok());
  ASSERT_TRUE(bad.AddStrings("prompt_format", {"text"}).ok());
  ASSERT_TRUE(bad.AddStrings("uid", {"u"}).ok());
  ASSERT_TRUE(bad.AddStrings("seed", {"1"}).ok());
  EXPECT_THAT(worker->GenerateSequences(bad).status().message(), HasSubstr("more than data.max_prompt_length (24)"));
}


// A setup that checkpoints every part (hf_model too on save), with an LR warmup so that
// the schedule's position shows in the learning rate.
PolicyWorkerSetup CheckpointingSetup(int lora_rank = 0) {
  PolicyWorkerSetup setup = TinySetup(lora_rank);
  config::ActorConfig& actor = *setup.recipe.mutable_actor();
  actor.mutable_optim()->set_lr_warmup_steps(4);
  for (const char* part : {"model", "optimizer", "extra", "hf_model"}) {
    actor.mutable_checkpoint()->add_save_contents(part);
  }
  for (const char* part : {"model", "optimizer", "extra"}) actor.mutable_checkpoint()->add_load_contents(part);
  return setup;
}

Batch InDirectory(const std::string& dir) {
  Batch batch;
  batch.SetMeta("dir", dir);
  return batch;
}

bool Exists(const std::string& path) { return ReadFile(path).ok(); }

// The names of the tensors that differ between `a` and `b` (bit for bit).
std::vector<std::string> Differences(const NamedTensors& a, const NamedTensors& b) {
  std::vector<std::string> names;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!at::equal(*a[i].second, *b[i].second)) names.push_back(a[i].first);
  }
  return names;
}

// Trains `trained` two steps (the first at warmup lr 0), saves it, loads the checkpoint
// into `restored`, then trains both one more step on the same batch: the tensors
// `trainable` names must be equal bit for bit after the load and after that step
// (weights, optimizer moments and the schedule's position all restored).
void ExpectExactRoundTrip(PolicyWorker& trained, PolicyWorker& restored, const std::string& dir,
                          const std::function<NamedTensors(PolicyWorker&)>& trainable) {
  const Batch batch = UpdateBatch(trained, trained.GenerateSequences(Prompts()).value());
  for (int step = 0; step < 2; ++step) ASSERT_TRUE(trained.UpdateActor(batch).ok());
  ASSERT_TRUE(trained.SaveCheckpoint(InDirectory(dir)).ok());
  ASSERT_THAT(Differences(trainable(trained), trainable(restored)), ::testing::Not(::testing::IsEmpty()));
  ASSERT_TRUE(restored.LoadCheckpoint(InDirectory(dir)).ok());
  EXPECT_THAT(Differences(trainable(trained), trainable(restored)), ::testing::IsEmpty()) << "after loading";
  const auto lr = [&](PolicyWorker& worker) {
    return GetBatchMetrics(worker.UpdateActor(batch).value()).value().at("actor/lr");
  };
  EXPECT_EQ(lr(trained), lr(restored));
  EXPECT_THAT(Differences(trainable(trained), trainable(restored)), ::testing::IsEmpty())
      << "after one more update";
}

TEST(PolicyWorker, ACheckpointRestoresWeightsOptimizerAndScheduleExactly) {
  testing::TempDir dir("policy_ckpt");
  auto trained = PolicyWorker::Create(CheckpointingSetup()).value();
  auto restored = PolicyWorker::Create(CheckpointingSetup()).value();
  ExpectExactRoundTrip(*trained, *restored, dir.Path("actor"),
                       [](PolicyWorker& worker) { return worker.model().NamedParameters(); });
  for (const char* file : {kModelFile, kOptimizerFile, kExtraStateFile, "huggingface/config.json",
                           "huggingface/model.safetensors", "huggingface/tokenizer.json"}) {
    EXPECT_TRUE(Exists(dir.Path(std::string("actor/") + file))) << file;
  }
}

// TR-DPO's refresh (ref.sync_ref_model): every second update the reference becomes the
// actor and itself half and half, the checkpoint holds it, and a resumed worker scores
// with it.
TEST(PolicyWorker, ARefreshedReferenceMixesInTheActorAndResumesFromTheCheckpoint) {
  testing::TempDir dir("policy_sync_ref");
  PolicyWorkerSetup setup = CheckpointingSetup();
  setup.recipe.mutable_ref()->set_sync_ref_model(true);
  setup.recipe.mutable_ref()->set_ref_model_sync_steps(2);
  setup.recipe.mutable_ref()->set_ref_model_mixup_alpha(0.5);
  auto trained = PolicyWorker::Create(setup).value();
  auto restored = PolicyWorker::Create(setup).value();
  const Batch rollout = trained->GenerateSequences(Prompts()).value();
  const Batch batch = UpdateBatch(*trained, rollout);
  const auto ref_log_probs = [&](PolicyWorker& worker) {
    return worker.ComputeRefLogProb(rollout).value().Tensor("ref_log_prob").value();
  };
  ASSERT_TRUE(trained->UpdateActor(batch).ok());
  EXPECT_TRUE(at::equal(ref_log_probs(*trained), batch.Tensor("ref_log_prob").value()));  // not yet due
  ASSERT_TRUE(trained->UpdateActor(batch).ok());
  EXPECT_FALSE(at::allclose(ref_log_probs(*trained), batch.Tensor("ref_log_prob").value()));
  ASSERT_TRUE(trained->SaveCheckpoint(InDirectory(dir.Path("actor"))).ok());

  auto initial = models::CausalLM::Load(kFixture, models::LoadOptions()).value();
  auto actor = models::CausalLM::Load(kFixture, models::LoadOptions()).value();
  auto reference = models::CausalLM::Load(kFixture, models::LoadOptions()).value();
  ASSERT_TRUE(LoadNamedTensors(dir.Path("actor/model.safetensors"), actor->NamedParameters()).ok());
  ASSERT_TRUE(LoadNamedTensors(dir.Path("actor/ref_model.safetensors"), reference->NamedParameters()).ok());
  const auto initial_weights = initial->NamedParameters();
  const auto actor_weights = actor->NamedParameters();
  const auto reference_weights = reference->NamedParameters();
  for (size_t i = 0; i < reference_weights.size(); ++i) {
    const at::Tensor mixed = 0.5 * *actor_weights[i].second + 0.5 * *initial_weights[i].second;
    EXPECT_TRUE(at::allclose(*reference_weights[i].second, mixed, 1e-5, 1e-7)) << reference_weights[i].first;
  }

  EXPECT_FALSE(at::equal(ref_log_probs(*restored), ref_log_probs(*trained)));
  ASSERT_TRUE(restored->LoadCheckpoint(InDirectory(dir.Path("actor"))).ok());
  EXPECT_TRUE(at::equal(ref_log_probs(*restored), ref_log_probs(*trained)));
}

// In DPO the refresh follows the DPO steps: with alpha 1 the reference becomes the policy
// after the step, so the implicit rewards (beta x the log-ratios) vanish, as they do
// before any step.
TEST(PolicyWorker, DposReferenceRefreshFollowsItsSteps) {
  PolicyWorkerSetup setup = TinySetup();
  setup.recipe.mutable_trainer()->set_mode("dpo");
  setup.recipe.mutable_data()->set_train_batch_size(2);
  setup.recipe.mutable_ref()->set_sync_ref_model(true);
  setup.recipe.mutable_ref()->set_ref_model_sync_steps(1);
  setup.recipe.mutable_ref()->set_ref_model_mixup_alpha(1.0);
  setup.roles = {"actor"};
  auto worker = PolicyWorker::Create(setup).value();
  Batch pairs;
  ASSERT_TRUE(pairs.AddStrings("prompt", {"1+1=", "2+2="}).ok());
  ASSERT_TRUE(pairs.AddStrings("prompt_format", {"text", "text"}).ok());
  ASSERT_TRUE(pairs.AddStrings("response_format", {"text", "text"}).ok());
  ASSERT_TRUE(pairs.AddStrings("chosen", {"2", "4"}).ok());
  ASSERT_TRUE(pairs.AddStrings("rejected", {"3", "5"}).ok());
  const auto margin = [&] { return GetBatchMetrics(worker->DpoEval(pairs).value()).value().at("val/rewards/margins"); };
  EXPECT_EQ(margin(), 0);
  ASSERT_TRUE(worker->DpoUpdate(pairs).ok());
  EXPECT_EQ(margin(), 0);
  setup.recipe.mutable_ref()->set_sync_ref_model(false);
  auto unsynced = PolicyWorker::Create(setup).value();
  ASSERT_TRUE(unsynced->DpoUpdate(pairs).ok());
  EXPECT_NE(GetBatchMetrics(unsynced->DpoEval(pairs).value()).value().at("val/rewards/margins"), 0);
}

TEST(PolicyWorker, AReferenceRefreshNeedsAReferenceCopyBesideTheActor) {
  PolicyWorkerSetup setup = TinySetup(/*lora_rank=*/4);
  setup.recipe.mutable_ref()->set_sync_ref_model(true);
  EXPECT_THAT(PolicyWorker::Create(setup).status().message(), HasSubstr("ref.sync_ref_model with LoRA"));
  setup = TinySetup();
  setup.recipe.mutable_ref()->set_sync_ref_model(true);
  setup.recipe.mutable_actor()->set_use_kl_loss(false);
  EXPECT_THAT(PolicyWorker::Create(setup).status().message(),
              HasSubstr("ref.sync_ref_model needs a reference model to refresh"));
  setup = TinySetup();
  setup.recipe.mutable_ref()->set_sync_ref_model(true);
  setup.roles = {"ref"};
  EXPECT_THAT(PolicyWorker::Create(setup).status().message(), HasSubstr("place the ref role on the actor's pool"));
}

TEST(PolicyWorker, ALoraCheckpointHoldsThePeftAdapterAndNotTheBaseWeights) {
  testing::TempDir dir("policy_lora_ckpt");
  auto trained = PolicyWorker::Create(CheckpointingSetup(/*lora_rank=*/4)).value();
  auto restored = PolicyWorker::Create(CheckpointingSetup(/*lora_rank=*/4)).value();
  ExpectExactRoundTrip(*trained, *restored, dir.Path("actor"),
                       [](PolicyWorker& worker) { return models::NamedLoraParameters(worker.model()); });
  EXPECT_TRUE(Exists(dir.Path("actor/lora_adapter/adapter_model.safetensors")));
  EXPECT_TRUE(Exists(dir.Path("actor/lora_adapter/adapter_config.json")));
  EXPECT_FALSE(Exists(dir.Path(std::string("actor/") + kModelFile)));
}

// verl's lora_adapter_path: LoRA training starts from a saved PEFT adapter, with the
// adapter's own rank (4) over the recipe's (8, or 0: the path alone trains LoRA, as in
// verl), and the reference is the base model under it.
TEST(PolicyWorker, LoraStartsFromTheAdapterAtLoraAdapterPath) {
  testing::TempDir dir("policy_lora_adapter_path");
  auto trained = PolicyWorker::Create(CheckpointingSetup(/*lora_rank=*/4)).value();
  const Batch batch = UpdateBatch(*trained, trained->GenerateSequences(Prompts()).value());
  for (int update = 0; update < 2; ++update) ASSERT_TRUE(trained->UpdateActor(batch).ok());  // the first at lr 0
  ASSERT_TRUE(trained->SaveCheckpoint(InDirectory(dir.Path("actor"))).ok());
  const NamedTensors adapters = models::NamedLoraParameters(trained->model());
  auto fresh = PolicyWorker::Create(TinySetup(/*lora_rank=*/4)).value();
  ASSERT_THAT(Differences(adapters, models::NamedLoraParameters(fresh->model())), ::testing::Not(::testing::IsEmpty()));

  PolicyWorkerSetup setup = TinySetup(/*lora_rank=*/8);
  setup.recipe.mutable_actor()->mutable_model()->set_lora_adapter_path(dir.Path("actor/lora_adapter"));
  auto started = PolicyWorker::Create(setup).value();
  const NamedTensors loaded = models::NamedLoraParameters(started->model());
  ASSERT_EQ(loaded.size(), adapters.size());
  EXPECT_THAT(Differences(adapters, loaded), ::testing::IsEmpty());
  EXPECT_EQ(loaded.front().second->size(0), 4);  // lora_A [r, in]

  setup.recipe.mutable_actor()->mutable_model()->set_lora_rank(0);
  auto without_rank = PolicyWorker::Create(setup).value();
  EXPECT_THAT(Differences(adapters, models::NamedLoraParameters(without_rank->model())), ::testing::IsEmpty());
  // The reference (use_kl_loss) is the base model: the fixture's own log-probs.
  const Batch rollout = without_rank->GenerateSequences(Prompts()).value();
  const at::Tensor ref = without_rank->ComputeRefLogProb(rollout).value().Tensor("ref_log_prob").value();
  auto base = PolicyWorker::Create(TinySetup()).value();
  EXPECT_TRUE(at::allclose(ref, base->ComputeRefLogProb(rollout).value().Tensor("ref_log_prob").value(), 1e-5, 1e-6));
}

// clip_cov detaches a random choice of tokens (here half of them: with the ratio's clip
// wide open every token is a candidate); seeded by trainer.seed and the update count, a
// resumed run chooses the same ones and stays bit-identical.
TEST(PolicyWorker, ClipCovChoosesTheSameTokensAfterAResume) {
  testing::TempDir dir("policy_clip_cov_ckpt");
  PolicyWorkerSetup setup = CheckpointingSetup();
  setup.recipe.mutable_actor()->set_clip_ratio_low(0.999);
  setup.recipe.mutable_actor()->set_clip_ratio_high(1000);
  config::PolicyLossConfig& loss = *setup.recipe.mutable_actor()->mutable_policy_loss();
  loss.set_loss_mode("clip_cov");
  loss.set_clip_cov_ratio(0.5);
  loss.set_clip_cov_lb(-100);
  loss.set_clip_cov_ub(100);
  auto worker = PolicyWorker::Create(setup).value();
  const Batch batch = UpdateBatch(*worker, worker->GenerateSequences(Prompts()).value());
  EXPECT_GT(GetBatchMetrics(worker->UpdateActor(batch).value()).value().at("actor/pg_clipfrac"), 0.3);
  auto trained = PolicyWorker::Create(setup).value();
  auto restored = PolicyWorker::Create(setup).value();
  ExpectExactRoundTrip(*trained, *restored, dir.Path("actor"),
                       [](PolicyWorker& worker) { return worker.model().NamedParameters(); });
}

// actor.shuffle with two mini-batches of two rows and two epochs: the rows' order, and so
// the update, differs from the batch's order, and a resumed worker draws the same orders.
TEST(PolicyWorker, ShuffledMiniBatchesChangeTheUpdateAndRepeatAfterAResume) {
  testing::TempDir dir("policy_shuffle_ckpt");
  PolicyWorkerSetup setup = CheckpointingSetup();
  setup.recipe.mutable_actor()->set_ppo_mini_batch_size(1);
  setup.recipe.mutable_actor()->set_ppo_epochs(2);
  auto in_order = PolicyWorker::Create(setup).value();
  setup.recipe.mutable_actor()->set_shuffle(true);
  setup.recipe.mutable_actor()->set_data_loader_seed(5);
  auto shuffled = PolicyWorker::Create(setup).value();
  const Batch batch = UpdateBatch(*in_order, in_order->GenerateSequences(Prompts()).value());
  for (int update = 0; update < 2; ++update) {  // the warmup's first LR is 0
    ASSERT_TRUE(in_order->UpdateActor(batch).ok());
    ASSERT_TRUE(shuffled->UpdateActor(batch).ok());
  }
  EXPECT_THAT(Differences(in_order->model().NamedParameters(), shuffled->model().NamedParameters()),
              ::testing::Not(::testing::IsEmpty()));
  auto trained = PolicyWorker::Create(setup).value();
  auto restored = PolicyWorker::Create(setup).value();
  ExpectExactRoundTrip(*trained, *restored, dir.Path("actor"),
                       [](PolicyWorker& worker) { return worker.model().NamedParameters(); });
}

TEST(PolicyWorker, OnlyRankZeroWritesACheckpoint) {
  testing::TempDir dir("policy_rank_ckpt");
  PolicyWorkerSetup setup = CheckpointingSetup();
  setup.rank = 1;
  setup.world = 2;
  auto worker = PolicyWorker::Create(setup).value();
  ASSERT_TRUE(worker->SaveCheckpoint(InDirectory(dir.Path("actor"))).ok());
  EXPECT_FALSE(Exists(dir.Path(std::string("actor/") + kModelFile)));
  EXPECT_EQ(worker->LoadCheckpoint(InDirectory(dir.Path("actor"))).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace rollout::workers
