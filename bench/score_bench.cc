// The actor's scoring passes on a GRPO batch, with and without shared prompts
// (workers/response_scores.h PromptSharing): the log-prob pass (old_log_prob / ref:
// no autograd, `micro` rows at a time) and the update's forward + backward (`update_micro`
// rows at a time, gradient of the summed log-probs), on a randomly initialised model;
// then the actor's whole update (PolicyActor::Update: losses, metrics, AdamW) with its
// peak GPU memory.
// Prompts of `prompt` random tokens, each with `n` responses of `response` tokens (as
// bench/grpo_step_bench.sh: 128 + 256, EOS ignored). Prints milliseconds per batch and
// the ratio shared / padded; the tokens the model sees either way.
//
// usage: rollout bench score [--preset=qwen2.5-0.5b] [--device=cuda:0] [--prompts=16] [--n=8]
//                    [--prompt=128] [--response=256] [--micro=64] [--update_micro=16]
//                    [--activation_checkpointing]
//                    [--steps=3] [--trace=PREFIX]
// --trace writes Chrome traces of one log-prob pass each way to PREFIX-{padded,shared}.json
// and of one update pass to PREFIX-{padded,shared}-update.json, and of the actor's update
// to PREFIX-actor.json (bench/trace_summary.py sums them).
#include "bench/benchmarks.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include <chrono>
#include <functional>
#include <iostream>

#include "absl/strings/str_format.h"
#include "bench/chrome_trace.h"
#include "common/device.h"
#include "common/flags.h"
#include "models/causal_lm.h"
#include "models/presets.h"
#include "workers/policy_actor.h"
#include "workers/memory_metrics.h"
#include "workers/policy_batch.h"
#include "workers/response_scores.h"

#ifdef ROLLOUT_WITH_CUDA
#include <c10/cuda/CUDAFunctions.h>
#endif

