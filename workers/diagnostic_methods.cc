#include "workers/diagnostic_methods.h"

#include <torch/cuda.h>
#include <torch/version.h>
#include <unistd.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "algorithms/token_log_probs.h"
#include "common/crc32c.h"
#include "common/status_macros.h"
#include "models/causal_lm.h"
#include "models/lora.h"

namespace rollout::workers {
namespace {

Batch Info(const WorkerIdentity& identity, c10::Device device) {
  char hostname[256] = {0};
  gethostname(hostname, sizeof(hostname) - 1);
  Batch out;
  out.SetMeta("worker_id", std::to_string(identity.worker_id));
  out.SetMeta("pool", identity.pool);
  out.SetMeta("roles", absl::StrJoin(identity.roles, "+"));
  out.SetMeta("rank", std::to_string(identity.rank));
  out.SetMeta("world", std::to_string(identity.world));
  out.SetMeta("pid", std::to_string(getpid()));
  out.SetMeta("hostname", hostname);
  out.SetMeta("device", device.str());
  out.SetMeta("torch_version", TORCH_VERSION);
  out.SetMeta("cuda_devices", std::to_string(torch::cuda::device_count()));
  return out;
}

absl::StatusOr<Batch> TokenLogProbsOnDevice(const Batch& input, c10::Device device) {
  ASSIGN_OR_RETURN(at::Tensor logits, input.Tensor("logits"));
  ASSIGN_OR_RETURN(at::Tensor tokens, input.Tensor("tokens"));
  ASSIGN_OR_RETURN(at::Tensor log_probs,
                   algorithms::TokenLogProbs(logits.to(device), tokens.to(device)));
  Batch out;
  RETURN_IF_ERROR(out.AddTensor("log_probs", log_probs.to(at::kCPU)));
  return out;
}

absl::StatusOr<Batch> Sleep(const Batch& input) {
  const std::string text = input.Meta("seconds");
  double seconds = 0;
  if (!absl::SimpleAtod(text, &seconds) || !(seconds >= 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("meta 'seconds' is '", text, "'; expected a number of seconds >= 0"));
  }
  absl::SleepFor(absl::Seconds(seconds));
  return Batch();
}

// CRC32C of the tensor's elements in row-major order, as they lie in memory on the CPU.
std::string TensorChecksum(const at::Tensor& tensor) {
  const at::Tensor host = tensor.detach().to(at::kCPU).contiguous();
  return crc32c::ToHex(
      crc32c::Value(absl::string_view(static_cast<const char*>(host.data_ptr()), host.nbytes())));
}

absl::StatusOr<Batch> PolicyParameterChecksums(models::CausalLM& model) {
  std::vector<std::string> names;
  std::vector<std::string> kinds;
  std::vector<std::string> checksums;
  const auto add = [&](const std::string& name, const char* kind, const at::Tensor& tensor) {
    names.push_back(name);
    kinds.push_back(kind);
    checksums.push_back(TensorChecksum(tensor));
  };
  for (const auto& [name, tensor] : model.BaseTensors()) add(name, "base", tensor);
  for (const auto& [name, tensor] : models::NamedLoraParameters(model)) add(name, "lora", *tensor);
  Batch out;
  RETURN_IF_ERROR(out.AddStrings("name", std::move(names)));
  RETURN_IF_ERROR(out.AddStrings("kind", std::move(kinds)));
  RETURN_IF_ERROR(out.AddStrings("crc32c", std::move(checksums)));
  return out;
}

}  // namespace

absl::Status RegisterDiagnosticMethods(const WorkerIdentity& identity, c10::Device device,
                                       MethodRegistry* registry) {
  RETURN_IF_ERROR(registry->Register(
      "diag.info", [identity, device](const Batch&) -> absl::StatusOr<Batch> {
        return Info(identity, device);
      }));
  RETURN_IF_ERROR(registry->Register(
      "diag.echo", [](const Batch& input) -> absl::StatusOr<Batch> { return input; }));
  RETURN_IF_ERROR(registry->Register(
      "diag.token_log_probs",
      [device](const Batch& input) { return TokenLogProbsOnDevice(input, device); }));
  RETURN_IF_ERROR(registry->Register("diag.sleep", Sleep));
  return absl::OkStatus();
}

absl::Status RegisterPolicyParameterChecksums(models::CausalLM* model, MethodRegistry* registry) {
  return registry->Register("diag.policy_parameter_checksums",
                            [model](const Batch&) { return PolicyParameterChecksums(*model); });
}

}  // namespace rollout::workers
