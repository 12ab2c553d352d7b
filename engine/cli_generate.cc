#include "engine/cli_generate.h"

#include <chrono>
#include <cstdio>
#include <ostream>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "common/data_file_rows.h"
#include "common/device.h"
#include "common/flags.h"
#include "common/output_command.h"
#include "common/status_macros.h"
#include "engine/engine.h"
#include "models/json_prompt.h"

namespace rollout::engine {
namespace {

using nlohmann::json;

struct GenerateFlags {
  std::string model, input, output;
  std::string device = "cpu";
  std::string dtype;  // default: bfloat16 on CUDA, float32 on CPU
  int64_t n = 1;
  double temperature = 1.0;
  int64_t top_k = -1;
  double top_p = 1.0;
  double min_p = 0.0;
  int64_t max_tokens = 256;
  bool greedy = false;
  bool ignore_eos = false;
  int64_t seed = 0;
  double gpu_memory_utilization = 0.5;
  double cpu_kv_cache_gib = 1.0;
  int64_t block_size = 16;
  int64_t max_num_seqs = 1024;
  int64_t max_num_batched_tokens = 8192;
  bool enable_prefix_caching = false;
  bool no_group_sharing = false;
  bool enable_thinking = true;
  std::string date_string;
};

FlagSet MakeFlags(GenerateFlags* f) {
  FlagSet flags("rollout generate --model DIR --input prompts.jsonl [flags]",
                "Generates responses with the rollout engine. Input: JSON lines or a Parquet file\n"
                "(verl's datasets) of rows {\"prompt\": text}, {\"messages\": [...]} or\n"
                "{\"prompt\": [...]} (chat messages: the chat template applied) or {\"ids\": [...]},\n"
                "optionally with \"stop\": [strings]. Output: one JSON line per prompt with its n\n"
                "responses (text, ids, log_probs, finish_reason: eos|stop|length).");
  flags.AddString("model", &f->model, "Hugging Face model directory (with its tokenizer)");
  flags.AddString("input", &f->input, "JSON lines or Parquet of prompts");
  flags.AddString("output", &f->output, "write here instead of stdout");
  flags.AddString("device", &f->device, "cpu or cuda:N");
  flags.AddString("dtype", &f->dtype, "float32 or bfloat16 (default: bfloat16 on CUDA)");
  flags.AddInt("n", &f->n, "responses per prompt");
  flags.AddDouble("temperature", &f->temperature, "sampling temperature (0: greedy)");
  flags.AddInt("top_k", &f->top_k, "keep the k most likely tokens (-1: off)");
  flags.AddDouble("top_p", &f->top_p, "nucleus sampling mass (1: off)");
  flags.AddDouble("min_p", &f->min_p, "drop tokens below min_p x the top probability (0: off)");
  flags.AddInt("max_tokens", &f->max_tokens, "new tokens per response");
  flags.AddBool("greedy", &f->greedy, "argmax decoding (same as --temperature 0)");
  flags.AddBool("ignore_eos", &f->ignore_eos, "always generate max_tokens");
  flags.AddInt("seed", &f->seed, "prompt i samples from seed + i");
  flags.AddDouble("gpu_memory_utilization", &f->gpu_memory_utilization,
                  "fraction of free GPU memory for the KV cache");
  flags.AddDouble("cpu_kv_cache_gib", &f->cpu_kv_cache_gib, "KV cache size on CPU");
  flags.AddInt("block_size", &f->block_size, "tokens per KV block");
  flags.AddInt("max_num_seqs", &f->max_num_seqs, "sequences per step at most");
  flags.AddInt("max_num_batched_tokens", &f->max_num_batched_tokens, "tokens per step at most");
  flags.AddBool("enable_prefix_caching", &f->enable_prefix_caching,
                "reuse KV blocks of identical prompt prefixes across prompts");
  flags.AddBool("no_group_sharing", &f->no_group_sharing,
                "prefill each of a prompt's n responses separately (for comparison)");
  flags.AddBool("enable_thinking", &f->enable_thinking,
                "false: Qwen3 chat prompts end in an empty think block (no reasoning)");
  flags.AddString("date_string", &f->date_string,
                  "the date in Llama 3.1+ system headers (default: the template's)");
  return flags;
}

// One input row (a JSON object) as a request; `where` is "FILE:LINE" or "FILE row N".
absl::StatusOr<GenerationRequest> ParseRequest(const nlohmann::ordered_json& value, const std::string& where,
                                               const models::Tokenizer& tokenizer,
                                               int64_t vocab_size, const SamplingParams& params) {
  auto fail = [&](absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": ", what));
  };
  GenerationRequest request;
  request.params = params;
  const bool chat_prompt = value.contains("prompt") && value.at("prompt").is_array();  // verl's rows
  if (value.contains("prompt") && !chat_prompt) {
    if (!value.at("prompt").is_string()) return fail("\"prompt\" must be text or a list of chat messages");
    request.prompt = tokenizer.Encode(value.at("prompt").get<std::string>());
  } else if (chat_prompt || value.contains("messages")) {
    nlohmann::ordered_json chat = value;  // {"messages": ..., "tools": ...}
    if (chat_prompt) chat = {{"messages", value.at("prompt")}, {"tools", value.value("tools", nlohmann::ordered_json())}};
    auto parsed = models::ParseChatPrompt(chat);
    if (!parsed.ok()) return fail(parsed.status().message());
    auto ids = tokenizer.EncodeChat(parsed->messages, /*add_generation_prompt=*/true, parsed->tools);
    if (!ids.ok()) return fail(ids.status().message());
    request.prompt = std::move(*ids);
  } else if (value.contains("ids")) {
    auto ids = models::ParseTokenIds(value);
    if (!ids.ok()) return fail(ids.status().message());
    request.prompt = std::move(*ids);
  } else {
    return fail("expected \"prompt\", \"messages\" or \"ids\"");
  }
  for (int32_t id : request.prompt) {
    if (id >= vocab_size) {
      return fail(absl::StrCat("token id ", id, " is outside the model's vocabulary [0, ",
                               vocab_size, ")"));
    }
  }
  if (value.contains("stop")) {
    const nlohmann::ordered_json& stop = value.at("stop");
    if (!stop.is_array()) return fail("\"stop\" must be a list of strings");
    for (const nlohmann::ordered_json& s : stop) {
      if (!s.is_string()) return fail("\"stop\" must be a list of strings");
      request.params.stop.push_back(s.get<std::string>());
    }
  }
  return request;
}

