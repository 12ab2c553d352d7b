// `rollout score`: per-token log-probs of sequences under a model, as JSON lines.
// Input rows (JSON lines or Parquet, common/data_file_rows.h): {"ids": [...]} or
// {"text": "..."} (encoded with the model directory's tokenizer, no special tokens
// added). Output lines: {"ids": [...], "log_probs": [...]} with log_probs[i] =
// log p(ids[i + 1] | ids[0..i]), so one fewer than the ids. --adapter applies a PEFT LoRA
// adapter (models/lora.h) to the model first.
#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include <ostream>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "common/data_file_rows.h"
#include "common/device.h"
#include "common/flags.h"
#include "common/output_command.h"
#include "common/status_macros.h"
#include "models/causal_lm.h"
#include "models/cli_model.h"
#include "models/lora.h"
#include "models/token_scores.h"
#include "models/tokenizer.h"

namespace rollout::models {
namespace {

struct ScoreFlags {
  std::string model;
  std::string adapter;
  std::string input;
  std::string output;
  std::string device = "cpu";
  std::string dtype = "float32";
  int64_t batch_size = 8;
};

// The ids of one input row; `where` is "FILE:LINE" or "FILE row N" for errors.
absl::StatusOr<std::vector<int64_t>> RowIds(const nlohmann::json& json, const std::string& where,
                                            const Tokenizer* tokenizer) {
  try {
    if (json.contains("ids")) return json.at("ids").get<std::vector<int64_t>>();
    if (json.contains("text")) {
      if (tokenizer == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat(where, ": a text line needs the model "
                                                       "directory's tokenizer.json"));
      }
      const std::vector<int32_t> ids = tokenizer->Encode(json.at("text").get<std::string>());
      return std::vector<int64_t>(ids.begin(), ids.end());
    }
  } catch (const nlohmann::json::exception& error) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": ", error.what()));
  }
  return absl::InvalidArgumentError(absl::StrCat(where, ": expected {\"ids\": [...]} or {\"text\": ...}"));
}

// Scores a batch of sequences: right-padded, so no mask is needed (causal attention
// never looks at the padding after a sequence's own tokens).
std::vector<std::vector<float>> ScoreBatch(const CausalLM& model,
                                           const std::vector<std::vector<int64_t>>& batch) {
  size_t longest = 0;
  for (const auto& ids : batch) longest = std::max(longest, ids.size());
  at::Tensor ids = at::zeros({static_cast<int64_t>(batch.size()), static_cast<int64_t>(longest)},
                             at::kLong);
  for (size_t i = 0; i < batch.size(); ++i) {
    for (size_t j = 0; j < batch[i].size(); ++j) ids[i][j] = batch[i][j];
  }
  ids = ids.to(model.device());
  c10::NoGradGuard no_grad;
  const int64_t t = longest;
  const at::Tensor positions = at::arange(t, ids.options()).expand({ids.size(0), t});
  const at::Tensor hidden = model.Forward(ids, positions, at::Tensor());
  const at::Tensor log_probs = ScoreTokens(model, hidden.narrow(1, 0, t - 1), ids.narrow(1, 1, t - 1),
                                           kLogProbsOnly)
                                   .log_probs.cpu();
  std::vector<std::vector<float>> out;
  for (size_t i = 0; i < batch.size(); ++i) {
    const float* row = log_probs[i].data_ptr<float>();
    out.emplace_back(row, row + batch[i].size() - 1);
  }
  return out;
}

absl::Status Score(const ScoreFlags& f, std::ostream& out) {
  if (f.model.empty() || f.input.empty()) {
    return absl::InvalidArgumentError("--model and --input are required (see --help)");
  }
  if (f.dtype != "float32" && f.dtype != "bfloat16") {
    return absl::InvalidArgumentError("--dtype must be float32 or bfloat16");
  }
  ASSIGN_OR_RETURN(const std::vector<DataFileRow> rows, ReadDataFileRows(f.input));
  LoadOptions options;
  ASSIGN_OR_RETURN(options.device, OpenDevice(f.device));
  options.dtype = f.dtype == "bfloat16" ? at::kBFloat16 : at::kFloat;
  ASSIGN_OR_RETURN(std::unique_ptr<CausalLM> model, CausalLM::Load(f.model, options));
  if (!f.adapter.empty()) RETURN_IF_ERROR(LoadLoraAdapter(*model, f.adapter).status());
  absl::StatusOr<std::unique_ptr<Tokenizer>> tokenizer = Tokenizer::Load(f.model);
  std::vector<std::vector<int64_t>> batch;
  auto flush = [&]() {
    const std::vector<std::vector<float>> scores = ScoreBatch(*model, batch);
    for (size_t i = 0; i < batch.size(); ++i) {
      out << nlohmann::json{{"ids", batch[i]}, {"log_probs", scores[i]}}.dump() << "\n";
    }
    batch.clear();
  };
  for (const DataFileRow& row : rows) {
    if (!row.object.ok()) return absl::InvalidArgumentError(absl::StrCat(row.where, ": ", row.object.status().message()));
    ASSIGN_OR_RETURN(std::vector<int64_t> ids,
                     RowIds(*row.object, row.where, tokenizer.ok() ? tokenizer->get() : nullptr));
    const int64_t vocab = model->config().vocab_size;
    for (int64_t id : ids) {
      if (id < 0 || id >= vocab) {
        return absl::InvalidArgumentError(absl::StrCat(row.where, ": token id ", id,
                                                       " is outside the vocabulary (", vocab, ")"));
      }
    }
    if (ids.size() < 2) {
      return absl::InvalidArgumentError(absl::StrCat(row.where, ": a sequence needs at least 2 tokens to score"));
    }
    batch.push_back(std::move(ids));
    if (static_cast<int64_t>(batch.size()) == f.batch_size) flush();
  }
  if (!batch.empty()) flush();
  return absl::OkStatus();
}

}  // namespace

int RunScoreCommand(const std::vector<std::string>& args) {
  ScoreFlags f;
  FlagSet flags("rollout score --model DIR --input FILE [flags]",
                "Writes, for each input row's \"ids\" (or \"text\"), the log-probability of\n"
                "every token after the first given the ones before it:\n"
                "  {\"ids\": [...], \"log_probs\": [...]}   (one fewer log-prob than ids)");
  flags.AddString("model", &f.model, "Hugging Face model directory");
  flags.AddString("adapter", &f.adapter,
                  "a PEFT LoRA adapter directory to apply (adapter_config.json, adapter_model.safetensors)");
  flags.AddString("input", &f.input, "JSON lines or Parquet rows with ids or text");
  flags.AddString("output", &f.output, "write here instead of stdout");
  flags.AddString("device", &f.device, "cpu or cuda:N");
  flags.AddString("dtype", &f.dtype, "float32 or bfloat16");
  flags.AddInt("batch_size", &f.batch_size, "sequences per forward");
  return RunOutputCommand("score", flags, args, &f.output,
                          [&](std::ostream& out) { return Score(f, out); });
}

}  // namespace rollout::models
