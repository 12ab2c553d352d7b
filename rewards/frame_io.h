// Length-prefixed protobuf messages over a stream socket: a 4-byte little-endian size,
// then the serialized message. The process-isolated reward runner and its helper
// processes talk this way over a socketpair. Sends never raise SIGPIPE (a peer that
// died is an error status, not a dead sender).
#pragma once

#include <google/protobuf/message_lite.h>

#include "absl/status/status.h"

namespace rollout::rewards {

// Frames larger than this are refused both ways (a corrupt size, not a real sample).
inline constexpr size_t kMaxFrameBytes = size_t{256} << 20;

// Blocks until the whole frame is sent. Unavailable when the peer is gone.
absl::Status WriteFrame(int socket_fd, const google::protobuf::MessageLite& message);

// Blocks until a whole frame arrives. Unavailable on end of stream (the peer closed or
// died), DataLoss for an oversized frame or one that does not parse.
absl::Status ReadFrame(int socket_fd, google::protobuf::MessageLite* message);

}  // namespace rollout::rewards
