// Methods every worker answers, whatever its roles. The controller uses them for its
// pre-flight check (`rollout train --dry-run`) and the transport benchmark:
//   diag.info             -> meta: pid, hostname, device, roles, torch version, cuda devices
//   diag.echo             -> the input batch, unchanged (transport round trips)
//   diag.token_log_probs  -> {logits [B,T,V], tokens [B,T] int64} -> log_probs [B,T] float32,
//                            computed on the worker's device; the controller compares the
//                            result with its own CPU result to catch a broken device stack.
//   diag.sleep            -> meta seconds: returns an empty batch after that long (a worker
//                            busy in a long method, for tests of the controller's calls)
// And, once worker.init_roles has created the policy model (role_host.h):
//   diag.policy_parameter_checksums
//                         -> one row per tensor of the policy model, strings
//                            name  (HF name; PEFT name for LoRA tensors),
//                            kind  ("base" | "lora"),
//                            crc32c (8 hex digits over the tensor's bytes, row-major);
//                            base weights are the unmerged ones. Tests compare two calls
//                            to see what training changed (with LoRA: the adapters only)
//                            without moving the weights. Call it between steps: it reads
//                            the weights unsynchronised.
#pragma once

#include <c10/core/Device.h>

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "workers/method_registry.h"

namespace rollout::models {
class CausalLM;
}  // namespace rollout::models

namespace rollout::workers {

struct WorkerIdentity {
  int worker_id = 0;
  std::string pool;
  std::vector<std::string> roles;
  int rank = 0;
  int world = 1;
};

absl::Status RegisterDiagnosticMethods(const WorkerIdentity& identity, c10::Device device,
                                       MethodRegistry* registry);

// `model` must outlive the registry's use.
absl::Status RegisterPolicyParameterChecksums(models::CausalLM* model, MethodRegistry* registry);

}  // namespace rollout::workers
