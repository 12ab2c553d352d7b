#include "workers/reward_model_worker.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "workers/micro_batches.h"
#include "workers/role_options.h"

namespace rollout::workers {
namespace {

// [B] float32: the model's output at each row's last token, micro-batch by micro-batch.
absl::StatusOr<at::Tensor> LastTokenScores(const models::ValueModel& model, const RewardModelInputs& inputs,
                                           const MicroBatchSize& micro_batch) {
  c10::NoGradGuard no_grad;
  const int64_t rows = inputs.input_ids.size(0);
  const int64_t width = inputs.input_ids.size(1);
  ASSIGN_OR_RETURN(const std::vector<RowRange> ranges,
                   MicroBatchRanges(0, rows, micro_batch, RowTokensFor(micro_batch, inputs.attention_mask)));
  // verl's argmax(position_ids * attention_mask): the last attended position.
  const at::Tensor last =
      (inputs.attention_mask.to(at::kLong) * at::arange(width, inputs.input_ids.options().dtype(at::kLong)))
          .argmax(1);
  std::vector<at::Tensor> parts;
  for (const RowRange& range : ranges) {
    const at::Tensor values = model.Values(inputs.input_ids.narrow(0, range.start, range.rows),
                                           inputs.position_ids.narrow(0, range.start, range.rows),
                                           inputs.attention_mask.narrow(0, range.start, range.rows));
    parts.push_back(values.gather(1, last.narrow(0, range.start, range.rows).unsqueeze(1)).squeeze(1));
  }
  if (parts.empty()) return at::zeros({0}, at::kFloat);
  return at::cat(parts).to(at::kFloat);
}

// The sequence length re-rendered rows are cut to: reward_model.max_length, or the
// actor's (verl's null: the source batch's length).
int64_t RenderedMaxLength(const config::Recipe& recipe) {
  if (recipe.reward_model().max_length() > 0) return recipe.reward_model().max_length();
  return int64_t{recipe.data().max_prompt_length()} + recipe.data().max_response_length();
}

// The tokenizer the actor's tokens are decoded with for re-rendering
// (reward_model.model.input_tokenizer: unset, the actor's), or "" for none ("null").
absl::StatusOr<std::string> InputTokenizerPath(const config::Recipe& recipe) {
  const std::string& input = recipe.reward_model().model().input_tokenizer();
  if (input == "null") return std::string();
  if (!input.empty()) return input;
  const config::ModelConfig& actor = recipe.actor().model();
  const std::string& actor_tokenizer = actor.tokenizer_path().empty() ? actor.path() : actor.tokenizer_path();
  if (actor_tokenizer.empty()) {
    return absl::InvalidArgumentError(
        "reward_model.model.input_tokenizer is unset, which means the actor's tokenizer, and actor.model.path is not "
        "set either: name one, or set input_tokenizer to null to score the actor's tokens as they are");
  }
  return actor_tokenizer;
}

// Loads the tokenizer at `path` for `what` ("reward_model.model.input_tokenizer").
absl::StatusOr<std::unique_ptr<models::Tokenizer>> LoadTokenizer(const std::string& path, const std::string& what) {
  absl::StatusOr<std::unique_ptr<models::Tokenizer>> tokenizer = models::Tokenizer::Load(path);
  if (!tokenizer.ok()) {
    return absl::Status(tokenizer.status().code(),
                        absl::StrCat(what, " '", path, "': ", tokenizer.status().message()));
  }
  return tokenizer;
}

}  // namespace

absl::StatusOr<std::unique_ptr<RewardModelWorker>> RewardModelWorker::Create(const RewardModelWorkerSetup& setup) {
  const config::RewardModelModelConfig& model = setup.recipe.reward_model().model();
  if (model.path().empty()) {
    return absl::InvalidArgumentError("reward_model.model.path is not set: name the reward model's directory");
  }
  models::LoadOptions load;
  load.device = setup.device;
  load.dtype = DtypeOf(model.dtype());
  absl::StatusOr<std::unique_ptr<models::ValueModel>> loaded = models::ValueModel::Load(model.path(), load, 0);
  if (!loaded.ok()) {
    return absl::Status(loaded.status().code(),
                        absl::StrCat("reward model '", model.path(), "': ", loaded.status().message()));
  }
  if ((*loaded)->backbone().config().head != "value") {
    return absl::InvalidArgumentError(absl::StrCat(
        "reward_model.model.path '", model.path(),
        "' is a causal LM, not a reward model: it needs a score head (config architectures "
        "XForSequenceClassification with one label, or XForTokenClassification)"));
  }
  std::unique_ptr<RewardModelWorker> worker(new RewardModelWorker(setup, *std::move(loaded)));
  ASSIGN_OR_RETURN(const std::string input_tokenizer, InputTokenizerPath(setup.recipe));
  if (input_tokenizer.empty()) return worker;
  ASSIGN_OR_RETURN(worker->input_tokenizer_, LoadTokenizer(input_tokenizer, "reward_model.model.input_tokenizer"));
  ASSIGN_OR_RETURN(worker->tokenizer_, LoadTokenizer(model.path(), "reward_model.model.path"));
  // Chat prompts are re-rendered with the reward model's template: fail now, not after
  // the first generation, when it is one this project cannot render.
  const absl::StatusOr<std::string> probe =
      worker->tokenizer_->RenderChat({{"user", "?"}, {"assistant", "!"}}, /*add_generation_prompt=*/false);
  if (!probe.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "re-rendering prompts for the reward model '", model.path(),
        "' (reward_model.model.input_tokenizer is not null) needs its chat template, which cannot be rendered: ",
        probe.status().message(),
        "; set reward_model.model.input_tokenizer to null to score the actor's tokens as they are"));
  }
  return worker;
}

