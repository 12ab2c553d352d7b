#include "common/run_token.h"

#include <random>

#include "absl/strings/str_format.h"

namespace rollout {

std::string NewRunToken() {
  std::random_device source;  // /dev/urandom on Linux
  std::string token;
  for (int i = 0; i < 4; ++i) token += absl::StrFormat("%08x", source());
  return token;
}

void AttachRunToken(const std::string& token, grpc::ClientContext* context) {
  context->AddMetadata(kRunTokenMetadataKey, token);
}

absl::Status CheckRunToken(const std::string& expected, const grpc::ServerContext& context) {
  const auto& metadata = context.client_metadata();
  auto it = metadata.find(kRunTokenMetadataKey);
  if (it == metadata.end() ||
      std::string(it->second.data(), it->second.size()) != expected) {
    return absl::PermissionDeniedError("call without this run's token refused");
  }
  return absl::OkStatus();
}

}  // namespace rollout
