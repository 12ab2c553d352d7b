// Training-step benchmark: forward, next-token loss from chunked token scores,
// backward and AdamW on a randomly initialised Qwen2-architecture model. Prints
// tokens/s, MFU (6 * params * tokens / time / peak) and peak device memory.
//
// usage: rollout bench train-step [--preset=qwen2.5-0.5b|tiny] [--batch=16] [--seq=512]
//                         [--steps=10] [--warmup=3] [--device=cuda:0] [--dtype=bfloat16]
//                         [--peak_tflops=989] [--breakdown] [--trace=PATH]
// --trace writes a Chrome trace of one more step (host operators and, on CUDA, kernels)
// to PATH; bench/trace_summary.py sums it by operator.
// Reference on one H200 (issue 3): HF transformers + PyTorch 2.11, same shape, batch
// 16 x 512, bf16, AdamW: about 81k tokens/s (MFU 0.24).
#include "bench/benchmarks.h"

#include <ATen/ATen.h>

#include <chrono>
#include <functional>
#include <iostream>

#include "absl/strings/str_format.h"
#include "bench/chrome_trace.h"
#include "common/flags.h"
#include "models/causal_lm.h"
#include "models/presets.h"
#include "models/token_scores.h"
#include "workers/adamw.h"
#include "workers/memory_metrics.h"
#include "common/device.h"

#ifdef ROLLOUT_WITH_CUDA
#include <c10/cuda/CUDAFunctions.h>
#endif

