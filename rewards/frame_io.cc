#include "rewards/frame_io.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace rollout::rewards {
namespace {

absl::Status SendAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t sent = send(fd, data, size, MSG_NOSIGNAL);
    if (sent < 0) {
      if (errno == EINTR) continue;
      return absl::UnavailableError(absl::StrCat("send: ", strerror(errno)));
    }
    data += sent;
    size -= static_cast<size_t>(sent);
  }
  return absl::OkStatus();
}

absl::Status ReceiveAll(int fd, char* data, size_t size) {
  while (size > 0) {
    const ssize_t got = recv(fd, data, size, 0);
    if (got == 0) return absl::UnavailableError("the peer closed the connection");
    if (got < 0) {
      if (errno == EINTR) continue;
      return absl::UnavailableError(absl::StrCat("recv: ", strerror(errno)));
    }
    data += got;
    size -= static_cast<size_t>(got);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status WriteFrame(int socket_fd, const google::protobuf::MessageLite& message) {
  const size_t size = message.ByteSizeLong();
  if (size > kMaxFrameBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("a ", size, "-byte message exceeds the ", kMaxFrameBytes, "-byte frame limit"));
  }
  std::string frame(4 + size, '\0');
  for (int i = 0; i < 4; ++i) frame[i] = static_cast<char>((size >> (8 * i)) & 0xff);
  message.SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(frame.data() + 4));
  return SendAll(socket_fd, frame.data(), frame.size());
}

absl::Status ReadFrame(int socket_fd, google::protobuf::MessageLite* message) {
  unsigned char header[4];
  RETURN_IF_ERROR(ReceiveAll(socket_fd, reinterpret_cast<char*>(header), sizeof(header)));
  const size_t size = size_t{header[0]} | size_t{header[1]} << 8 | size_t{header[2]} << 16 |
                      size_t{header[3]} << 24;
  if (size > kMaxFrameBytes) {
    return absl::DataLossError(absl::StrCat("a frame of ", size, " bytes exceeds the limit"));
  }
  std::string body(size, '\0');
  RETURN_IF_ERROR(ReceiveAll(socket_fd, body.data(), size));
  if (!message->ParseFromString(body)) {
    return absl::DataLossError(absl::StrCat("a ", size, "-byte frame does not parse as ",
                                            message->GetTypeName()));
  }
  return absl::OkStatus();
}

}  // namespace rollout::rewards