// "\r[#########-----------] 120/256 responses  3,400 tok/s" at most 10 times a second.
class ProgressBar {
 public:
  void Update(int64_t done, int64_t total, int64_t tokens, bool force) {
    const auto now = std::chrono::steady_clock::now();
    if (!force && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    constexpr int kWidth = 30;
    const int filled = total == 0 ? kWidth : static_cast<int>(kWidth * done / total);
    const double seconds = std::chrono::duration<double>(now - start_).count();
    std::fprintf(stderr, "\r[%s%s] %lld/%lld responses  %.0f tok/s", std::string(filled, '#').c_str(),
                 std::string(kWidth - filled, '-').c_str(), static_cast<long long>(done),
                 static_cast<long long>(total), seconds > 0 ? tokens / seconds : 0.0);
    if (force) std::fprintf(stderr, "\n");
  }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_;
};

absl::Status Generate(const GenerateFlags& f, std::ostream& out) {
  if (f.model.empty() || f.input.empty()) {
    return absl::InvalidArgumentError("--model and --input are required (see --help)");
  }
  models::LoadOptions load;
  ASSIGN_OR_RETURN(load.device, OpenDevice(f.device));
  const std::string dtype = !f.dtype.empty() ? f.dtype : load.device.is_cuda() ? "bfloat16" : "float32";
  if (dtype != "float32" && dtype != "bfloat16") {
    return absl::InvalidArgumentError("--dtype must be float32 or bfloat16");
  }
  load.dtype = dtype == "bfloat16" ? at::kBFloat16 : at::kFloat;
  ASSIGN_OR_RETURN(std::unique_ptr<models::CausalLM> model, models::CausalLM::Load(f.model, load));
  models::TokenizerOptions tokenizer_options;
  tokenizer_options.enable_thinking = f.enable_thinking;
  tokenizer_options.date_string = f.date_string;
  ASSIGN_OR_RETURN(std::unique_ptr<models::Tokenizer> tokenizer,
                   models::Tokenizer::Load(f.model, tokenizer_options));

  SamplingParams params;
  params.n = static_cast<int32_t>(f.n);
  params.temperature = f.greedy ? 0.0 : f.temperature;
  params.top_k = f.top_k;
  params.top_p = f.top_p;
  params.min_p = f.min_p;
  params.max_tokens = f.max_tokens;
  params.ignore_eos = f.ignore_eos;
  ASSIGN_OR_RETURN(const std::vector<DataFileRow> rows, ReadDataFileRows(f.input));
  std::vector<GenerationRequest> requests;
  for (const DataFileRow& row : rows) {
    if (!row.object.ok()) return absl::InvalidArgumentError(absl::StrCat(row.where, ": ", row.object.status().message()));
    params.seed = static_cast<uint64_t>(f.seed + static_cast<int64_t>(requests.size()));
    ASSIGN_OR_RETURN(GenerationRequest request,
                     ParseRequest(*row.object, row.where, *tokenizer, model->config().vocab_size, params));
    requests.push_back(std::move(request));
  }

  EngineOptions options;
  options.gpu_memory_utilization = f.gpu_memory_utilization;
  options.cpu_kv_cache_bytes = static_cast<int64_t>(f.cpu_kv_cache_gib * (int64_t{1} << 30));
  options.block_size = static_cast<int32_t>(f.block_size);
  options.max_num_seqs = static_cast<int32_t>(f.max_num_seqs);
  options.max_num_batched_tokens = f.max_num_batched_tokens;
  options.enable_prefix_caching = f.enable_prefix_caching;
  options.share_group_prefix = !f.no_group_sharing;
  ASSIGN_OR_RETURN(std::unique_ptr<Engine> engine, Engine::Create(*model, tokenizer.get(), options));
  ProgressBar bar;
  const Engine* watched = engine.get();
  ASSIGN_OR_RETURN(std::vector<RequestOutput> outputs,
                   engine->Generate(requests, [&](int64_t done, int64_t total) {
                     bar.Update(done, total, watched->stats().output_tokens, done == total);
                   }));
  for (size_t i = 0; i < outputs.size(); ++i) {
    json responses = json::array();
    for (const Completion& c : outputs[i].samples) {
      responses.push_back({{"text", c.text},
                           {"ids", c.tokens},
                           {"log_probs", c.log_probs},
                           {"finish_reason", FinishReasonName(c.finish_reason)}});
    }
    out << json{{"index", i}, {"prompt_ids", requests[i].prompt}, {"responses", responses}}.dump(
               -1, ' ', false, json::error_handler_t::replace)
        << "\n";
  }
  return absl::OkStatus();
}

}  // namespace

int RunGenerateCommand(const std::vector<std::string>& args) {
  GenerateFlags f;
  const FlagSet flags = MakeFlags(&f);
  return RunOutputCommand("generate", flags, args, &f.output,
                          [&](std::ostream& out) { return Generate(f, out); });
}

}  // namespace rollout::engine