namespace rollout::bench {
namespace {

void Synchronize(const c10::Device& device) {
#ifdef ROLLOUT_WITH_CUDA
  if (device.is_cuda()) c10::cuda::device_synchronize();
#endif
}

// Wall time of each phase, summed over steps (with --breakdown the device is
// synchronised after each phase, which removes their overlap).
struct PhaseTimes {
  double forward = 0, loss = 0, backward = 0, optimizer = 0;
};

double Since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// One step: next-token loss over every position, backward, AdamW.
void TrainStep(models::CausalLM& model, workers::AdamW& optimizer, const at::Tensor& ids,
               PhaseTimes* times) {
  const int64_t b = ids.size(0);
  const int64_t t = ids.size(1);
  const c10::Device device = ids.device();
  auto phase = [&](double* total, const std::function<void()>& body) {
    const auto start = std::chrono::steady_clock::now();
    body();
    if (times != nullptr) {
      Synchronize(device);
      *total += Since(start);
    }
  };
  at::Tensor hidden, loss;
  phase(times ? &times->forward : nullptr, [&] {
    const at::Tensor positions = at::arange(t, ids.options()).expand({b, t});
    hidden = model.Forward(ids, positions, at::Tensor());
  });
  phase(times ? &times->loss : nullptr, [&] {
    loss = -models::ScoreTokens(model, hidden.narrow(1, 0, t - 1), ids.narrow(1, 1, t - 1),
                                models::kLogProbsOnly)
                .log_probs.mean();
  });
  phase(times ? &times->backward : nullptr, [&] { loss.backward(); });
  phase(times ? &times->optimizer : nullptr, [&] {
    optimizer.Step();
    optimizer.ZeroGrad();
  });
}

}  // namespace

int RunTrainStepBench(const std::vector<std::string>& args) {
  std::string preset = "qwen2.5-0.5b", device_name = "cuda:0", dtype_name = "bfloat16";
  int64_t batch = 16, seq = 512, steps = 10, warmup = 3;
  double peak_tflops = 989;
  bool breakdown = false;
  std::string trace;
  FlagSet flags("rollout bench train-step [flags]", "Tokens/s, MFU and peak memory of a training step.");
  flags.AddString("preset", &preset, "qwen2.5-0.5b, qwen3-0.6b or tiny");
  flags.AddString("device", &device_name, "cpu or cuda:N");
  flags.AddString("dtype", &dtype_name, "bfloat16 or float32");
  flags.AddInt("batch", &batch, "sequences per step");
  flags.AddInt("seq", &seq, "tokens per sequence");
  flags.AddInt("steps", &steps, "timed steps");
  flags.AddInt("warmup", &warmup, "untimed steps first");
  flags.AddDouble("peak_tflops", &peak_tflops, "device peak for MFU (H200 bf16 dense: 989)");
  flags.AddBool("breakdown", &breakdown, "also time each phase (synchronised)");
  flags.AddString("trace", &trace, "write a Chrome trace of one more step to this path");
  if (const std::optional<int> exit_code = flags.ParseFlagsOnly(args, "rollout bench train-step")) return *exit_code;
  absl::StatusOr<c10::Device> device = OpenDevice(device_name);
  if (!device.ok()) {
    std::cerr << "rollout bench train-step: " << device.status().message() << "\n";
    return 1;
  }
  models::LoadOptions load;
  load.device = *device;
  load.dtype = dtype_name == "float32" ? at::kFloat : at::kBFloat16;
  // The preset's own vocabulary; the tokenizer does not matter for speed.
  absl::StatusOr<models::TransformerConfig> preset_config = models::PresetConfig(preset);
  if (!preset_config.ok()) {
    std::cerr << "rollout bench train-step: " << preset_config.status().message() << "\n";
    return 2;
  }
  models::TransformerConfig config = *preset_config;
  config.pad_token_id = 0;
  std::unique_ptr<models::CausalLM> model = models::CausalLM::RandomInit(config, 1, load);
  std::vector<at::Tensor*> params;
  int64_t param_count = 0;
  for (auto& [name, param] : model->NamedParameters()) {
    param->set_requires_grad(true);
    params.push_back(param);
    param_count += param->numel();
  }
  workers::AdamW optimizer(params, workers::AdamWOptions());
  model->set_training(true);
  const at::Tensor ids =
      at::randint(0, config.vocab_size, {batch, seq}, at::TensorOptions().dtype(at::kLong).device(*device));

  for (int64_t i = 0; i < warmup; ++i) TrainStep(*model, optimizer, ids, nullptr);
  Synchronize(*device);
  const auto start = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < steps; ++i) TrainStep(*model, optimizer, ids, nullptr);
  const double enqueued = Since(start) / steps;  // host time to issue the work
  Synchronize(*device);
  const double seconds = Since(start) / steps;
  const double tokens_per_s = batch * seq / seconds;
  const double mfu = 6.0 * param_count * tokens_per_s / (peak_tflops * 1e12);
  std::cout << absl::StrFormat(
      "%s  %s %s  params %.3fB  batch %d x %d\n"
      "step %.1f ms  %.0f tokens/s  MFU %.3f  peak memory %.1f GiB  ratio to HF (81k tok/s) %.2f\n",
      preset, device->str(), dtype_name, param_count / 1e9, batch, seq, seconds * 1e3,
      tokens_per_s, mfu, workers::PeakDeviceMemory(*device).allocated / double(1 << 30), tokens_per_s / 81000.0);
  std::cout << absl::StrFormat("host time to issue a step %.1f ms (%.0f%% of the step)\n",
                               enqueued * 1e3, 100 * enqueued / seconds);
  if (breakdown) {
    PhaseTimes times;
    for (int64_t i = 0; i < steps; ++i) TrainStep(*model, optimizer, ids, &times);
    std::cout << absl::StrFormat(
        "phases (synchronised): forward %.1f ms  loss %.1f ms  backward %.1f ms  "
        "optimizer %.1f ms\n",
        times.forward * 1e3 / steps, times.loss * 1e3 / steps, times.backward * 1e3 / steps,
        times.optimizer * 1e3 / steps);
  }
  if (!trace.empty()) {
    WriteChromeTrace(trace, device->is_cuda(),
                     [&] { TrainStep(*model, optimizer, ids, nullptr); });
    std::cout << "trace of one step: " << trace << "\n";
  }
  return 0;
}

}  // namespace rollout::bench
