// absl::Status <-> grpc::Status. The codes have the same numbers and meaning in both;
// the message travels unchanged, so an error raised in a worker reads the same on the
// controller.
#pragma once

#include <grpcpp/support/status.h>

#include "absl/status/status.h"

namespace rollout {

grpc::Status ToGrpcStatus(const absl::Status& status);
absl::Status FromGrpcStatus(const grpc::Status& status);

}  // namespace rollout
