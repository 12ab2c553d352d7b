#include "controller/preflight.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include "absl/strings/str_format.h"
#include "algorithms/token_log_probs.h"
#include "common/status_macros.h"

namespace rollout::controller {
namespace {

// Tolerance for a GPU's log-softmax against the CPU one (float32, vocab 64).
constexpr double kTolerance = 1e-4;

absl::Status CheckNumerics(WorkerGroup& group, std::ostream& out) {
  const int64_t rows = 2 * group.world_size() + 1;  // uneven: exercises padding
  at::Generator generator = at::detail::createCPUGenerator(/*seed_in=*/1234);
  Batch input;
  at::Tensor logits = at::randn({rows, 8, 64}, generator) * 4;
  at::Tensor tokens = at::randint(0, 64, {rows, 8}, generator, at::kLong);
  RETURN_IF_ERROR(input.AddTensor("logits", logits));
  RETURN_IF_ERROR(input.AddTensor("tokens", tokens));
  ASSIGN_OR_RETURN(Batch result, group.CallDpSplit("diag.token_log_probs", input));
  ASSIGN_OR_RETURN(at::Tensor got, result.Tensor("log_probs"));
  ASSIGN_OR_RETURN(at::Tensor want, algorithms::TokenLogProbs(logits, tokens));
  const double max_error = (got - want).abs().max().item<double>();
  if (!(max_error <= kTolerance)) {
    return absl::DataLossError(absl::StrFormat(
        "pre-flight: pool %s computed token log-probs that differ from the CPU reference "
        "by %g (tolerance %g); its device stack is broken",
        group.pool(), max_error, kTolerance));
  }
  out << absl::StrFormat("  pool %s: token log-probs on %d worker(s) match the CPU reference "
                         "(max error %.2g)\n",
                         group.pool(), group.world_size(), max_error)
      << std::flush;
  return absl::OkStatus();
}

}  // namespace

absl::Status RunPreflight(ControllerRuntime& runtime, const Placement& placement,
                          std::ostream& out) {
  out << "pre-flight:\n";
  for (const PoolPlan& pool : placement.pools) {
    ASSIGN_OR_RETURN(WorkerGroup * group, runtime.Group(pool.name));
    ASSIGN_OR_RETURN(std::vector<Batch> infos, group->CallAll("diag.info", Batch()));
    for (const Batch& info : infos) {
      out << absl::StrFormat("  worker %s  pid %s  %s on %s  roles %s  torch %s\n",
                             info.Meta("worker_id"), info.Meta("pid"), info.Meta("device"),
                             info.Meta("hostname"), info.Meta("roles"),
                             info.Meta("torch_version"));
    }
    RETURN_IF_ERROR(CheckNumerics(*group, out));
  }
  return absl::OkStatus();
}

}  // namespace rollout::controller
