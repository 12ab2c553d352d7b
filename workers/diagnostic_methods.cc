#include "workers/diagnostic_methods.h"

#include <torch/cuda.h>
#include <torch/version.h>
#include <unistd.h>

#include "absl/strings/str_join.h"
#include "algorithms/token_log_probs.h"
#include "common/status_macros.h"

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
  return absl::OkStatus();
}

}  // namespace rollout::workers
