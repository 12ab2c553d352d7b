// Methods every worker answers, whatever its roles. The controller uses them for its
// pre-flight check (`rollout train --dry-run`) and the transport benchmark:
//   diag.info             -> meta: pid, hostname, device, roles, torch version, cuda devices
//   diag.echo             -> the input batch, unchanged (transport round trips)
//   diag.token_log_probs  -> {logits [B,T,V], tokens [B,T] int64} -> log_probs [B,T] float32,
//                            computed on the worker's device; the controller compares the
//                            result with its own CPU result to catch a broken device stack.
#pragma once

#include <c10/core/Device.h>

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "workers/method_registry.h"

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

}  // namespace rollout::workers
