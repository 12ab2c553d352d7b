// The per-run secret that every controller <-> worker call carries in its metadata,
// so a process that merely reaches a port cannot drive a worker or register as one.
// The controller makes one per run and hands it to workers in the environment
// (ROLLOUT_RUN_TOKEN), never on the command line where `ps` shows it.
#pragma once

#include <string>

#include <grpcpp/client_context.h>
#include <grpcpp/server_context.h>

#include "absl/status/status.h"

namespace rollout {

constexpr char kRunTokenEnv[] = "ROLLOUT_RUN_TOKEN";
constexpr char kRunTokenMetadataKey[] = "x-rollout-token";

// 32 hex characters from the OS random source.
std::string NewRunToken();

void AttachRunToken(const std::string& token, grpc::ClientContext* context);

// PermissionDenied when the call carries no token or a different one.
absl::Status CheckRunToken(const std::string& expected, const grpc::ServerContext& context);

}  // namespace rollout