namespace rollout::bench {
namespace {

struct Options {
  std::string preset = "qwen2.5-0.5b", device = "cuda:0";
  int64_t prompts = 16, n = 8, prompt = 128, response = 256, micro = 64, update_micro = 16;
  int64_t steps = 3;
  bool activation_checkpointing = false;
  std::string trace;
};

void Synchronize(const c10::Device& device) {
#ifdef ROLLOUT_WITH_CUDA
  if (device.is_cuda()) c10::cuda::device_synchronize();
#endif
}

// prompts x n rows: each prompt's tokens repeated over its n rows, random responses.
workers::PolicyBatch GrpoBatch(const Options& o, int64_t vocab, c10::Device device) {
  const auto ints = at::TensorOptions().dtype(at::kLong);
  const int64_t rows = o.prompts * o.n, total = o.prompt + o.response;
  workers::PolicyBatch batch;
  const at::Tensor prompts = at::randint(1, vocab, {o.prompts, o.prompt}, ints);
  batch.input_ids = at::cat({prompts.repeat_interleave(o.n, 0),
                             at::randint(1, vocab, {rows, o.response}, ints)},
                            1).to(device);
  batch.attention_mask = at::ones({rows, total}, ints.device(device));
  batch.position_ids = at::arange(total, ints.device(device)).expand({rows, total}).contiguous();
  batch.responses = batch.input_ids.narrow(1, o.prompt, o.response).contiguous();
  batch.response_mask = at::ones({rows, o.response}, ints.device(device));
  return batch;
}

double Seconds(const std::function<void()>& body, const c10::Device& device) {
  Synchronize(device);
  const auto start = std::chrono::steady_clock::now();
  body();
  Synchronize(device);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int RunScoreBench(const std::vector<std::string>& args) {
  Options o;
  FlagSet flags("rollout bench score [flags]", "The actor's scoring passes with and without shared prompts.");
  flags.AddString("preset", &o.preset, "qwen2.5-0.5b, qwen3-0.6b or tiny");
  flags.AddString("device", &o.device, "cpu or cuda:N");
  flags.AddInt("prompts", &o.prompts, "prompts in the batch");
  flags.AddInt("n", &o.n, "responses per prompt");
  flags.AddInt("prompt", &o.prompt, "prompt tokens");
  flags.AddInt("response", &o.response, "response tokens");
  flags.AddInt("micro", &o.micro, "rows per log-prob micro-batch");
  flags.AddInt("update_micro", &o.update_micro, "rows per update micro-batch");
  flags.AddInt("steps", &o.steps, "timed repetitions (after one untimed)");
  flags.AddBool("activation_checkpointing", &o.activation_checkpointing,
                "recompute each decoder layer in the backward pass (actor.model.enable_gradient_checkpointing)");
  flags.AddString("trace", &o.trace, "Chrome trace file prefix");
  if (const std::optional<int> exit_code = flags.ParseFlagsOnly(args, "rollout bench score")) return *exit_code;
  absl::StatusOr<c10::Device> device = OpenDevice(o.device);
  absl::StatusOr<models::TransformerConfig> config = models::PresetConfig(o.preset);
  if (!device.ok() || !config.ok()) {
    std::cerr << "rollout bench score: " << (device.ok() ? config.status() : device.status()).message() << "\n";
    return 2;
  }
  models::LoadOptions load;
  load.device = *device;
  load.dtype = device->is_cuda() ? at::kBFloat16 : at::kFloat;
  const auto model = models::CausalLM::RandomInit(*config, 1, load);
  model->set_activation_checkpointing(o.activation_checkpointing);
  std::vector<at::Tensor*> params;
  for (auto& [name, param] : model->NamedParameters()) params.push_back(param);
  const workers::PolicyBatch batch = GrpoBatch(o, config->vocab_size, *device);
  const int64_t rows = batch.input_ids.size(0);

  auto log_prob_pass = [&](workers::PromptSharing sharing) {
    const auto scores = workers::ScoreResponsesNoGrad(*model, batch, o.micro, models::kLogProbsOnly, 1.0, sharing);
    if (!scores.ok()) std::cerr << "rollout bench score: " << scores.status().message() << "\n";
  };
  auto update_pass = [&](workers::PromptSharing sharing) {
    for (at::Tensor* param : params) param->set_requires_grad(true);
    for (int64_t start = 0; start < rows; start += o.update_micro) {
      const workers::PolicyBatch micro = workers::SliceRows(batch, start, std::min(o.update_micro, rows - start));
      workers::ScoreResponses(*model, micro.input_ids, micro.position_ids, micro.attention_mask,
                              micro.responses, models::kWithEntropy, 1.0, sharing)
          .log_probs.sum()
          .backward();
    }
    for (at::Tensor* param : params) param->mutable_grad() = at::Tensor();
  };
  // The actor's whole update (workers/policy_actor.h) as the GRPO recipe configures it
  // (low_var_kl loss, one mini-batch of every row here), with prompts shared where the
  // flash kernel serves.
  workers::PolicyActorOptions actor_options;
  actor_options.plan.mini_batch_rows = rows;
  actor_options.plan.micro_batch.rows = o.update_micro;
  actor_options.use_kl_loss = true;
  actor_options.kl_loss_coef = 0.001;
  actor_options.adamw.lr = 1e-6;
  auto actor = workers::PolicyActor::Create(model.get(), params, actor_options);
  if (!actor.ok()) {
    std::cerr << "rollout bench score: " << actor.status().message() << "\n";
    return 1;
  }
  workers::PolicyBatch update_batch = batch;
  update_batch.old_log_probs = at::full({rows, o.response}, -2.0f, batch.input_ids.options().dtype(at::kFloat));
  update_batch.ref_log_probs = update_batch.old_log_probs;
  update_batch.advantages = at::randn({rows, o.response}, update_batch.old_log_probs.options());
  auto actor_update = [&] {
    if (auto metrics = (*actor)->Update(update_batch); !metrics.ok()) {
      std::cerr << "rollout bench score: " << metrics.status().message() << "\n";
    }
  };
  std::cout << absl::StrFormat(
      "%s %s: %d prompts x n = %d, %d + %d tokens; log-prob micro-batches of %d rows, update "
      "micro-batches of %d\n",
      o.preset, device->str(), o.prompts, o.n, o.prompt, o.response, o.micro, o.update_micro);
  double padded[2] = {0, 0};
  for (auto sharing : {workers::PromptSharing::kNever, workers::PromptSharing::kAlways}) {
    const bool shared = sharing != workers::PromptSharing::kNever;
    log_prob_pass(sharing);
    update_pass(sharing);
    double log_prob = 0, update = 0;
    for (int64_t i = 0; i < o.steps; ++i) {
      log_prob += Seconds([&] { log_prob_pass(sharing); }, *device) / o.steps;
      update += Seconds([&] { update_pass(sharing); }, *device) / o.steps;
    }
    if (!shared) {
      padded[0] = log_prob;
      padded[1] = update;
    }
    std::cout << absl::StrFormat("  %-8s log-prob pass %8.1f ms (x%.3f)  update forward+backward "
                                 "%8.1f ms (x%.3f)\n",
                                 shared ? "shared" : "padded", log_prob * 1e3, log_prob / padded[0],
                                 update * 1e3, update / padded[1]);
    if (!o.trace.empty()) {
      const std::string path = o.trace + (shared ? "-shared" : "-padded");
      WriteChromeTrace(path + ".json", device->is_cuda(), [&] { log_prob_pass(sharing); });
      WriteChromeTrace(path + "-update.json", device->is_cuda(), [&] { update_pass(sharing); });
      std::cout << "  traces of a log-prob pass and an update pass: " << path << "{,-update}.json\n";
    }
  }
  workers::ResetPeakDeviceMemory(*device);
  actor_update();
  const double update_seconds =
      Seconds([&] { for (int64_t i = 0; i < o.steps; ++i) actor_update(); }, *device) / o.steps;
  std::cout << absl::StrFormat("actor update (PolicyActor::Update, prompts shared where fast) %.1f ms",
                               update_seconds * 1e3);
  if (device->is_cuda()) {
    std::cout << absl::StrFormat("; peak memory %.1f GiB (weights, gradients and AdamW state included)",
                                 workers::PeakDeviceMemory(*device).allocated / double(1 << 30));
  }
  std::cout << "\n";
  if (!o.trace.empty()) {
    WriteChromeTrace(o.trace + "-actor.json", device->is_cuda(), actor_update);
    std::cout << "  trace: " << o.trace << "-actor.json\n";
  }
  const int64_t padded_tokens = rows * (o.prompt + o.response);
  const int64_t shared_tokens = o.prompts * o.prompt + rows * (o.response - 1);
  std::cout << absl::StrFormat("tokens through the model: padded %d, shared %d (x%.3f)\n",
                               padded_tokens, shared_tokens, double(shared_tokens) / padded_tokens);
  return 0;
}

}  // namespace rollout::bench