absl::StatusOr<RewardModelInputs> RewardModelWorker::InputsFrom(const Batch& input) const {
  RewardModelInputs inputs;
  if (tokenizer_ != nullptr) {
    ASSIGN_OR_RETURN(const std::vector<std::string> prompts, input.Strings("prompt"));
    ASSIGN_OR_RETURN(const std::vector<std::string> formats, input.Strings("prompt_format"));
    ASSIGN_OR_RETURN(const at::Tensor responses, input.Tensor("responses"));
    ASSIGN_OR_RETURN(const at::Tensor attention_mask, input.Tensor("attention_mask"));
    // verl counts a response's tokens on the attention mask's response part.
    const at::Tensor lengths = attention_mask.narrow(1, attention_mask.size(1) - responses.size(1), responses.size(1))
                                   .to(at::kLong)
                                   .sum(1);
    ChatTemplateSwitch templates;
    templates.source = input_tokenizer_.get();
    templates.target = tokenizer_.get();
    templates.max_length = RenderedMaxLength(setup_.recipe);
    ASSIGN_OR_RETURN(inputs, SwitchChatTemplate(templates, prompts, formats, responses, lengths));
  } else {
    ASSIGN_OR_RETURN(inputs.input_ids, input.Tensor("input_ids"));
    ASSIGN_OR_RETURN(inputs.attention_mask, input.Tensor("attention_mask"));
    ASSIGN_OR_RETURN(inputs.position_ids, input.Tensor("position_ids"));
  }
  const int64_t vocab = model_->backbone().config().vocab_size;
  if (inputs.input_ids.numel() > 0) {
    const int64_t largest = inputs.input_ids.max().item<int64_t>();
    if (largest >= vocab || inputs.input_ids.min().item<int64_t>() < 0) {
      const std::string why =
          tokenizer_ != nullptr
              ? absl::StrCat("its tokenizer ('", setup_.recipe.reward_model().model().path(),
                             "') does not fit its model")
              : "it does not share the actor's tokenizer; leave reward_model.model.input_tokenizer unset (the "
                "actor's tokenizer) to re-render each prompt and response for it";
      return absl::InvalidArgumentError(
          absl::StrCat("token id ", largest, " is outside the reward model's vocabulary of ", vocab, ": ", why));
    }
  }
  inputs.input_ids = inputs.input_ids.to(setup_.device);
  inputs.attention_mask = inputs.attention_mask.to(setup_.device);
  inputs.position_ids = inputs.position_ids.to(setup_.device);
  return inputs;
}

absl::StatusOr<Batch> RewardModelWorker::ComputeRmScore(const Batch& input) const {
  ASSIGN_OR_RETURN(const RewardModelInputs inputs, WithContext(InputsFrom(input), "reward_model.compute_rm_score"));
  ASSIGN_OR_RETURN(const at::Tensor scores,
                   WithContext(LastTokenScores(*model_, inputs,
                                               MicroBatchSizeOf(config::RewardModelBatching(setup_.recipe))),
                               "reward_model.compute_rm_score"));
  Batch output;
  RETURN_IF_ERROR(output.AddTensor("rm_scores", scores.cpu()));
  return output;
}

absl::Status RewardModelWorker::RegisterMethods(MethodRegistry* registry) {
  return registry->Register("reward_model.compute_rm_score",
                            [this](const Batch& in) { return ComputeRmScore(in); });
}

}  // namespace rollout::workers
