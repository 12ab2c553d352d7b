#include <iostream>

#include "absl/strings/str_cat.h"
#include "common/flags.h"
#include "common/status_macros.h"
#include "models/causal_lm.h"
#include "models/cli_model.h"
#include "models/presets.h"
#include "models/tokenizer.h"
#include "models/tokenizer_files.h"

namespace rollout::models {
namespace {

struct InitFlags {
  std::string out;
  std::string tokenizer;
  std::string preset = "tiny";
  std::string dtype = "float32";
  int64_t seed = 1;
};

absl::Status InitModel(const InitFlags& f) {
  if (f.out.empty() || f.tokenizer.empty()) {
    return absl::InvalidArgumentError("--out and --tokenizer are required (see --help)");
  }
  ASSIGN_OR_RETURN(std::unique_ptr<Tokenizer> tokenizer, Tokenizer::Load(f.tokenizer));
  ASSIGN_OR_RETURN(TransformerConfig config, PresetConfig(f.preset, tokenizer->vocab_size()));
  for (int32_t id : tokenizer->eos_token_ids()) config.eos_token_ids.push_back(id);
  if (tokenizer->pad_token_id().has_value()) config.pad_token_id = *tokenizer->pad_token_id();
  if (tokenizer->bos_token_id().has_value()) config.bos_token_id = *tokenizer->bos_token_id();
  if (f.dtype != "float32" && f.dtype != "bfloat16") {
    return absl::InvalidArgumentError("--dtype must be float32 or bfloat16");
  }
  config.torch_dtype = f.dtype;
  LoadOptions options;
  options.dtype = f.dtype == "bfloat16" ? at::kBFloat16 : at::kFloat;
  std::unique_ptr<CausalLM> model = CausalLM::RandomInit(config, f.seed, options);
  RETURN_IF_ERROR(model->Save(f.out));
  return CopyTokenizerFiles(f.tokenizer, f.out);
}

}  // namespace

int RunInitModelCommand(const std::vector<std::string>& args) {
  InitFlags f;
  FlagSet flags("rollout init-model --out DIR --tokenizer DIR [flags]",
                "Writes a randomly initialised Hugging Face model directory (config.json,\n"
                "generation_config.json, model.safetensors, tokenizer files) of a preset shape\n"
                "for the given tokenizer. Deterministic for a seed.");
  flags.AddString("out", &f.out, "directory to write");
  flags.AddString("tokenizer", &f.tokenizer, "directory with tokenizer.json (and config files)");
  flags.AddString("preset", &f.preset, "tiny, qwen2.5-0.5b or qwen3-0.6b");
  flags.AddString("dtype", &f.dtype, "float32 or bfloat16");
  flags.AddInt("seed", &f.seed, "random seed");
  absl::StatusOr<FlagSet::Parsed> parsed = flags.Parse(args);
  if (!parsed.ok()) {
    std::cerr << "rollout init-model: " << parsed.status().message() << "\n";
    return 2;
  }
  if (parsed->help) {
    std::cout << flags.Usage();
    return 0;
  }
  if (absl::Status s = InitModel(f); !s.ok()) {
    std::cerr << "rollout init-model: " << s.message() << "\n";
    return s.code() == absl::StatusCode::kInvalidArgument ? 2 : 1;
  }
  std::cout << "wrote " << f.preset << " model to " << f.out << "\n";
  return 0;
}

}  // namespace rollout::models
