// A Batch as a stream of BatchChunk messages (proto/tensor.proto), so batches of any
// size cross gRPC without meeting a message-size limit, and are never held twice
// whole in serialised form.
//
// Sender: WriteBatch() calls `sink` with the header chunk, then data chunks of at most
// `chunk_bytes` holding all tensors' bytes back to back in header order.
// Receiver: a BatchAssembler takes the chunks in order and yields the Batch; it
// allocates each tensor once from the header and copies data straight into it.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include <ATen/core/Tensor.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/batch.h"
#include "proto/tensor.pb.h"

namespace rollout {

constexpr int64_t kDefaultChunkBytes = 4 << 20;

// `sink` returns false when the stream is broken (peer gone); WriteBatch then stops
// and returns Unavailable. Tensors on a GPU are copied to host first.
absl::Status WriteBatch(const Batch& batch,
                        const std::function<bool(wire::BatchChunk&&)>& sink,
                        int64_t chunk_bytes = kDefaultChunkBytes);

class BatchAssembler {
 public:
  // The first chunk must carry the header; later chunks only data. DataLoss when the
  // header is malformed or more bytes arrive than it announced.
  absl::Status Add(const wire::BatchChunk& chunk);
  // DataLoss when fewer bytes arrived than announced; FailedPrecondition before any
  // header.
  absl::StatusOr<Batch> Finish();

 private:
  bool has_header_ = false;
  wire::BatchHeader header_;
  std::vector<at::Tensor> tensors_;  // allocated from the header, filled in order
  size_t current_ = 0;               // tensor being filled
  int64_t current_offset_ = 0;       // bytes of tensors_[current_] filled so far
};

}  // namespace rollout
